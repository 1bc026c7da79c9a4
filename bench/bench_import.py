"""Benchmark: import 100,000 ideas and 1,000,000 PBIG ratings on PostgreSQL.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/pluralist_bench \
        .venv/bin/python bench/bench_import.py [--ideas 100000] [--ratings 1000000] [--repeat 1]

Creates (if needed) and migrates the database, empties the tables the imports write, generates CSV
files in a temporary directory, then times `import_file` for each kind (and a second, idempotent
import of the ratings). Prints seconds (validation, writes and commit), rows per second, the time
other apps' after-commit reactions to changed ratings took ("hooks", not part of the import) and
the process's peak memory.

Before the product's ratings import it measures the FLOOR on the same file, in the same run: COPY
the file into a temporary staging table, then one INSERT ... SELECT ... JOIN ... ON CONFLICT DO
UPDATE into the ratings table plus one history row per rating, in one committed transaction (so it
pays the deferred foreign-key checks at commit like the product does), then truncated away so the
product import starts from the same empty tables. No validation, no gates, no
not-rated-by-design rows: the least any import of this file must cost. The product's import is
reported as a multiple of it, for comparison with earlier runs.

After the re-import it also times the same floor on what the product stored
(exported from the ratings table: the not-rated-by-design rows the gates add, with their status)
plus one completed assignment per screening: the least it costs to write the rows the
specification requires, so the difference from the product is the product's own overhead
(validation, staging, separate statements). Issue 21 restated the target on this floor: the
product's import at most 1.2x of it.

This machine's speed drifts between runs, the floor's by up to a quarter, so `--repeat N` times N
rounds (the ratings tables emptied before each) and prints every ratio and their median.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/pluralist_bench"


def setup_django(url: str) -> None:
    import psycopg

    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    name = url.rsplit("/", 1)[1].split("?")[0]
    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def truncate(*models) -> None:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("TRUNCATE " + ", ".join(m._meta.db_table for m in models) + " CASCADE")


def empty_tables() -> None:
    from apps.accounts.models import ReviewerProfile, User
    from apps.catalog.models import Domain, Idea, Patent
    from apps.screening.models import Assignment, Rating, RatingHistory

    through = ReviewerProfile.domains.through
    truncate(RatingHistory, Rating, Assignment, Idea, Patent, ReviewerProfile, through)
    User.objects.filter(role=User.Role.REVIEWER).delete()
    Domain.objects.filter(key__startswith="bench-").delete()


def generate(tmp: Path, n_ideas: int, n_ratings: int, n_reviewers: int) -> dict[str, Path]:
    rng = np.random.default_rng(7)
    n_patents = max(1, n_ideas // 10)
    domains = ["bench-nlp", "bench-cs", "bench-materials"]
    patents = pd.DataFrame(
        {
            "external_id": [f"BP{i:07d}" for i in range(n_patents)],
            "domain": [domains[i % 3] for i in range(n_patents)],
            "title": [
                f"Adaptive method number {i} for processing signals" for i in range(n_patents)
            ],
            "abstract": (
                "A method that adapts a filter to the signal it receives, reducing noise in "
                "real time."
            ),
            "claims": "1. A method comprising receiving a signal and adapting a filter to it.",
        }
    )
    ideas = pd.DataFrame(
        {
            "external_id": [f"BI{i:07d}" for i in range(n_ideas)],
            "patent": [f"BP{i % n_patents:07d}" for i in range(n_ideas)],
            "title": [f"Product idea {i} built on an adaptive filter" for i in range(n_ideas)],
            "description": (
                "A handheld kit that lets inspectors hear faults in machinery through the noise."
            ),
            "implementation": "An adaptive filter runs on a small board clipped to the machine.",
            "differentiation": "Works in loud halls where current kits fail.",
            "source": "bench",
        }
    )
    reviewers = pd.DataFrame(
        {
            "username": [f"bench{i:04d}" for i in range(n_reviewers)],
            "email": [f"bench{i:04d}@example.org" for i in range(n_reviewers)],
            "name": [f"Bench Reviewer{i}" for i in range(n_reviewers)],
            "background": ["technical" if i % 2 else "business" for i in range(n_reviewers)],
            "domains": ";".join(domains),
        }
    )

    # Screenings that follow the PBIG gates: ~85% pass both gates (6 rows), the rest stop early.
    n_groups = int(n_ratings / 5.3) + 1000
    spec = rng.choice([1, 2, 3, 4], size=n_groups, p=[0.05, 0.05, 0.45, 0.45])
    tech = rng.choice([1, 2, 3, 4], size=n_groups, p=[0.05, 0.25, 0.4, 0.3])
    p = np.arange(n_groups)
    idea_ix = p % n_ideas
    block = p // n_ideas
    reviewer_ix = (block * 100 + p % 100) % n_reviewers
    dims = [
        "specificity",
        "technical_validity",
        "innovativeness",
        "competitive_advantage",
        "need_validity",
        "market_size",
    ]
    scores = {
        "specificity": spec,
        "technical_validity": tech,
        "innovativeness": rng.integers(1, 6, n_groups),
        "competitive_advantage": rng.integers(1, 5, n_groups),
        "need_validity": rng.integers(0, 4, n_groups),
        "market_size": rng.integers(0, 4, n_groups),
    }
    spec_pass = spec > 2
    both_pass = spec_pass & (tech > 1)
    opened = {
        "specificity": np.ones(n_groups, bool),
        "technical_validity": spec_pass,
        "innovativeness": both_pass,
        "competitive_advantage": both_pass,
        "need_validity": spec_pass,
        "market_size": spec_pass,
    }
    parts = []
    for j, d in enumerate(dims):
        m = opened[d]
        parts.append(pd.DataFrame({"g": p[m], "j": j, "score": scores[d][m]}))
    long = pd.concat(parts).sort_values(["g", "j"], kind="stable")
    # Cut at a screening boundary so every screening in the file is complete.
    last_group = long["g"].iloc[min(n_ratings, len(long)) - 1]
    long = long[long["g"] < last_group]
    ratings = pd.DataFrame(
        {
            "idea": [f"BI{i:07d}" for i in idea_ix[long["g"].to_numpy()]],
            "reviewer": [f"bench{i:04d}" for i in reviewer_ix[long["g"].to_numpy()]],
            "dimension": np.array(dims)[long["j"].to_numpy()],
            "score": long["score"].to_numpy(),
        }
    )
    paths = {}
    for name, frame in (
        ("patents", patents),
        ("ideas", ideas),
        ("reviewers", reviewers),
        ("ratings", ratings),
    ):
        paths[name] = tmp / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    return paths


def copy_floor(path: Path, *, stored_rows: bool = False) -> tuple[int, float]:
    """The floor for importing `path`, timed, committed, then truncated away.

    `stored_rows`: `path` holds what the product stored (export_stored_rows), with a status per
    row, and the floor also writes one completed assignment per screening, as an import does.
    """
    from django.db import connection, transaction

    from apps.accounts.models import User
    from apps.catalog.models import Idea
    from apps.screening.models import Assignment, Dimension, Rating, RatingHistory, Rubric

    r, h = Rating._meta.db_table, RatingHistory._meta.db_table
    i, u, d = Idea._meta.db_table, User._meta.db_table, Dimension._meta.db_table
    rubric_id = Rubric.objects.get(is_default=True).pk
    status = "s.status" if stored_rows else "'scored'"
    # What is written from the inserted ratings (`ins`): their history rows and, for the stored
    # rows, one assignment per screening.
    writes = f"""
        INSERT INTO {h} (rating_id, changed_by_id, changed_at, source, old_status, old_score,
                         old_answers, old_rationale, new_status, new_score, new_answers,
                         new_rationale)
        SELECT id, NULL, now(), 'import', '', NULL, NULL, '', status, score, NULL, ''
        FROM ins"""
    if stored_rows:
        writes = f"""
            , history AS ({writes})
            INSERT INTO {Assignment._meta.db_table} (reviewer_id, idea_id, status,
                assigned_by_id, decline_reason, created_at, updated_at)
            SELECT DISTINCT reviewer_id, idea_id, 'completed', NULL::bigint, '', now(), now()
            FROM ins"""
    start = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute(
            "CREATE TEMP TABLE floor_stage (idea text, reviewer text, dimension text, "
            f"score smallint{', status text' if stored_rows else ''}) ON COMMIT DROP"
        )
        with cur.cursor.copy("COPY floor_stage FROM STDIN (FORMAT csv, HEADER true)") as copy:
            with path.open("rb") as f:
                while chunk := f.read(8 << 20):
                    copy.write(chunk)
        cur.execute(
            f"""
            WITH ins AS (
                INSERT INTO {r} (reviewer_id, idea_id, dimension_id, status, score, answers,
                                 rationale, source, created_at, updated_at)
                SELECT u.id, i.id, d.id, {status}, s.score, NULL, '', 'import', now(), now()
                FROM floor_stage s
                JOIN {i} i ON i.external_id = s.idea
                JOIN {u} u ON u.username = s.reviewer
                JOIN {d} d ON d.rubric_id = %s AND d.key = s.dimension
                ON CONFLICT (reviewer_id, idea_id, dimension_id) DO UPDATE
                    SET status = EXCLUDED.status, score = EXCLUDED.score, updated_at = now()
                RETURNING id, reviewer_id, idea_id, status, score
            )
            {writes}
            """,
            [rubric_id],
        )
    took = time.perf_counter() - start
    rows = Rating.objects.count()
    truncate(RatingHistory, Rating, Assignment)
    return rows, took


def export_stored_rows(path: Path) -> None:
    """The ratings the product stored (not-rated-by-design ones included), as the floor's file."""
    from django.db import connection

    from apps.accounts.models import User
    from apps.catalog.models import Idea
    from apps.screening.models import Dimension, Rating

    query = (
        "COPY (SELECT i.external_id, u.username, d.key, r.score, r.status "
        f"FROM {Rating._meta.db_table} r JOIN {Idea._meta.db_table} i ON i.id = r.idea_id "
        f"JOIN {User._meta.db_table} u ON u.id = r.reviewer_id "
        f"JOIN {Dimension._meta.db_table} d ON d.id = r.dimension_id) "
        "TO STDOUT (FORMAT csv, HEADER true)"
    )
    with connection.cursor() as cur, path.open("wb") as f:
        with cur.cursor.copy(query) as copy:
            for block in copy:
                f.write(block)


