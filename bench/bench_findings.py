"""Benchmark: findings for a whole demo domain on one core, and the findings pages warm.

    .venv/bin/python bench/bench_findings.py [--seed 0] [--page-runs 9]

Uses its own database (BENCH_DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/pluralist_bench_findings), created and migrated here, loads
the demo (seed 0 unless told) and pins itself to one core. It prints, per demo domain, the
in-process computation `manage.py findings` runs (read the rationales, split them into units,
embed, de-duplicate, estimate every scope) beside issue 19's target (10 s on one core) and,
measured in the same run as the reference, the disagreement metrics' recompute of the same
ratings (the other dashboards' snapshot); then the stored snapshot (what the Celery task does,
both sources, every domain) and the median of warm GETs, as a manager, of `/findings/` and of
an idea page that shows the idea's findings, beside the target of 300 ms.
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
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/pluralist_bench_findings"
)
os.environ["DATABASE_URL"] = BENCH_URL
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
os.environ.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/6")

import psycopg  # noqa: E402

DOMAIN_TARGET_S = 10.0
PAGE_TARGET_MS = 300.0


def ensure_database() -> None:
    from urllib.parse import urlparse

    name = urlparse(BENCH_URL).path.lstrip("/")
    admin_url = BENCH_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
            print(f"created database {name}")


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    return time.perf_counter() - started, value


def warm_ms(client, url: str, runs: int) -> float:
    client.get(url)  # the first GET fills Django's and PostgreSQL's caches
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"GET {url} answered {response.status_code}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--page-runs", type=int, default=9)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    ensure_database()
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from apps.accounts.models import User
    from apps.catalog.models import Domain, Idea
    from apps.demo.services import demo_load
    from apps.disagreement.analysis import compute_metrics
    from apps.findings.models import FindingSnapshot
    from apps.findings.selectors import default_threshold
    from apps.findings.services import findings_compute, findings_recompute
    from apps.screening.selectors.frame import rating_frame

    call_command("migrate", verbosity=0)
    with connection.cursor() as cur:
        cur.execute("TRUNCATE findings_findingsnapshot CASCADE")
    demo_load(seed=args.seed)
    threshold = default_threshold()
    findings_compute(threshold=threshold, domain=None)  # loads the embedding model once

    print(f"findings for one demo domain, one core (seed {args.seed}, threshold {threshold:g})")
    print(f"{'domain':<10} {'rationales':>10} {'findings':>9} {'findings s':>11} "
          f"{'target s':>9} {'metrics s':>10}")  # fmt: skip
    for domain in Domain.objects.order_by("key"):
        seconds, result = timed(findings_compute, threshold=threshold, domain=domain.key)
        section = result["domains"].get(domain.key, {})  # type: ignore[attr-defined]
        scope = section.get("scope", {})
        metrics_s, _ = timed(lambda d=domain.key: compute_metrics(rating_frame(domain=d)))
        print(
            f"{domain.key:<10} {scope.get('n_rationales', 0):>10} {scope.get('n_findings', 0):>9} "
            f"{seconds:>11.2f} {DOMAIN_TARGET_S:>9.1f} {metrics_s:>10.2f}"
        )

    # Loading the demo queued one (ratings changed); the worker is not running here.
    snapshot, _ = FindingSnapshot.objects.get_or_create(
        scope=f"t={threshold:g}", status=FindingSnapshot.Status.QUEUED,
        defaults={"threshold": threshold},
    )  # fmt: skip
    seconds, snapshot = timed(findings_recompute, snapshot_id=snapshot.id)
    print(f"\nstored snapshot, both sources, every domain: {seconds:.2f} s ({snapshot.status})")

    manager = User.objects.filter(role="manager").order_by("id").first()
    client = Client()
    client.force_login(manager)
    domain = Domain.objects.order_by("key").first()
    idea = Idea.objects.filter(patent__domain=domain).order_by("id").first()
    print(f"\nwarm pages as a manager, median of {args.page_runs} GETs")
    for url in (f"/findings/?domain={domain.key}", f"/disagreement/ideas/{idea.id}/"):
        print(f"  {url:<40} {warm_ms(client, url, args.page_runs):>7.1f} ms "
              f"(target {PAGE_TARGET_MS:.0f} ms)")  # fmt: skip


if __name__ == "__main__":
    main()
