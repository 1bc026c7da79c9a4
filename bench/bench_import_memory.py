"""Benchmark: peak memory of a ratings import of a large CSV (about 100 MB), read as a stream.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/pluralist_bench \
        .venv/bin/python bench/bench_import_memory.py [--ratings 1000000] [--before DIR]

Generates the patents, ideas and reviewers of bench/bench_import.py and a ratings file with a
rationale on every row (one in four with an accented letter, as real rationales have), stores
the first three, then measures the ratings file in fresh processes, one per case:

- `read`: only parsing the file into the importers' frame (`read_table`);
- `import`: the whole import as a dry run (validation, gates, every write, then rolled back).

Each case prints the process's peak resident memory before the file is touched and after
(VmHWM), and the growth. `stream` passes the open file, as the admin page
(a large upload is a file on disk), the API and the command now do; `bytes` passes the file read
whole, as they did before issue 21.2. With `--before DIR` (a checkout of the code before the
change, e.g. `git archive <commit> | tar -x -C DIR`) the `bytes` cases also run on that code.
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
RATIONALES = (
    "The claim structure fits the product, but the market needs a pilot first.",
    "Clear buyer and a working prototype; the pricing still has to be tested.",
    "Une idée solide: le marché existe, la réalisation reste à prouver en usine.",
    "Too broad for one product; the technical risk sits in the sensor calibration.",
)


def peak_mb() -> float:
    """This process's peak resident memory since it started. /proc's VmHWM, not getrusage's
    ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child started by the (large)
    generating process would report the parent's peak."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(args: argparse.Namespace) -> None:
    """One measurement in this fresh process, on the code in `args.code`."""
    sys.path.insert(0, args.code)
    # Bound before Django starts: Celery puts the working directory first on sys.path when the
    # settings load, and the process also runs there (measure()), so both name the same code.
    import apps  # noqa: F401

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    import pandas  # noqa: F401  (loaded before the baseline, as in a warm web worker)

    from apps.dataio.importers import reading
    from apps.dataio.importers.reading import read_table
    from apps.dataio.services.imports import import_file

    # The code measured must be the code asked for (an editable install could shadow it).
    assert reading.__file__.startswith(args.code), (reading.__file__, args.code)

    path = Path(args.child)
    baseline = peak_mb()
    started = time.perf_counter()
    with path.open("rb") as file:
        content = file.read() if args.mode == "bytes" else file
        if args.stage == "read":
            rows = len(read_table(content, path.name))
        else:
            rows = import_file(
                kind="ratings", content=content, filename=path.name, dry_run=True
            ).rows
    print(
        json.dumps(
            {
                "baseline_mb": round(baseline),
                "peak_mb": round(peak_mb()),
                "seconds": round(time.perf_counter() - started, 1),
                "rows": rows,
            }
        )
    )


def measure(path: Path, *, code: Path, stage: str, mode: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", str(path), "--code", str(code)]
        + ["--stage", stage, "--mode", mode],
        check=True,
        capture_output=True,
        text=True,
        cwd=code,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ideas", type=int, default=100_000)
    parser.add_argument("--ratings", type=int, default=1_000_000)
    parser.add_argument("--reviewers", type=int, default=200)
    parser.add_argument("--before", help="a checkout of the code before the change")
    parser.add_argument("--stages", default="read,import")
    parser.add_argument(
        "--dir",
        help="keep the generated files here; when it already holds ratings.csv from an earlier "
        "run (whose patents, ideas and reviewers are still stored), measure that file again",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--code", default=str(ROOT), help=argparse.SUPPRESS)
    parser.add_argument("--stage", default="read", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="stream", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_import import DEFAULT_URL, empty_tables, generate, setup_django

    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    setup_django(url)
    import pandas as pd

    from apps.dataio.services.imports import import_file

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.dir or tmp)
        if (folder / "ratings.csv").exists():
            paths = {"ratings": folder / "ratings.csv"}
        else:
            empty_tables()
            folder.mkdir(parents=True, exist_ok=True)
            paths = generate(folder, args.ideas, args.ratings, args.reviewers)
            for kind in ("patents", "ideas", "reviewers"):
                with paths[kind].open("rb") as file:
                    import_file(kind=kind, content=file, filename=paths[kind].name)
            ratings = pd.read_csv(paths["ratings"], dtype=str)
            ratings["rationale"] = [RATIONALES[i % 4] for i in range(len(ratings))]
            ratings.to_csv(paths["ratings"], index=False)
            del ratings
        size = paths["ratings"].stat().st_size
        print(f"ratings.csv: {size / 1e6:.1f} MB")
        cases = [("this code", ROOT, "stream"), ("this code", ROOT, "bytes")]
        if args.before:
            cases.append(("before", Path(args.before), "bytes"))
        for stage in args.stages.split(","):
            for label, code, mode in cases:
                r = measure(paths["ratings"], code=code, stage=stage, mode=mode)
                print(
                    f"{stage:6s} {label:9s} {mode:6s}: peak {r['peak_mb']:,.0f} MB "
                    f"(+{r['peak_mb'] - r['baseline_mb']:,.0f} MB over {r['baseline_mb']:,.0f} MB "
                    f"before the file), {r['seconds']} s, {r['rows']:,} rows",
                    flush=True,
                )


if __name__ == "__main__":
    main()
