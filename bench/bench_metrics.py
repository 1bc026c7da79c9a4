"""Benchmark: disagreement metrics at 3,000 / 100,000 / 1,000,000 ratings on PostgreSQL.

    .venv/bin/python bench/bench_metrics.py [--sizes 3000,100000,1000000] [--page-runs 9]

Uses its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/pluralist_bench_metrics), created and migrated here. For each
size it loads synthetic ratings in bulk (COPY) over 10,000 ideas and 200 reviewers with the PBIG
rubric, gates included, then prints:
  - selector: rating_frame() alone;
  - recompute: the full metrics_recompute service (selector + compute_metrics + store), i.e. what
    the worker does, run in this process on one core (BLAS threads pinned to 1);
  - pages: median of warm GETs through Django's test Client as a manager.
Targets: full recompute at 1M under 10 s; warm overview page under 150 ms.
"""

from __future__ import annotations

import argparse
import io
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
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/pluralist_bench_metrics"
)
os.environ["DATABASE_URL"] = BENCH_URL
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/6")

import numpy as np  # noqa: E402
import psycopg  # noqa: E402

N_IDEAS = 10_000
N_REVIEWERS = 200
DOMAINS = [("nlp", "NLP"), ("cs", "Computer Science"), ("chem", "Materials Chemistry")]


def ensure_database() -> None:
    from urllib.parse import urlparse

    url = urlparse(BENCH_URL)
    name = url.path.lstrip("/")
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


def ensure_catalog():
    """200 reviewers (alternating technical/business, one domain each), 10,000 ideas, a manager."""
    from apps.accounts.models import ReviewerProfile, User
    from apps.catalog.models import Domain, Idea, Patent

    if (
        Idea.objects.count() == N_IDEAS
        and User.objects.filter(role="reviewer").count() == N_REVIEWERS
    ):
        return
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE screening_rating, screening_ratinghistory, screening_assignment, "
            "catalog_idea, catalog_patent, accounts_reviewerprofile_domains, "
            "accounts_reviewerprofile, disagreement_metricslice, disagreement_metricsnapshot "
            "CASCADE"
        )
    User.objects.filter(role__in=["reviewer", "manager"]).delete()
    domains = [Domain.objects.get_or_create(key=k, defaults={"name": n})[0] for k, n in DOMAINS]
    patents = Patent.objects.bulk_create(
        [
            Patent(external_id=f"BENCH-P{i:05d}", domain=domains[i % 3], title=f"Patent {i}")
            for i in range(2_000)
        ],
        batch_size=2000,
    )
    Idea.objects.bulk_create(
        [
            Idea(external_id=f"BENCH-I{i:05d}", patent=patents[i % 2000], title=f"Idea {i}")
            for i in range(N_IDEAS)
        ],
        batch_size=5000,
    )
    users = User.objects.bulk_create(
        [User(username=f"rev{i:03d}", role="reviewer", password="!") for i in range(N_REVIEWERS)]
    )
    profiles = ReviewerProfile.objects.bulk_create(
        [
            ReviewerProfile(user=u, background="technical" if i % 2 == 0 else "business")
            for i, u in enumerate(users)
        ]
    )
    Through = ReviewerProfile.domains.through
    Through.objects.bulk_create(
        [
            Through(reviewerprofile_id=p.id, domain_id=domains[i % 3].id)
            for i, p in enumerate(profiles)
        ]
    )
    manager = User(username="bench-manager", role="manager")
    manager.set_password("bench-password")
    manager.save()


