"""Benchmark: judge pages on stored alignment snapshots, at demo size and 1,000,000 predictions.

    .venv/bin/python bench/bench_judges_pages.py [--sizes demo,1m] [--page-runs 9]

Uses its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/pluralist_bench_judges), created and migrated here. For each
size it builds, with COPY, three domains of reviewers who each rated ideas of their domain on the
six PBIG dimensions, one finished leave-one-out evaluation run per reviewer with the automatic
sweep (zero-shot k=0, aggregate and personalized k in {2, 9}, 3 seeds: 15 seed predictions per
rating, as the demo's automatic runs make), their finals, and then prints:
  - reference: the alignment computed the old way, in the request (selectors.alignment_report
    over the same runs, what every GET of /judges/ used to do);
  - snapshot: alignment_snapshot_compute for the "auto" scope (what the worker does once per
    burst of finished runs), on one core;
  - pages: the median of warm GETs through Django's test Client (manager; "My judge" as a
    reviewer), which read only the stored snapshot.
Sizes: demo = 25 reviewers x 20 ideas (3,000 ratings, 45,000 predictions, the demo's scale);
1m = 200 reviewers x 56 ideas (67,200 ratings, 1,008,000 predictions).
Targets: warm /judges/ under 300 ms at demo size and under 500 ms at 1m.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")  # "one core": no hidden BLAS parallelism

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH_URL = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/pluralist_bench_judges"
)
os.environ["DATABASE_URL"] = BENCH_URL
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/6")

import numpy as np  # noqa: E402
import psycopg  # noqa: E402

SIZES = {"demo": (25, 20), "1m": (200, 56)}  # reviewers, ideas rated per reviewer
DOMAINS = [("nlp", "NLP"), ("cs", "Computer Science"), ("chem", "Materials Chemistry")]
SWEEP = [("zero_shot", 0), ("aggregate", 2), ("aggregate", 9), ("personalized", 2),
         ("personalized", 9)]  # fmt: skip
SEEDS = 3
THRESHOLD = 80
REASONS = [
    f"Close to the examples about {topic}; the reviewer scores such ideas {level}."
    for topic in ("sensors", "batteries", "contracts", "speech", "imaging", "logistics")
    for level in ("low", "in the middle", "high", "cautiously", "generously")
]
STAMP = "2025-06-01 12:00:00+00"


def ensure_database() -> None:
    from urllib.parse import urlparse

    name = urlparse(BENCH_URL).path.lstrip("/")
    admin_url = BENCH_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}")


def setup_django() -> None:
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _copy(table: str, columns: list[str], rows: list[str]) -> None:
    from django.db import connection

    with connection.cursor() as cur:
        raw = cur.cursor if hasattr(cur, "cursor") else cur
        with raw.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            copy.write("\n".join(rows) + "\n")
        cur.execute(f"ANALYZE {table}")


def build(n_reviewers: int, per_reviewer: int, seed: int = 0) -> dict[str, int]:
    """A fresh data set: catalog, ratings, configurations, finished runs, predictions, finals."""
    from django.db import connection
    from django.utils import timezone

    from apps.accounts.models import ReviewerProfile, User
    from apps.catalog.models import Domain, Idea, Patent
    from apps.judges.models import JudgeConfig, JudgeRun
    from apps.screening.selectors import rubric_default

    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE judges_alignmentsnapshot, judges_judgeprediction, judges_judgefinal, "
            "judges_judgehistory, judges_judgerun_configs, judges_judgerun, judges_judgeconfig, "
            "screening_rating, screening_ratinghistory, screening_assignment, catalog_idea, "
            "catalog_patent, accounts_reviewerprofile_domains, accounts_reviewerprofile CASCADE"
        )
    User.objects.filter(role__in=["reviewer", "manager"]).delete()
    rng = np.random.default_rng(seed)
    dims = list(rubric_default().dimensions.order_by("position"))
    domains = [Domain.objects.get_or_create(key=k, defaults={"name": n})[0] for k, n in DOMAINS]
    pool = per_reviewer * 2  # ideas per domain: reviewers of a domain share many items
    ideas_by_domain: dict[int, list[int]] = {}
    for d_ix, domain in enumerate(domains):
        patents = Patent.objects.bulk_create(
            [
                Patent(external_id=f"B-P{d_ix}-{i}", domain=domain, title=f"Patent {i}")
                for i in range(pool)
            ]
        )
        ideas = Idea.objects.bulk_create(
            [
                Idea(external_id=f"B-I{d_ix}-{i}", patent=p, title=f"Idea {d_ix}-{i}")
                for i, p in enumerate(patents)
            ]
        )
        ideas_by_domain[d_ix] = [i.id for i in ideas]
    users = User.objects.bulk_create(
        [User(username=f"rev{i:03d}", role="reviewer", password="!") for i in range(n_reviewers)]
    )
    profiles = ReviewerProfile.objects.bulk_create([ReviewerProfile(user=u) for u in users])
    through = ReviewerProfile.domains.through
    through.objects.bulk_create(
        [
            through(reviewerprofile_id=p.id, domain_id=domains[i % 3].id)
            for i, p in enumerate(profiles)
        ]
    )
    manager = User(username="bench-manager", role="manager")
    manager.save()
    configs = {
        "zero_shot": JudgeConfig.objects.create(
            name="Zero", kind="zero_shot", backend="local", shots=[0], seeds=SEEDS
        ),
        "aggregate": JudgeConfig.objects.create(
            name="Agg", kind="aggregate", backend="local", shots=[2, 9], seeds=SEEDS
        ),
        "personalized": JudgeConfig.objects.create(
            name="Pers", kind="personalized", backend="local", shots=[2, 9], seeds=SEEDS
        ),
    }
    now = timezone.now()
    runs = JudgeRun.objects.bulk_create(
        [
            JudgeRun(
                purpose="loo_evaluation",
                status="done",
                reviewer=u,
                domain=domains[i % 3],
                dimensions=[d.key for d in dims],
                scope_key=f"bench-{u.id}",
                total=per_reviewer * len(dims) * len(SWEEP) * SEEDS,
                done=per_reviewer * len(dims) * len(SWEEP) * SEEDS,
                started_at=now,
                finished_at=now,
            )
            for i, u in enumerate(users)
        ]
    )
    JudgeRun.configs.through.objects.bulk_create(
        [
            JudgeRun.configs.through(judgerun_id=r.id, judgeconfig_id=c.id)
            for r in runs
            for c in configs.values()
        ]
    )
    quality = {i: rng.normal(size=len(dims)) for ids in ideas_by_domain.values() for i in ids}
    ratings, preds, finals = [], [], []
    for u_ix, (user, run) in enumerate(zip(users, runs, strict=True)):
        offset = rng.normal(scale=0.6, size=len(dims))
        chosen = rng.choice(ideas_by_domain[u_ix % 3], size=per_reviewer, replace=False)
        for idea_id in chosen:
            for d_ix, dim in enumerate(dims):
                lo, hi = dim.scale_min, dim.scale_max
                truth = int(np.clip(round((lo + hi) / 2 + quality[idea_id][d_ix] + offset[d_ix]),
                                    lo, hi))  # fmt: skip
                ratings.append(f"{STAMP}\t{STAMP}\tscored\t{truth}\t\timport\t{dim.id}\t"
                               f"{idea_id}\t{user.id}")  # fmt: skip
                for kind, k in SWEEP:
                    noise = {"zero_shot": 1.5, "aggregate": 1.0, "personalized": 0.6}[kind]
                    scores = np.clip(np.round(truth + rng.normal(scale=noise, size=SEEDS)), lo, hi)
                    confs = rng.integers(30, 100, size=SEEDS)
                    reason = REASONS[int(rng.integers(len(REASONS)))]
                    for s in range(SEEDS):
                        preds.append(
                            f"{run.id}\t{configs[kind].id}\t{kind}\t{k}\t{s}\t{user.id}\t"
                            f"{idea_id}\t{dim.id}\t{int(scores[s])}\t{reason}\t{int(confs[s])}"
                            f"\t\tlocal\t\t\t[]\t\t0\t0\t0\t0\t1\t\t{STAMP}"
                        )
                    kept = confs >= THRESHOLD
                    final = int(np.round(scores[kept].mean())) if kept.any() else None
                    conf = int(confs[kept].mean()) if kept.any() else None
                    finals.append(
                        _final_row(run.id, kind, k, user.id, idea_id, dim.id, final, conf,
                                   reason if kept.any() else "", int(kept.sum()),
                                   int((~kept).sum()), 0, STAMP)
                    )  # fmt: skip
    _copy("screening_rating", ["created_at", "updated_at", "status", "score", "rationale",
          "source", "dimension_id", "idea_id", "reviewer_id"], ratings)  # fmt: skip
    _copy(
        "judges_judgeprediction",
        ["run_id", "config_id", "kind", "k", "seed", "reviewer_id", "idea_id", "dimension_id",
         "score", "reason", "confidence", "model", "backend", "response_mode",
         "prompt_fingerprint", "example_rating_ids", "raw_reply", "prompt_tokens",
         "completion_tokens", "cached_tokens", "latency_ms", "attempts", "error", "created_at"],
        preds,
    )  # fmt: skip
    _copy(
        "judges_judgefinal",
        ["run_id", "kind", "k", "reviewer_id", "idea_id", "dimension_id", "score", "confidence",
         "reason", "kept", "discarded", "failed", "created_at"],
        finals,
    )  # fmt: skip
    return {"ratings": len(ratings), "predictions": len(preds), "finals": len(finals),
            "runs": len(runs)}  # fmt: skip


def _final_row(*parts: object) -> str:
    return "\t".join("\\N" if p is None else str(p) for p in parts)


def timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def median_get(client, url: str, runs: int) -> float:  # type: ignore[no-untyped-def]
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    if getattr(response, "streaming", False):
        b"".join(response.streaming_content)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        response = client.get(url)
        if getattr(response, "streaming", False):
            b"".join(response.streaming_content)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_size(name: str, page_runs: int, *, reuse: bool, reference: bool) -> None:
    from django.test import Client

    from apps.accounts.models import User
    from apps.judges import selectors
    from apps.judges.models import AlignmentSnapshot, JudgePrediction, JudgeRun
    from apps.judges.services.alignment import alignment_snapshot_compute

    n_reviewers, per_reviewer = SIZES[name]
    expected = n_reviewers * per_reviewer * 6 * len(SWEEP) * SEEDS
    reused = reuse and JudgePrediction.objects.count() == expected
    if reused:
        print(f"\n== {name}: reusing the {expected:,} stored predictions")
    else:
        counts, t_build = timed(lambda: build(n_reviewers, per_reviewer))
        print(f"\n== {name}: {counts} (built in {t_build:.1f} s)")
    run_ids = selectors.report_run_ids(source="auto")
    if reference:
        _, t_ref = timed(lambda: selectors.alignment_report(run_ids=run_ids))
        print(f"reference, alignment computed in the request (old GET /judges/): {t_ref:9.1f} s")
    if reused and AlignmentSnapshot.objects.filter(scope="auto", status="done").exists():
        print("snapshot: reusing the stored one (drop --reuse to time its computation)")
    else:
        AlignmentSnapshot.objects.all().delete()
        snapshot = AlignmentSnapshot.objects.create(scope="auto")
        snapshot, t_snap = timed(lambda: alignment_snapshot_compute(snapshot_id=snapshot.id))
        assert snapshot.status == "done", snapshot.error
        print(f"snapshot computed by the task (once per burst of runs):        {t_snap:9.1f} s")
    manager = Client()
    manager.force_login(User.objects.get(username="bench-manager"))
    reviewer = Client()
    reviewer.force_login(User.objects.filter(role="reviewer").order_by("id").first())
    run_id = JudgeRun.objects.order_by("id").values_list("id", flat=True).first()
    for label, client, url in [
        ("/healthz (reference: no judge work)", manager, "/healthz"),
        ("/judges/", manager, "/judges/"),
        ("/judges/export/curve.csv", manager, "/judges/export/curve.csv"),
        ("/judges/export/verdicts.csv", manager, "/judges/export/verdicts.csv"),
        ("/api/judges/alignment/", manager, "/api/judges/alignment/"),
        (f"/judges/runs/{run_id}/", manager, f"/judges/runs/{run_id}/"),
        ("/judges/me/ (reviewer)", reviewer, "/judges/me/"),
    ]:
        t = median_get(client, url, page_runs)
        print(f"warm GET {label:<34} median of {page_runs}: {t * 1000:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="demo,1m")
    parser.add_argument("--page-runs", type=int, default=9)
    parser.add_argument("--reuse", action="store_true", help="keep a data set of the same size")
    parser.add_argument(
        "--no-reference", action="store_true", help="skip the in-request computation (slow at 1m)"
    )
    args = parser.parse_args()
    ensure_database()
    setup_django()
    print(f"database {BENCH_URL}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for name in args.sizes.split(","):
        bench_size(name.strip(), args.page_runs, reuse=args.reuse, reference=not args.no_reference)


if __name__ == "__main__":
    main()
