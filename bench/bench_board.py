"""Benchmark: the Decide board (apps/decisions/ranking: the model's fit, P(top) and rows) next to
compute_metrics, same frames.

    .venv/bin/python bench/bench_board.py [--sizes 100000,1000000]

No database: synthetic rating frames (10,000 ideas, 200 reviewers, 6 dimensions) plus 50,000
random predictions. Prints, per size, compute_metrics (the reference, measured in the same run),
build_boards (the board and the people-only board the snapshot stores, from one fit), and the
size and json.dumps time of their rows. Wall and CPU seconds (CPU: the process's own time,
steadier on a busy machine). One BLAS thread.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from apps.decisions.ranking.board import build_boards, scales_from  # noqa: E402
from apps.disagreement.analysis import compute_metrics  # noqa: E402
from apps.disagreement.analysis.synthetic import synthetic_frame, synthetic_scales  # noqa: E402

DIMS = [f"d{j}" for j in range(6)]


def predictions(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "reviewer_id": rng.integers(1, 201, n),
            "idea_id": rng.integers(1, 10_001, n),
            "dimension": rng.choice(DIMS, n),
            "score": rng.integers(1, 6, n).astype(float),
            "confidence": rng.integers(50, 100, n).astype(float),
        }
    )
    frame["reviewer"] = [f"r{r - 1:04d}" for r in frame["reviewer_id"]]
    return frame.drop_duplicates(["reviewer_id", "idea_id", "dimension"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000")
    args = parser.parse_args()
    preds = predictions(50_000)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    for n in [int(s) for s in args.sizes.split(",")]:
        frame = synthetic_frame(n_ratings=n, n_ideas=10_000, n_reviewers=200)
        frame["title"] = frame["idea"].astype(str)
        t = time.perf_counter()
        c = time.process_time()
        compute_metrics(frame, scales=synthetic_scales())
        t_metrics = time.perf_counter() - t
        c_metrics = time.process_time() - c
        catalog = frame[["idea_id", "idea", "title", "domain"]].drop_duplicates("idea_id")
        t = time.perf_counter()
        c = time.process_time()
        boards, _ = build_boards(
            frame,
            predictions=preds,
            catalog=catalog,
            scales=scales_from(synthetic_scales(), {}),
        )
        t_board = time.perf_counter() - t
        c_board = time.process_time() - c
        t = time.perf_counter()
        size = sum(len(json.dumps(made)) for made in boards.values())
        t_json = time.perf_counter() - t
        n_rows = sum(len(s["idea_id"]) for made in boards.values() for s in made)
        print(
            f"{n:>9,} ratings: compute_metrics {t_metrics:6.2f} s wall, {c_metrics:.2f} s CPU "
            f"(reference) | build_boards (the board and the people-only board) "
            f"{t_board:6.2f} s wall, {c_board:.2f} s CPU, {n_rows:,} rows, "
            f"{size / 1e6:.1f} MB JSON (dumps {t_json:.2f} s)"
        )


if __name__ == "__main__":
    main()
