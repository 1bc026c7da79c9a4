"""Benchmark: export and restore an installation archive holding 100,000 judge predictions.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/pl_backup_bench \\
        .venv/bin/python bench/bench_archive.py [--predictions 100000] [--ratings 3000]

Creates (if needed) and migrates the database, empties the project's tables, and stores an
installation like the one issue 29 measured (3,156 ratings and 104,181 predictions took 77 s
and 1.06 GB to restore): one rubric, 1,000 ideas, 20 reviewers with `--ratings` ratings and
their history, one judge run with `--predictions` predictions (reason and raw reply of the
lengths an LLM writes, four few-shot examples each). Then, each in a fresh process so its peak
resident memory is its own:

- export: `installation_export_to` into a file;
- restore: the project's tables emptied, `installation_import` from that file (what
  `manage.py import_installation` runs), committed.

Target (issue 29): the restore within 30 s and 600 MB peak RSS. The reference printed beside it
is measured in the same run on the same archive: reading every part of `judge_predictions.csv`
and COPYing the raw rows into a temporary table with no keys, the least a restore of that file
costs. The restore's after-commit messages go to an in-memory broker (no worker).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/pl_backup_bench"
TARGET_SECONDS = 30.0
TARGET_MB = 600.0
RUBRIC = """
key: bench
name: Bench
domains: [bench]
dimensions:
  - key: quality
    scale: {min: 1, max: 5}
    optional: true
