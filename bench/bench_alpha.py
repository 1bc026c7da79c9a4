"""Speed of the disagreement analysis core. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_alpha.py            # full run (about a minute)
    .venv/bin/python bench/bench_alpha.py --quick    # skips the 1,000,000-rating frame

Runs on one core: BLAS/OpenMP thread pools are pinned to 1 thread before numpy loads.
Both wall-clock and process CPU time are printed: on a shared, busy machine the wall time
includes waiting for a core, the CPU time is what the work itself costs.
Compares our Krippendorff's alpha with the `krippendorff` package (GPL-3.0; benchmark and
tests only, never imported by apps/) on the same data, then times compute_metrics.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.disagreement.analysis import compute_metrics, krippendorff_alpha  # noqa: E402
from apps.disagreement.analysis.synthetic import synthetic_frame, synthetic_scales  # noqa: E402


def best_of(fn, repeat=3):
    """Smallest CPU time of ``repeat`` runs (CPU, not wall: the machine may be shared)."""
    times = []
    result = None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        times.append(time.process_time() - start)
    return min(times), result


def bench_alpha(observers=200, units=10_000, missing=0.9, seed=0):
    import krippendorff

    rng = np.random.default_rng(seed)
    quality = rng.integers(1, 6, size=units)
    data = np.clip(quality + rng.integers(-2, 3, size=(observers, units)), 1, 5).astype(float)
    data[rng.random(data.shape) < missing] = np.nan
    print(
        f"\nKrippendorff's alpha, {observers} observers x {units} units, "
        f"{missing:.0%} missing ({int(np.isfinite(data).sum()):,} values)"
    )
    print(
        f"{'level':<10}{'ours (cpu s)':>13}{'package (cpu s)':>17}{'speed-up':>10}  {'|diff|':>8}"
    )
    for level in ["nominal", "ordinal", "interval", "ratio"]:
        t_ours, a_ours = best_of(lambda lv=level: krippendorff_alpha(data, lv))
        t_ref, a_ref = best_of(
            lambda lv=level: krippendorff.alpha(reliability_data=data, level_of_measurement=lv),
        )
        print(
            f"{level:<10}{t_ours:>13.4f}{t_ref:>17.4f}{t_ref / t_ours:>9.1f}x  "
            f"{abs(a_ours - a_ref):>8.1e}"
        )


def bench_metrics(sizes, n_boot):
    print(
        f"\ncompute_metrics (ordinal, n_boot={n_boot}, 6 dimensions, 3 domains, "
        "200 reviewers, 10% gated)"
    )
    print(
        f"{'ratings':>10}{'ideas':>8}{'wall (s)':>10}{'cpu (s)':>9}{'json (s)':>10}"
        f"{'pairs':>8}{'json MB':>9}"
    )
    for n in sizes:
        frame = synthetic_frame(
            n_ratings=n, n_ideas=10_000, n_reviewers=200, n_dimensions=6, n_domains=3, seed=1
        )
        start, cpu = time.perf_counter(), time.process_time()
        metrics = compute_metrics(frame, scales=synthetic_scales(6), n_boot=n_boot, seed=0)
        t_metrics = time.perf_counter() - start
        t_cpu = time.process_time() - cpu
        start = time.perf_counter()
        text = json.dumps(metrics, allow_nan=False)
        t_json = time.perf_counter() - start
        print(
            f"{len(frame):>10,}{metrics['n_ideas']:>8,}{t_metrics:>10.2f}{t_cpu:>9.2f}"
            f"{t_json:>10.2f}{len(metrics['pairwise']):>8,}{len(text) / 1e6:>9.1f}"
        )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip the 1,000,000-rating frame")
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args()
    bench_alpha()
    sizes = [3_000, 100_000] if args.quick else [3_000, 100_000, 1_000_000]
    bench_metrics(sizes, args.n_boot)


if __name__ == "__main__":
    main()
