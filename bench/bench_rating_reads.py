"""Benchmark: the two ways the analytics read the rating columns, on the same ratings.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/pluralist_bench \\
        .venv/bin/python bench/bench_rating_reads.py [--repeat 3]

Run bench/bench_import.py first (it leaves its ratings in the database). Times
`apps.screening.selectors.frame._rating_columns` (PostgreSQL: one string_agg of each
rating's fields in binary form, read by numpy) against `_rating_columns_portable` (plain
tuples, the path every other database uses), best
of --repeat runs each, and prints the ratio: the PostgreSQL path stays only while it is >= 2x.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/pluralist_bench"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from apps.screening.selectors.frame import (
        _rating_columns,
        _rating_columns_portable,
        ratings_queryset,
    )

    n = ratings_queryset().count()
    print(f"ratings: {n:,}")
    best = {}
    for name, read in (
        ("postgres packed", _rating_columns),
        ("portable", _rating_columns_portable),
    ):
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            cols = read(ratings_queryset())
            times.append(time.perf_counter() - start)
            assert len(cols["idea_id"]) == n
        best[name] = min(times)
        print(f"{name:<22}{best[name]:>8.2f} s (best of {args.repeat})")
    print(f"portable / postgres = {best['portable'] / best['postgres packed']:.2f}x (keep >= 2x)")


if __name__ == "__main__":
    main()
