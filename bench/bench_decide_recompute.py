"""Benchmark: the decision recompute (read, board, routing, store) beside the metrics recompute,
on PostgreSQL, in one run.

    .venv/bin/python bench/bench_decide_recompute.py [--ratings 1000000] [--ideas 55000]
        [--domains 10] [--reviewers 200] [--predictions 50000] [--page-runs 5] [--reuse]

Uses its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/pluralist_bench_decide), created and migrated here. It loads
(COPY) a catalogue of ``--ideas`` ideas over ``--domains`` domains, ``--reviewers`` reviewers
(one domain each), about ``--ratings`` ratings on the PBIG rubric (six dimensions, gates and
declines included) and ``--predictions`` judge predictions (one done prediction run, panel and
text signals); ``--reuse`` keeps what an earlier run loaded when the counts match. Then, in this
process on one core (BLAS threads pinned to 1), the two services a worker runs:

  - metrics recompute: ``metrics_recompute`` (rating frame, compute_metrics, store): the
    reference, measured in the same run;
  - decision recompute: ``decisions_recompute`` (decision inputs, build_boards, routing, store),
    with its steps timed inside the same call: first in full (the earlier decision snapshots
    deleted, so no domain's board can be kept), then after one rating of one domain changed
    (that domain is fitted again, the others keep the full run's rows);

each as wall seconds and CPU seconds of this process (PostgreSQL's own CPU is not counted:
it is another process; the wall time includes it). Then the median of warm GETs of the Decide
page, the ranking API and an idea's page (its standing on the board) as a manager. The load
average is printed before and after.
Issue 25's target: the decision recompute at 1M ratings within 5 s of CPU.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")  # "one core": no hidden BLAS parallelism

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/pluralist_bench_decide"
)
os.environ["DATABASE_URL"] = BENCH_URL
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/6")

import numpy as np  # noqa: E402
import psycopg  # noqa: E402

STAMP = "2025-06-01 12:00:00+00"


def ensure_database() -> None:
    admin_url = BENCH_URL.rsplit("/", 1)[0] + "/postgres"
    name = BENCH_URL.rsplit("/", 1)[1].split("?")[0]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}")


def setup_django() -> None:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    # The pages are timed in this process: loaded as the web's are (config/wsgi.py).
    from apps.core.gc_freeze import freeze_startup_objects

    freeze_startup_objects()


def _copy(table: str, columns: str, lines: list[str]) -> None:
    from django.db import connection

    with connection.cursor() as cur:
        raw = cur.cursor if hasattr(cur, "cursor") else cur
        with raw.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for start in range(0, len(lines), 50_000):
                copy.write("\n".join(lines[start : start + 50_000]) + "\n")


def load(args: argparse.Namespace) -> None:
    """The catalogue, the reviewers, the ratings and the predictions (everything replaced)."""
    from django.db import connection

    from apps.accounts.models import ReviewerProfile, User
    from apps.catalog.models import Domain, Idea, Patent
    from apps.judges.models import JudgeRun
    from apps.screening.selectors import rubric_default

    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE screening_rating, screening_ratinghistory, screening_assignment, "
            "catalog_idea, catalog_patent, accounts_reviewerprofile_domains, "
            "accounts_reviewerprofile, disagreement_metricslice, disagreement_metricsnapshot, "
            "decisions_decisionsnapshot, decisions_decisionslice, decisions_routingsuggestion, "
            "judges_judgerun CASCADE"
        )
    User.objects.filter(role__in=["reviewer", "manager"]).delete()
    rng = np.random.default_rng(0)
    domains = [
        Domain.objects.get_or_create(key=f"bench{k}", defaults={"name": f"Bench domain {k}"})[0]
        for k in range(args.domains)
    ]
    n_patents = max(1, args.ideas // 5)
    patents = Patent.objects.bulk_create(
        [
            Patent(external_id=f"BENCH-P{i:06d}", domain=domains[i % args.domains], title=f"P {i}")
            for i in range(n_patents)
        ],
        batch_size=5000,
    )
    Idea.objects.bulk_create(
        [
            Idea(external_id=f"BENCH-I{i:06d}", patent=patents[i % n_patents], title=f"Idea {i}")
            for i in range(args.ideas)
        ],
        batch_size=5000,
    )
    users = User.objects.bulk_create(
        [User(username=f"rev{i:04d}", role="reviewer", password="!") for i in range(args.reviewers)]
    )
    profiles = ReviewerProfile.objects.bulk_create(
        [
            ReviewerProfile(user=u, background="technical" if i % 2 == 0 else "business")
            for i, u in enumerate(users)
        ]
    )
    through = ReviewerProfile.domains.through
    through.objects.bulk_create(
        [
            through(reviewerprofile_id=p.id, domain_id=domains[i % args.domains].id)
            for i, p in enumerate(profiles)
        ]
    )
    manager = User(username="bench-manager", role="manager")
    manager.set_password("bench-password")
    manager.save()

    # Ratings: every idea read by about ratings / (6 x ideas) reviewers of its domain.
    dims = list(rubric_default().dimensions.order_by("position"))
    n_dims = len(dims)
    ideas = np.array(Idea.objects.order_by("id").values_list("id", flat=True))
    idea_domain = np.array(Idea.objects.order_by("id").values_list("patent__domain_id", flat=True))
    reviewers = np.array([u.id for u in users])
    rev_domain = np.array([domains[i % args.domains].id for i in range(args.reviewers)])
    pairs = args.ratings // n_dims
    idea_rows, rev_rows = [], []
    for dom in np.unique(idea_domain):
        in_dom = np.flatnonzero(idea_domain == dom)
        pool = np.flatnonzero(rev_domain == dom)
        want = round(pairs * len(in_dom) / len(ideas))
        # Reads per idea vary (0 to 2x the mean): some ideas are unread, as in real use.
        reads = np.minimum(rng.poisson(want / len(in_dom), len(in_dom)), len(pool))
        picks = np.argsort(rng.random((len(in_dom), len(pool))), axis=1)
        keep = np.arange(len(pool))[None, :] < reads[:, None]
        idea_rows.append(np.broadcast_to(in_dom[:, None], picks.shape)[keep])
        rev_rows.append(pool[picks][keep])
    idea_ix = np.concatenate(idea_rows)
    rev_ix = np.concatenate(rev_rows)
    quality = rng.normal(size=(len(ideas), n_dims))
    offset = rng.normal(scale=0.8, size=(len(reviewers), n_dims))
    stretch = rng.uniform(0.5, 1.5, size=(len(reviewers), n_dims))
    lo = np.array([d.scale_min for d in dims])
    hi = np.array([d.scale_max for d in dims])
    latent = (
        quality[idea_ix] * stretch[rev_ix]
        + offset[rev_ix]
        + rng.normal(scale=0.7, size=(len(idea_ix), n_dims))
    )
    scores = np.clip(np.round((lo + hi) / 2 + latent * (hi - lo) / 4), lo, hi).astype(int)
    # Gates as PBIG's: specificity <= 2 closes what follows; technical validity <= 1 closes
    # innovativeness and competitive advantage. One read in 50 is declined.
    gated = np.zeros_like(scores, dtype=bool)
    gated[:, 1:] |= (scores[:, 0] <= 2)[:, None]
    gated[:, 2:4] |= (scores[:, 1] <= 1)[:, None]
    status = np.where(gated, "gated", "scored").astype(object)
    status[rng.random(len(idea_ix)) < 0.02] = "declined"
    score_txt = scores.astype(str).astype(object)
    score_txt[status != "scored"] = r"\N"
    dim_ids = np.array([d.id for d in dims])
    cols = [
        np.repeat(reviewers[rev_ix], n_dims).astype(str),
        np.repeat(ideas[idea_ix], n_dims).astype(str),
        np.tile(dim_ids, len(idea_ix)).astype(str),
        status.ravel(),
        score_txt.ravel(),
    ]
    lines = [
        f"{r}\t{i}\t{d}\t{s}\t{sc}\t\timport\t{STAMP}\t{STAMP}"
        for r, i, d, s, sc in zip(*cols, strict=True)
    ]
    _copy(
        "screening_rating",
        "reviewer_id, idea_id, dimension_id, status, score, rationale, source, created_at, "
        "updated_at",
        lines,
    )

    # Predictions: one done prediction run; unread pairs of a reviewer's domain.
    if args.predictions:
        run = JudgeRun.objects.create(
            purpose=JudgeRun.Purpose.PREDICTION,
            status=JudgeRun.Status.DONE,
            domain=domains[0],
            scope_key="bench",
        )
        read = set(zip(rev_ix.tolist(), idea_ix.tolist(), strict=True))
        n_pairs = max(1, args.predictions // n_dims)
        r = rng.integers(0, len(reviewers), 3 * n_pairs)
        choice = np.zeros(len(r), dtype=np.int64)
        for d in np.unique(rev_domain):
            mine = rev_domain[r] == d
            choice[mine] = rng.choice(np.flatnonzero(idea_domain == d), int(mine.sum()))
        seen: set[tuple[int, int]] = set()
        out = []
        for rr, ii in zip(r.tolist(), choice.tolist(), strict=True):
            if (rr, ii) in read or (rr, ii) in seen:
                continue
            seen.add((rr, ii))
            out.append((rr, ii))
            if len(out) == n_pairs:
                break
        signal = np.where(rng.random(len(out)) < 0.7, "panel", "text")
        pred_lines = []
        for (rr, ii), sig in zip(out, signal.tolist(), strict=True):
            panel = 3 if sig == "panel" else 0
            for j, d in enumerate(dims):
                s = int(np.clip(round((lo[j] + hi[j]) / 2 + quality[ii, j]), lo[j], hi[j]))
                pred_lines.append(
                    f"{run.id}\tpersonalized\t8\t{reviewers[rr]}\t{ideas[ii]}\t{d.id}\t{s}\t70\t"
                    f"\t3\t0\t0\t{sig}\t{panel}\t\\N\t{STAMP}"
                )
        _copy(
            "judges_judgefinal",
            "run_id, kind, k, reviewer_id, idea_id, dimension_id, score, confidence, reason, "
            "kept, discarded, failed, signal, panel_size, level_score, created_at",
            pred_lines,
        )
    with connection.cursor() as cur:
        cur.execute("ANALYZE")


def loaded(args: argparse.Namespace) -> bool:
    from apps.accounts.models import User
    from apps.catalog.models import Idea
    from apps.judges.models import JudgeFinal
    from apps.screening.models import Rating

    n = Rating.objects.count()
    return (
        Idea.objects.count() == args.ideas
        and User.objects.filter(role="reviewer").count() == args.reviewers
        and abs(n - args.ratings) < 0.05 * args.ratings
        and abs(JudgeFinal.objects.count() - args.predictions) < 0.05 * max(args.predictions, 1)
    )


class Clock:
    """Wall and CPU seconds of named steps (a step's time includes the steps inside it)."""

    def __init__(self) -> None:
        self.steps: dict[str, list[float]] = {}

    def wrap(self, owner: Any, name: str, label: str) -> None:
        fn = getattr(owner, name)

        def timed(*a: Any, **kw: Any) -> Any:
            t, c = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **kw)
            finally:
                step = self.steps.setdefault(label, [0.0, 0.0])
                step[0] += time.perf_counter() - t
                step[1] += time.process_time() - c

        setattr(owner, name, timed)


