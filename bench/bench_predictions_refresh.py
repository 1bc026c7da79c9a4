"""Refreshing every prediction of a large panel with the offline judge (issue 17's scale target).

    taskset -c 0,1 .venv/bin/python bench/bench_predictions_refresh.py \\
        [--reviewers 50] [--ideas 2000] [--dimensions 6] [--rated 0.1] [--k 9]

No database (Django is set up only to import the planning module): the engine path of a
prediction run, as services.execution runs it, on a synthetic panel. Every reviewer rates a
share --rated of the ideas on every dimension; a reviewer's scale has their own level and
spread; one idea in ten is scored by nobody, so the text fallback runs too. Every (reviewer,
idea, dimension) is predicted, rated or not: reviewers x ideas x dimensions requests (600,000
by default), personalized at k, one seed.
Timed phases, in CPU seconds of this process (the machine may be shared; the engine is single
threaded apart from BLAS, so CPU time is what one of the two cores spends):

1. item vectors (apps.judges.engine.item_text.fit_item_vectors, stored once per domain in the
   product; shown apart);
2. examples (apps.judges.services.planning.examples_for_units, the run's own batched draw);
3. the panel index per dimension and each request's panel (apps.judges.engine.panel);
4. building the JudgeRequests and LocalBackend.judge_batch (panel, text, level);
and the total without the vectors. Prints the signal mix. The product then stores the rows
(bulk upserts, about 10 s per 100,000 rows on the development database: not part of this
figure). For the per-domain study time, run bench/bench_judge_study.py beside it.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "2")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# planning lives under apps.judges.services, whose package imports Django; no query is made.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

import django  # noqa: E402

django.setup()

from apps.judges.backends.local import LocalBackend  # noqa: E402
from apps.judges.engine.item_text import fit_item_vectors  # noqa: E402
from apps.judges.engine.judgment import Example, JudgeRequest, RubricDimension  # noqa: E402
from apps.judges.engine.panel import PanelIndex  # noqa: E402
from apps.judges.services import planning  # noqa: E402

WORDS = (
    "sensor battery drone contract invoice speech crop clinic fleet solar robot ledger "
    "camera model cloud privacy shipping warehouse retail energy water farm school bank"
).split()


def synthetic(reviewers: int, ideas: int, dims: int, rated: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    texts = [
        (
            f"Patent {i // 3}: " + " ".join(rng.choice(WORDS, 30)),
            f"Idea {i}: " + " ".join(rng.choice(WORDS, 40)),
        )
        for i in range(ideas)
    ]
    quality = rng.normal(size=(ideas, dims))
    level = rng.uniform(1.8, 3.2, size=(reviewers, dims))
    spread = rng.uniform(0.5, 1.2, size=(reviewers, dims))
    nobody = rng.random(ideas) < 0.1  # ideas no reviewer scored
    pools: dict[int, list[list[int]]] = {}
    rating_id = 0
    for d in range(dims):
        rows = []
        for r in range(reviewers):
            chosen = np.flatnonzero((rng.random(ideas) < rated) & ~nobody)
            scores = np.clip(np.rint(level[r, d] + spread[r, d] * quality[chosen, d]), 1, 5)
            for i, s in zip(chosen, scores, strict=True):
                rating_id += 1
                rows.append([rating_id, int(i), int(i) // 3, r, int(s)])
        pools[d] = rows
    return texts, pools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviewers", type=int, default=50)
    parser.add_argument("--ideas", type=int, default=2000)
    parser.add_argument("--dimensions", type=int, default=6)
    parser.add_argument("--rated", type=float, default=0.1, help="share of ideas each rates")
    parser.add_argument("--k", type=int, default=9)
    args = parser.parse_args()

    texts, pools = synthetic(args.reviewers, args.ideas, args.dimensions, args.rated)
    n_ratings = sum(len(p) for p in pools.values())
    started = time.process_time()
    matrix = fit_item_vectors(texts)
    vectors = {i: matrix[i] for i in range(len(texts))}
    t_vectors = time.process_time() - started

    dims = {
        d: RubricDimension(key=f"d{d}", name=f"d{d}", description="", scale_min=1, scale_max=5)
        for d in pools
    }
    spec = planning.ConfigSpec(id=1, kind="personalized", k_values=(args.k,), seeds=1)
    targets = {
        d: [[r, i, i // 3] for r in range(args.reviewers) for i in range(args.ideas)] for d in pools
    }

    t0 = time.process_time()
    units = planning.plan_units(dimension_ids=list(pools), targets=targets, configs=[spec])
    examples = planning.examples_for_units(units, pools)
    t_examples = time.process_time() - t0

    t0 = time.process_time()
    indexes = {
        d: PanelIndex(((r[1], r[3], r[4]) for r in rows), scale_min=1, scale_max=5)
        for d, rows in pools.items()
    }
    panels = [
        indexes[u.dimension_id].panel(u.idea_id, exclude_reviewer=u.reviewer_id) for u in units
    ]
    t_panel = time.process_time() - t0

    t0 = time.process_time()
    rating = {int(r[0]): (int(r[1]), int(r[4])) for rows in pools.values() for r in rows}
    backend = LocalBackend(vectors=vectors)
    signals: Counter[str] = Counter()
    batch = 5000  # services.chunks.LOCAL_BATCH
    for start in range(0, len(units), batch):
        chunk = range(start, min(start + batch, len(units)))
        requests = [
            JudgeRequest(
                dimension=dims[units[n].dimension_id],
                examples=tuple(
                    Example(
                        item_id=rid,
                        patent_text=texts[rating[rid][0]][0],
                        idea_text=texts[rating[rid][0]][1],
                        score=rating[rid][1],
                        idea_id=rating[rid][0],
                    )
                    for rid in examples[n]
                ),
                patent_text=texts[units[n].idea_id][0],
                idea_text=texts[units[n].idea_id][1],
                idea_id=units[n].idea_id,
                panel=panels[n],
            )
            for n in chunk
        ]
        signals.update(r.signal for r in backend.judge_batch(requests))
    t_judge = time.process_time() - t0

    total = t_examples + t_panel + t_judge
    print(
        f"{args.reviewers} reviewers x {args.ideas:,} ideas x {args.dimensions} dimensions = "
        f"{len(units):,} predictions (personalized, k={args.k}, 1 seed); {n_ratings:,} ratings"
    )
    print(f"  item vectors (stored once per domain, not in the total): {t_vectors:6.1f} s")
    print(f"  examples (planning.examples_for_units):                  {t_examples:6.1f} s")
    print(f"  panels (engine.panel):                                   {t_panel:6.1f} s")
    print(f"  requests + LocalBackend.judge_batch:                     {t_judge:6.1f} s")
    print(f"  total refresh (engine):                                  {total:6.1f} s")
    print("  signals: " + ", ".join(f"{s} {n:,}" for s, n in signals.most_common()))


if __name__ == "__main__":
    main()