def load_ratings(n_ratings: int, seed: int = 0) -> int:
    """COPY n_ratings synthetic ratings: shared idea quality, per-reviewer offset and stretch."""
    from django.db import connection

    from apps.accounts.models import User
    from apps.catalog.models import Idea
    from apps.screening.selectors import rubric_default

    rng = np.random.default_rng(seed)
    dims = list(rubric_default().dimensions.order_by("position"))
    n_dims = len(dims)
    ideas = np.array(Idea.objects.order_by("id").values_list("id", flat=True))
    idea_domain = np.array(Idea.objects.order_by("id").values_list("patent__domain_id", flat=True))
    reviewers = np.array(
        User.objects.filter(role="reviewer").order_by("id").values_list("id", flat=True)
    )
    rev_domain = np.array(
        User.objects.filter(role="reviewer")
        .order_by("id")
        .values_list("reviewer_profile__domains__id", flat=True)
    )
    pairs = n_ratings // n_dims
    per_idea = max(3, round(pairs / N_IDEAS))
    n_rated = min(N_IDEAS, pairs // per_idea)
    rated = rng.choice(len(ideas), size=n_rated, replace=False)
    idea_rows, rev_rows = [], []
    for dom in np.unique(idea_domain):
        in_dom = rated[idea_domain[rated] == dom]
        pool = np.flatnonzero(rev_domain == dom)
        take = min(per_idea, len(pool))
        picks = np.argsort(rng.random((len(in_dom), len(pool))), axis=1)[:, :take]
        idea_rows.append(np.repeat(in_dom, take))
        rev_rows.append(pool[picks].ravel())
    idea_ix = np.concatenate(idea_rows)[:pairs]
    rev_ix = np.concatenate(rev_rows)[:pairs]
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
    # Gates: specificity <= 2 closes everything downstream; technical validity <= 1 closes
    # innovativeness and competitive advantage (PBIG order: spec, tech, innov, comp, need, market).
    spec_fail = scores[:, 0] <= 2
    tech_fail = scores[:, 1] <= 1
    gated = np.zeros_like(scores, dtype=bool)
    gated[:, 1:] |= spec_fail[:, None]
    gated[:, 2:4] |= tech_fail[:, None]
    # One (idea, reviewer) in 50 is declined entirely.
    declined = rng.random(len(idea_ix)) < 0.02

    n = len(idea_ix) * n_dims
    status = np.where(gated, "gated", "scored").astype(object)
    status[declined] = "declined"
    score_txt = scores.astype(str).astype(object)
    score_txt[status != "scored"] = r"\N"
    stamp = "2025-06-01 12:00:00+00"
    buf = io.StringIO()
    dim_ids = np.array([d.id for d in dims])
    cols = [
        np.repeat(reviewers[rev_ix], n_dims).astype(str),
        np.repeat(ideas[idea_ix], n_dims).astype(str),
        np.tile(dim_ids, len(idea_ix)).astype(str),
        status.ravel(),
        score_txt.ravel(),
    ]
    lines = ["\t".join(row) for row in zip(*cols, strict=True)]
    buf.write("\n".join(f"{line}\t\t{'import'}\t{stamp}\t{stamp}" for line in lines))
    buf.write("\n")
    with connection.cursor() as cur:
        cur.execute(
            "TRUNCATE screening_rating, screening_ratinghistory, disagreement_metricslice, "
            "disagreement_metricsnapshot CASCADE"
        )
        raw = cur.cursor if hasattr(cur, "cursor") else cur
        with raw.copy(
            "COPY screening_rating (reviewer_id, idea_id, dimension_id, status, score, "
            "rationale, source, created_at, updated_at) FROM STDIN"
        ) as copy:
            copy.write(buf.getvalue())
        cur.execute("ANALYZE screening_rating")
    return n


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bench_size(n_ratings: int, page_runs: int) -> dict:
    from django.test import Client

    from apps.accounts.models import User
    from apps.disagreement.models import MetricSnapshot
    from apps.disagreement.services import AUTO_SCOPE, metrics_recompute
    from apps.screening.selectors.frame import rating_frame

    loaded, t_load = timed(lambda: load_ratings(n_ratings))
    frame, t_sel = timed(lambda: rating_frame())
    del frame
    snapshot = MetricSnapshot.objects.create(scope=AUTO_SCOPE)
    snapshot, t_full = timed(lambda: metrics_recompute(snapshot_id=snapshot.id))
    assert snapshot.status == "done", snapshot.error

    client = Client()
    client.force_login(User.objects.get(username="bench-manager"))
    pages = {}
    for name, url in [
        ("overview", "/disagreement/"),
        (
            "overview ?domain=nlp&background=business",
            "/disagreement/?domain=nlp&background=business",
        ),
        ("strictness", "/disagreement/strictness/"),
        ("agreement (heatmap)", "/disagreement/agreement/?domain=nlp"),
        ("contested", "/disagreement/contested/"),
        (
            "api /api/metrics/?domain=nlp&dimension=innovativeness",
            "/api/metrics/?domain=nlp&dimension=innovativeness",
        ),
    ]:
        assert client.get(url).status_code == 200, url  # warm-up
        runs = []
        for _ in range(page_runs):
            t0 = time.perf_counter()
            response = client.get(url)
            runs.append(time.perf_counter() - t0)
            assert response.status_code == 200
        pages[name] = statistics.median(runs)
    return {
        "n": loaded,
        "load": t_load,
        "selector": t_sel,
        "full": t_full,
        "stored_ms": snapshot.duration_ms,
        "pages": pages,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="3000,100000,1000000")
    parser.add_argument("--page-runs", type=int, default=9)
    args = parser.parse_args()
    ensure_database()
    setup_django()
    ensure_catalog()
    print(
        f"database {BENCH_URL}; {N_IDEAS:,} ideas, {N_REVIEWERS} reviewers, PBIG rubric; "
        f"python {sys.version.split()[0]}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        r = bench_size(size, args.page_runs)
        print(f"\n== {r['n']:,} ratings (loaded by COPY in {r['load']:.1f} s)")
        print(f"  selector rating_frame()            {r['selector']:8.2f} s")
        print(f"  full recompute (select+compute+store){r['full']:7.2f} s   target < 10 s at 1M")
        for name, sec in r["pages"].items():
            print(f"  warm page {name:<42} {sec * 1000:7.1f} ms (median of {args.page_runs})")


if __name__ == "__main__":
    main()