"""


def setup_django(url: str, *, migrate: bool) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    # The restore's after-commit messages (snapshot recomputes) reach no worker.
    os.environ["CELERY_BROKER_URL"] = "memory://"
    os.environ["CACHE_URL"] = "locmem://"
    if migrate:
        import psycopg

        name = url.rsplit("/", 1)[1].split("?")[0]
        with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                conn.execute(f'CREATE DATABASE "{name}"')
    import django

    django.setup()
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def empty_tables() -> None:
    from django.db import connection

    from apps.dataio.services.archive.tables import installation_models

    tables = [
        m._meta.db_table
        for m in installation_models()
        if m._meta.app_config.name.startswith("apps.")
    ]
    with connection.cursor() as cur:
        cur.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")


def build(*, predictions: int, ratings: int) -> None:
    import numpy as np
    from django.db import transaction
    from django.utils import timezone

    from apps.accounts.models import User
    from apps.catalog.models import Domain, Idea, Patent
    from apps.dataio.services.imports import import_file
    from apps.judges.models import JudgeConfig, JudgePrediction, JudgeRun
    from apps.screening.models import Dimension, Rating, RatingHistory

    rng = np.random.default_rng(29)
    empty_tables()
    with transaction.atomic():
        import_file(kind="rubric", content=RUBRIC.encode(), filename="b.yaml", create_domains=True)
        domain = Domain.objects.get(key="bench")
        dim = Dimension.objects.get(rubric__key="bench", key="quality")
        patent = Patent.objects.create(external_id="P-1", domain=domain, title="A patent")
        ideas = Idea.objects.bulk_create(
            Idea(
                external_id=f"idea-{i:05d}",
                patent=patent,
                title=f"Idea {i}",
                description="A description of the idea, a few sentences long. " * 4,
            )
            for i in range(1000)
        )
        reviewers = User.objects.bulk_create(
            User(username=f"reviewer-{r:02d}", role=User.Role.REVIEWER, password="!")
            for r in range(20)
        )
        pairs = [(r, i) for r in reviewers for i in ideas][:ratings]
        stored = Rating.objects.bulk_create(
            Rating(
                reviewer=r,
                idea=i,
                dimension=dim,
                score=int(rng.integers(1, 6)),
                status="scored",
                rationale="Because the idea is specific and new. " * 3,
                source="form",
            )
            for r, i in pairs
        )
        now = timezone.now()
        RatingHistory.objects.bulk_create(
            RatingHistory(
                rating=s,
                changed_at=now,
                source="form",
                new_status="scored",
                new_score=s.score,
                new_rationale=s.rationale,
            )
            for s in stored
        )
        config = JudgeConfig.objects.create(name="bench k=4", kind="personalized", shots=[4])
        run = JudgeRun.objects.create(
            purpose="prediction", status="done", domain=domain, dimensions=["quality"]
        )
        run.configs.set([config])
        rating_ids = [s.id for s in stored]
        reason = "The idea names its mechanism and its users; the examples scored similar ideas 3."
        reply = json.dumps({"score": 3, "confidence": 70, "reason": reason * 3})
        per_seed = max(1, predictions // (len(reviewers) * len(ideas)) + 1)
        batch: list[JudgePrediction] = []
        made = 0
        for seed in range(per_seed):
            for r in reviewers:
                for i in ideas:
                    if made >= predictions:
                        break
                    batch.append(
                        JudgePrediction(
                            run=run,
                            config=config,
                            kind="personalized",
                            k=4,
                            seed=seed,
                            reviewer=r,
                            idea=i,
                            dimension=dim,
                            score=int(rng.integers(1, 6)),
                            confidence=int(rng.integers(40, 95)),
                            raw_confidence=70,
                            reason=reason,
                            model="gemma-3-270m",
                            backend="openai",
                            response_mode="json_schema",
                            prompt_fingerprint="f" * 64,
                            example_rating_ids=[
                                int(x) for x in rng.choice(rating_ids, 4, replace=False)
                            ],
                            raw_reply=reply,
                            prompt_tokens=900,
                            completion_tokens=60,
                            latency_ms=850,
                            attempts=1,
                        )
                    )
                    made += 1
                    if len(batch) >= 5000:
                        JudgePrediction.objects.bulk_create(batch)
                        batch = []
        JudgePrediction.objects.bulk_create(batch)


def phase_export(path: Path) -> dict[str, float]:
    from apps.dataio.services.archive import installation_export_to

    started = time.perf_counter()
    with path.open("wb") as out:
        report = installation_export_to(out)
    return {
        "seconds": time.perf_counter() - started,
        "peak_mb": peak_mb(),
        "bytes": path.stat().st_size,
        "parts": len(report.parts.get("judge_predictions.csv", ["one"])),
        "warnings": len(report.warnings),
    }


def phase_restore(path: Path) -> dict[str, float]:
    from apps.dataio.services.archive import installation_import
    from apps.judges.models import JudgePrediction

    empty_tables()
    started = time.perf_counter()
    with path.open("rb") as content:
        installation_import(content=content)
    return {
        "seconds": time.perf_counter() - started,
        "peak_mb": peak_mb(),
        "predictions": JudgePrediction.objects.count(),
    }


def phase_floor(path: Path) -> dict[str, float]:
    """Read every part of judge_predictions.csv and COPY the raw rows into a keyless table."""
    import csv
    import io
    import zipfile

    from django.db import connection, transaction

    started = time.perf_counter()
    archive = zipfile.ZipFile(path)
    manifest = json.loads(archive.read("manifest.json"))
    members = manifest.get("parts", {}).get("judge_predictions.csv") or ["judge_predictions.csv"]
    rows = 0
    with transaction.atomic(), connection.cursor() as cur:
        header = next(csv.reader(io.StringIO(archive.read(members[0]).decode().split("\n")[0])))
        cur.execute(
            "CREATE TEMP TABLE floor_predictions ("
            + ", ".join(f'"{h}" text' for h in header)
            + ") ON COMMIT DROP"
        )
        with cur.cursor.copy("COPY floor_predictions FROM STDIN") as copy:
            for member in members:
                reader = csv.reader(io.StringIO(archive.read(member).decode(), newline=""))
                next(reader)
                for row in reader:
                    copy.write_row(row)
                    rows += 1
    return {"seconds": time.perf_counter() - started, "peak_mb": peak_mb(), "rows": rows}


def child(phase: str, path: Path, url: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--phase", phase, "--file", str(path), "--url", url],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        sys.stderr.write(out.stdout + out.stderr)
        raise SystemExit(f"the {phase} phase failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--predictions", type=int, default=100_000)
    parser.add_argument("--ratings", type=int, default=3_000)
    parser.add_argument("--url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--phase", choices=["export", "restore", "floor"])
    parser.add_argument("--file")
    parser.add_argument(
        "--reuse", action="store_true", help="keep the stored installation if it has the sizes"
    )
    args = parser.parse_args()
    if args.phase:
        setup_django(args.url, migrate=False)
        run = {"export": phase_export, "restore": phase_restore, "floor": phase_floor}
        print(json.dumps(run[args.phase](Path(args.file))))
        return

    setup_django(args.url, migrate=True)
    started = time.perf_counter()
    from apps.judges.models import JudgePrediction
    from apps.screening.models import Rating

    reused = (
        args.reuse
        and JudgePrediction.objects.count() == args.predictions
        and Rating.objects.count() == args.ratings
    )
    if not reused:
        build(predictions=args.predictions, ratings=args.ratings)
    print(
        f"{'reused' if reused else 'stored'} {args.predictions:,} predictions and "
        f"{args.ratings:,} ratings ({time.perf_counter() - started:.1f} s)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.zip"
        export = child("export", path, args.url)
        floor = child("floor", path, args.url)
        restore = child("restore", path, args.url)
    assert restore["predictions"] == args.predictions, restore
    ok_time = restore["seconds"] <= TARGET_SECONDS
    ok_mem = restore["peak_mb"] <= TARGET_MB
    print(
        f"archive: {export['bytes'] / 1e6:.1f} MB zipped, judge_predictions.csv in "
        f"{export['parts']:.0f} part(s), {export['warnings']:.0f} warnings"
    )
    print(f"{'phase':<44} {'seconds':>8} {'peak RSS MB':>12}")
    print(f"{'export':<44} {export['seconds']:>8.1f} {export['peak_mb']:>12.0f}")
    print(
        f"{'restore (installation_import, committed)':<44} {restore['seconds']:>8.1f} "
        f"{restore['peak_mb']:>12.0f}   target <= {TARGET_SECONDS:.0f} s, <= {TARGET_MB:.0f} MB: "
        f"{'met' if ok_time and ok_mem else 'MISSED'}"
    )
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(
        f"{'reference: read + COPY the raw prediction rows':<44} {floor['seconds']:>8.1f} "
        f"{floor['peak_mb']:>12.0f}   restore = {restore['seconds'] / floor['seconds']:.1f}x it"
    )


if __name__ == "__main__":
    main()