def settle() -> None:
    """Flush dirty pages before a timed step, so no step pays for the writes of the one before
    (a checkpoint falling inside the floor or the import moved either by seconds)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("CHECKPOINT")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ideas", type=int, default=100_000)
    parser.add_argument("--ratings", type=int, default=1_000_000)
    parser.add_argument("--reviewers", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=1, help="rounds of floor and ratings import")
    parser.add_argument(
        "--with-hooks",
        action="store_true",
        help=(
            "also run the after-commit reactions of other apps (metrics, judges) to changed ratings"
        ),
    )
    args = parser.parse_args()

    setup_django(os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    from django.db import connection

    from apps.screening.models import Assignment, Rating, RatingHistory

    if not args.with_hooks:
        # Other apps react to changed ratings after commit (judges schedule work per reviewer,
        # domain and dimension); that is their cost, not the import's, so it is left out unless
        # asked.
        import apps.dataio.importers.ratings as ratings_importer

        ratings_importer.ratings_changed = lambda *, reviewer_ids: None
    empty_tables()
    with tempfile.TemporaryDirectory(prefix="pluralist-bench-") as tmp:
        t0 = time.perf_counter()
        paths = generate(Path(tmp), args.ideas, args.ratings, args.reviewers)
        print(
            f"generated files in {time.perf_counter() - t0:.1f} s: "
            + ", ".join(f"{k} {v.stat().st_size / 1e6:.1f} MB" for k, v in paths.items())
        )
        print(f"database: {connection.settings_dict['NAME']} ({connection.vendor})")
        print(
            f"{'import':<18}{'rows':>9}{'created':>9}{'updated':>8}{'unchanged':>10}"
            f"{'seconds':>9}{'rows/s':>9}{'hooks s':>9}{'peak MB':>9}"
        )
        for label in ("patents", "ideas", "reviewers"):
            settle()
            timed_import(label, paths[label])
        stored = Path(tmp) / "stored.csv"
        ratios: list[float] = []
        stored_ratios: list[float] = []
        for _ in range(max(1, args.repeat)):
            truncate(RatingHistory, Rating, Assignment)
            settle()
            floor = timed_floor("floor", paths["ratings"])
            settle()
            took = timed_import("ratings", paths["ratings"])
            ratios.append(took / floor)
            print(f"{'':<18}product import / floor of the file = {took / floor:.2f}x")
            settle()
            timed_import("ratings (again)", paths["ratings"])
            export_stored_rows(stored)
            truncate(RatingHistory, Rating, Assignment)
            settle()
            stored_floor = timed_floor("floor, stored", stored, stored_rows=True)
            stored_ratios.append(took / stored_floor)
            print(
                f"{'':<18}product import / floor of the stored rows = "
                f"{took / stored_floor:.2f}x (target <= 1.2x)"
            )
        if len(ratios) > 1:
            for name, values in (
                ("floor of the file", ratios),
                ("floor of the stored rows (target <= 1.2x)", stored_ratios),
            ):
                listed = ", ".join(f"{r:.2f}x" for r in values)
                print(f"product import / {name}: {listed}; median {statistics.median(values):.2f}x")


def timed_floor(label: str, path: Path, *, stored_rows: bool = False) -> float:
    rows, took = copy_floor(path, stored_rows=stored_rows)
    print(f"{label:<18}{rows:>9}{rows:>9}{0:>8}{0:>10}{took:>9.1f}{rows / took:>9.0f}")
    return took


def timed_import(label: str, path: Path) -> float:
    """Import `path` (its kind is its name), print a row, and return the seconds up to commit."""
    from django.db import transaction

    from apps.dataio.services.imports import import_file

    marks: dict[str, float] = {}
    start = time.perf_counter()
    # The first after-commit callback marks the end of the import's own commit; what runs after
    # it is other apps' reaction to changed ratings (metrics, judges), shown apart.
    with transaction.atomic():
        transaction.on_commit(lambda: marks.setdefault("committed", time.perf_counter()))
        result = import_file(kind=path.stem, content=path.read_bytes(), filename=path.name)
    end = time.perf_counter()
    took = marks.get("committed", end) - start
    hooks = end - marks.get("committed", end)
    print(
        f"{label:<18}{result.rows:>9}{result.created:>9}{result.updated:>8}{result.unchanged:>10}"
        f"{took:>9.1f}{result.rows / took:>9.0f}{hooks:>9.1f}{peak_mb():>9.0f}"
    )
    return took


if __name__ == "__main__":
    main()