def measure(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def pages(runs: int) -> dict[str, float]:
    from django.test import Client

    from apps.accounts.models import User
    from apps.catalog.models import Idea

    client = Client()
    client.force_login(User.objects.get(username="bench-manager"))
    idea = Idea.objects.filter(patent__domain__key="bench1").order_by("id").first()
    assert idea is not None, "the bench's first domain has ideas"
    out = {}
    for name, url in [
        ("Decide page", "/decisions/decide/?domain=bench1"),
        ("Decide page, people only", "/decisions/decide/?domain=bench1&evidence=people"),
        ("ranking API", "/api/decisions/ranking/?domain=bench1"),
        ("idea page (its standing)", f"/disagreement/ideas/{idea.id}/"),
    ]:
        assert client.get(url).status_code == 200, url  # warm-up
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - t0)
            assert response.status_code == 200, url
        out[name] = statistics.median(times)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ratings", type=int, default=1_000_000)
    parser.add_argument("--ideas", type=int, default=55_000)
    parser.add_argument("--domains", type=int, default=10)
    parser.add_argument("--reviewers", type=int, default=200)
    parser.add_argument("--predictions", type=int, default=50_000)
    parser.add_argument("--page-runs", type=int, default=5)
    parser.add_argument("--reuse", action="store_true")
    args = parser.parse_args()
    ensure_database()
    setup_django()
    if not (args.reuse and loaded(args)):
        _, t_load, _ = measure(lambda: load(args))
        print(f"loaded in {t_load:.0f} s")

    from apps.decisions import selectors as decision_selectors
    from apps.decisions import services as decisions
    from apps.decisions.models import DecisionSnapshot
    from apps.disagreement.models import MetricSnapshot
    from apps.disagreement.services import AUTO_SCOPE, metrics_recompute
    from apps.judges.models import JudgeFinal
    from apps.screening.models import Rating

    load_start = os.getloadavg()
    print(
        f"database {BENCH_URL}: {Rating.objects.count():,} ratings, {args.ideas:,} ideas, "
        f"{args.domains} domains, {args.reviewers} reviewers, "
        f"{JudgeFinal.objects.count():,} predictions; python {sys.version.split()[0]}"
    )
    print(
        f"load average at start: {load_start[0]:.1f} (1 min), {load_start[1]:.1f} (5 min) on "
        f"{os.cpu_count()} CPUs"
    )

    clock = Clock()
    clock.wrap(decisions.selectors, "decision_inputs", "read the inputs (frame, predictions)")
    clock.wrap(decisions, "build_boards", "build_boards (fit, P(top), rows)")
    clock.wrap(decisions, "_suggest", "routing (candidates, values, picks)")
    clock.wrap(decision_selectors, "routing_candidates", "  of which routing_candidates")
    clock.wrap(decisions, "_store_suggestions", "store the suggestions")
    clock.wrap(decisions, "_store_slices", "store the board's slices")

    metric = MetricSnapshot.objects.create(scope=AUTO_SCOPE)
    snap, m_wall, m_cpu = measure(lambda: metrics_recompute(snapshot_id=metric.id))
    assert snap.status == "done", snap.error
    # The full recompute: no earlier board to keep a domain's rows from.
    DecisionSnapshot.objects.all().delete()
    decision = DecisionSnapshot.objects.create(scope="all")
    snap, d_wall, d_cpu = measure(lambda: decisions.decisions_recompute(snapshot_id=decision.id))
    assert snap.status == "done", snap.error
    full_steps, clock.steps = clock.steps, {}
    # A reviewer changes one score in one domain: that domain is fitted again, the others
    # keep the last board's rows.
    changed = one_rating_changed()
    decision = DecisionSnapshot.objects.create(scope="all")
    again, i_wall, i_cpu = measure(lambda: decisions.decisions_recompute(snapshot_id=decision.id))
    assert again.status == "done", again.error
    kept = again.result["kept"]
    load_end = os.getloadavg()
    print(f"metrics recompute (reference)   {m_wall:6.2f} s wall  {m_cpu:6.2f} s CPU")
    print(f"decision recompute, full        {d_wall:6.2f} s wall  {d_cpu:6.2f} s CPU")
    for label, (wall, cpu) in full_steps.items():
        print(f"  {label:<40} {wall:6.2f} s wall  {cpu:6.2f} s CPU")
    n_suggested = snap.result["routing"]["suggested"]
    print(
        f"  ({snap.n_ratings:,} ratings, {snap.n_predictions:,} predictions, "
        f"{n_suggested} reads suggested)"
    )
    print(
        f"decision recompute, one rating    {i_wall:6.2f} s wall  {i_cpu:6.2f} s CPU "
        f"(changed in {changed}; {len(kept)} of {len(again.result['domains'])} domains kept)"
    )
    for label, (wall, cpu) in clock.steps.items():
        print(f"  {label:<40} {wall:6.2f} s wall  {cpu:6.2f} s CPU")
    for name, sec in pages(args.page_runs).items():
        print(f"warm {name:<30} {sec * 1000:7.1f} ms (median of {args.page_runs})")
    print(f"load average at end: {load_end[0]:.1f} (1 min) {load_end[1]:.1f} (5 min)")
    print(
        f"decision recompute at {snap.n_ratings:,} ratings: {d_cpu:.2f} s CPU "
        f"({d_wall:.2f} s wall), after one rating change {i_cpu:.2f} s CPU ({i_wall:.2f} s wall), "
        f"beside metrics recompute {m_cpu:.2f} s CPU ({m_wall:.2f} s wall); target <= 5 s CPU"
    )


def one_rating_changed() -> str:
    """One scored rating of the first domain gets another grade (as a reviewer's edit would:
    its score and its time); returns the domain."""
    from django.utils import timezone

    from apps.screening.models import Rating

    rating = (
        Rating.objects.filter(status="scored", idea__patent__domain__key="bench1")
        .select_related("dimension", "idea__patent__domain")
        .order_by("id")
        .first()
    )
    assert rating is not None and rating.score is not None
    dim = rating.dimension
    grades = [g for g in range(dim.scale_min, dim.scale_max + 1) if g not in dim.categories]
    rating.score = grades[(grades.index(rating.score) + 1) % len(grades)]
    rating.updated_at = timezone.now()
    rating.save(update_fields=["score", "updated_at"])
    return rating.idea.patent.domain.key


if __name__ == "__main__":
    main()
