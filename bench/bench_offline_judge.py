"""Quality and speed of the offline ("local", not an LLM) judge on the demo, next to the
reference judge of issue 7 measured in the same run. Prints figures; asserts nothing.

    .venv/bin/python bench/bench_offline_judge.py [--seed 0] [--threshold 21] [--k 9]

No Django or database needed (tests/judges/offline_eval.py builds everything from
apps.demo.generator.generate_demo). Runs on one core: BLAS/OpenMP pools are pinned to 1 thread
before numpy loads. Prints:

1. vector build time: the stored representation fitted on all items of each domain
   (apps.judges.engine.item_text.fit_item_vectors), what apps.judges.vectors computes once, and the
   stored size (nonzeros per item);
2. how many per-seed predictions of ours equal the reference's (the rule is the reference's);
3. per domain x dimension at k: personalized alpha of ours (raw confidences cross-fitted by
   reviewer with apps.judges.engine.calibration, seeds with calibrated confidence below --threshold
   discarded, majority over 3 seeds) vs the reference (TF-IDF fitted on the domain, each
   example votes with weight 0.001 + cosine, majority over 3 seeds, no threshold), the
   coverage of ours, and the same for aggregate; then personalized - aggregate;
4. the calibration table (calibrated confidence bin -> share exactly right, per seed
   prediction), the share exactly right among confidence >= 80, and the coverage-accuracy curve
   of the final predictions at a few thresholds;
5. time per 1,000 requests of LocalBackend.judge_batch (CPU), ours and the reference's loop,
   and the time of 40,000 requests at k = 9, with one Gram matrix of the batch's items (up to
   GRAM_MAX_ITEMS distinct items) and with one dot product per pair (past it).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.demo.generator import PLANTED  # noqa: E402
from apps.judges.backends import local  # noqa: E402
from apps.judges.backends.local import RECOMMENDED_THRESHOLD, LocalBackend  # noqa: E402
from apps.judges.engine.calibration import coverage_accuracy_curve  # noqa: E402
from tests.judges import offline_eval as E  # noqa: E402


def cpu(fn):
    start = time.process_time()
    result = fn()
    return result, time.process_time() - start


def signals_table(data, vectors, *, k: int, threshold: int) -> None:
    """Issue 17: the judge with the panel signal (production) vs the text-only judge, next to
    the level-only baseline (the mean of the same k examples), pooled alpha and per-reviewer
    alpha (engine.level), mean over the domain x dimension cells."""
    from apps.judges.engine import alignment

    scales = {key: (d.scale_min, d.scale_max) for key, d in data.dimensions.items()}
    print(f"\nSignals at k={k} (3 seeds, threshold {threshold}), mean over cells:")
    for kind in ("personalized", "aggregate", "zero_shot"):
        for panel in (True, False):
            kk = 0 if kind == "zero_shot" else k
            (preds, seconds) = cpu(
                lambda kind=kind, panel=panel, kk=kk: E.calibrate(
                    E.local_predictions(data, vectors, kind=kind, k=kk, panel=panel)
                )
            )
            final = E.finals(preds, threshold=threshold)
            base = (
                preds.groupby(["domain", "dimension", "reviewer_id", "idea_id"])["base"]
                .mean()
                .map(lambda x: np.floor(x + 0.5))
                .reset_index()
            )
            frame = final.merge(base, on=["domain", "dimension", "reviewer_id", "idea_id"])
            frame = frame.rename(columns={"final": "pred", "score": "truth"}).assign(
                kind=kind, k=kk, kept=1, discarded=0
            )
            frame[["pred", "truth", "base"]] = frame[["pred", "truth", "base"]].astype(float)
            rows = []
            for _, cell in frame.groupby("domain"):
                rows += alignment.alignment_curve(cell, scales=scales)

            def mean(key: str, rows=rows) -> float:
                values = [r[key] for r in rows if r.get(key) is not None]
                return float(np.mean(values)) if values else float("nan")

            mix = preds["signal"].value_counts(normalize=True).round(3).to_dict()
            print(
                f"  {kind:<13}{'panel,text' if panel else 'text':<11} pooled {mean('alpha'):6.3f}"
                f"  per-reviewer {mean('within_alpha'):6.3f}"
                f"  level-only {mean('baseline_alpha'):6.3f}"
                f"  lift {mean('lift'):+6.3f}  coverage {final['final'].notna().mean():.3f}"
                f"  signals {mix}  ({seconds:.1f} s CPU)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="demo seed (the demo uses 0)")
    parser.add_argument(
        "--threshold", type=int, default=RECOMMENDED_THRESHOLD, help="calibrated confidence cut"
    )
    parser.add_argument("--k", type=int, default=9)
    args = parser.parse_args()

    data = E.demo_set(args.seed)
    print(f"demo seed {args.seed}: {len(data.ideas)} ideas, {len(data.ratings)} scored ratings")
    vectors, build_s = cpu(lambda: E.domain_vectors(data))
    widths = sorted({v.shape[1] for v in vectors.values()})
    nonzeros = [v.nnz for v in vectors.values()]
    print(
        f"vector build (fit on every domain, {len(vectors)} items, vocabularies {widths}): "
        f"{build_s:.2f} s CPU; {sum(nonzeros) / len(nonzeros):.0f} nonzeros per item on average "
        f"(max {max(nonzeros)}), {8 * sum(nonzeros) / len(nonzeros) / 1024:.1f} KiB stored per item"
    )

    signals_table(data, vectors, k=args.k, threshold=args.threshold)

    tables = {}
    seeds_frames = {}
    for kind in ("personalized", "aggregate"):
        ours = E.calibrate(E.local_predictions(data, vectors, kind=kind, k=args.k))
        seeds_frames[kind] = ours
        ref = E.reference_predictions(data, kind=kind, k=args.k)
        same = (ours["pred"].to_numpy() == ref["pred"].to_numpy()).sum()
        print(f"{kind}: per-seed predictions equal to the reference's: {same} of {len(ours)}")
        tables[kind] = (
            E.alpha_table(E.finals(ours, threshold=args.threshold), data),
            E.alpha_table(E.finals(ref, threshold=None), data),
        )
    pers, pers_ref = tables["personalized"]
    agg, agg_ref = tables["aggregate"]
    table = pd.DataFrame(
        {
            "pers": pers["alpha"],
            "pers_ref": pers_ref["alpha"],
            "pers-ref": pers["alpha"] - pers_ref["alpha"],
            "pers_cov": pers["coverage"],
            "agg": agg["alpha"],
            "agg_ref": agg_ref["alpha"],
            "agg_cov": agg["coverage"],
            "pers-agg": pers["alpha"] - agg["alpha"],
        }
    )
    pd.set_option("display.width", 200)
    print(
        f"\nKrippendorff ordinal alpha at k={args.k}, threshold {args.threshold} "
        "(ours) vs reference (no threshold):"
    )
    print(table.round(3).to_string())
    below = table[table["pers-ref"] < 0]
    print(
        f"cells where personalized ours < reference: {len(below)} of {len(table)}"
        + (f" (worst {below['pers-ref'].min():+.3f})" if len(below) else "")
    )
    planted = table[table.index.get_level_values("dimension").isin(PLANTED)]
    print(
        f"planted cells where personalized <= aggregate: {(planted['pers-agg'] <= 0).sum()} "
        f"of {len(planted)}"
    )
    print(
        f"mean alpha: ours pers {table['pers'].mean():.3f} vs ref {table['pers_ref'].mean():.3f};"
        f" ours agg {table['agg'].mean():.3f} vs ref {table['agg_ref'].mean():.3f}"
    )

    for kind, frame in seeds_frames.items():
        print(f"\ncalibration ({kind}, per seed prediction, cross-fitted by reviewer):")
        bins = pd.cut(
            frame["confidence"],
            [-1, 19, 39, 59, 79, 100],
            labels=["0-19", "20-39", "40-59", "60-79", "80-100"],
        )
        cal = frame.groupby(bins, observed=False).agg(
            n=("correct", "size"),
            exactly_right=("correct", "mean"),
            mean_conf=("confidence", "mean"),
        )
        print(cal.round(3).to_string())
        high = frame[frame["confidence"] >= 80]
        print(
            f"confidence >= 80: {len(high)} predictions, "
            f"{high['correct'].mean() if len(high) else float('nan'):.3f} exactly right"
        )
        final_all = E.finals(frame, threshold=0)
        curve = coverage_accuracy_curve(
            final_all["final_confidence"].to_numpy(float),
            (final_all["final"] == final_all["score"]).to_numpy(),
        )
        print(
            "coverage-accuracy (final confidence >= t): "
            + "; ".join(
                f"t={r['threshold']}: cov {r['coverage']:.2f} acc {(r['accuracy'] or 0):.2f}"
                for r in curve[::10]
            )
        )
        reference_alpha = tables[kind][1]["alpha"]
        for t in (0, 21, 25, 30, 35, 40):
            f = E.finals(frame, threshold=t)
            gap = E.alpha_table(f, data)["alpha"] - reference_alpha
            print(
                f"  threshold {t}: seeds discarded {(frame['confidence'] < t).mean():.2%}, "
                f"final coverage {f['final'].notna().mean():.3f}, cells below the reference "
                f"{(gap < -1e-9).sum()} (worst {gap.min():+.3f})"
            )

    requests, _ = E.build_requests(data, kind="personalized", k=args.k, seed=0)
    backend = LocalBackend(vectors=vectors)
    _, ours_s = cpu(lambda: backend.judge_batch(requests))
    _, ref_s = cpu(lambda: E.reference_predictions(data, kind="personalized", k=args.k, seeds=(0,)))
    many = (requests * (40_000 // len(requests) + 1))[:40_000]
    _, many_s = cpu(lambda: backend.judge_batch(many))
    gram_max = local.GRAM_MAX_ITEMS
    local.GRAM_MAX_ITEMS = 0  # as for a batch of more distinct items than that
    try:
        _, pairs_s = cpu(lambda: backend.judge_batch(many))
    finally:
        local.GRAM_MAX_ITEMS = gram_max
    per_1000 = 1e6 / len(requests)  # seconds for the batch -> ms per 1,000 requests
    print(
        f"\nspeed (CPU, one core): ours {ours_s * per_1000:.0f} ms per 1,000 requests "
        f"({len(requests)} in one batch); reference loop (incl. its TF-IDF fits) "
        f"{ref_s * per_1000:.0f} ms per 1,000; 40,000 requests at k={args.k}: {many_s:.2f} s "
        f"(Gram matrix), {pairs_s:.2f} s (one dot product per pair)"
    )


if __name__ == "__main__":
    main()
