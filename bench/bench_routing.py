"""Benchmark: does routing the next reads reach the shortlist with fewer reads than balancing?

    .venv/bin/python bench/bench_routing.py [--seeds 5] [--batch 25] [--start 30]
    .venv/bin/python bench/bench_routing.py --source db     # the ratings in DATABASE_URL

The rating set (the demo generator by default, or every rating in the database with --source
db) is held out as the truth: a simulated reviewer who reads an idea gives exactly the rating
they gave. The full-information shortlist is the top 10 % of each domain on the model's overall
ranking fitted to all of it. From ``--start`` random reads, reads are added ``--batch`` at a
time, either by routing (apps/decisions/ranking/routing.py, the product's policy with one pick
per reviewer per round) or by the balanced assignment (the idea with the fewest reads first, in
id order, to its least-loaded reviewer, as assignment_bulk_balanced does), until the shortlist
fitted to the reads so far overlaps the full-information one at 0.8 (shared ideas / shortlist
size). Prints the reads each needed per seed, then the medians; the last line is the summary.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections import defaultdict
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from apps.decisions.ranking.board import scales_from  # noqa: E402
from apps.decisions.ranking.model import ALL, Scale, fit_all  # noqa: E402
from apps.decisions.ranking.routing import (  # noqa: E402
    MIN_READS,
    RANDOM,
    IdeaState,
    Policy,
    one_read_var,
    pair_confidence,
    route,
)
from apps.judges.engine.panel import PanelIndex, predict  # noqa: E402

TARGET = 0.8
SHARE = 0.10
# Examples per personalized prediction (the judges' default k).
K_EXAMPLES = 8


def judge_predictions(seen: pd.DataFrame, hidden, catalog, scales) -> pd.DataFrame:
    """The offline panel judge's predictions for the unread pairs, from the reads so far.

    As the product's prediction runs do (apps/judges/engine/panel.py): per domain and
    dimension, the other readers' scores standardised by their own scale, mapped onto the
    target reviewer's scale by their k latest examples on that dimension (personalized; none
    yet: the panel's typical reviewer). An idea nobody has read gets no prediction (the text
    fallback predicts a reviewer's level, which says nothing about the idea). Confidence is
    the engine's raw confidence (the product calibrates it; on the demo it is close).
    """
    out = []
    domain_of = dict(zip(catalog["idea_id"], catalog["domain"], strict=False))
    scored = seen[seen["status"] == "scored"]
    targets: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for r, i in hidden:
        targets[domain_of[i]].append((r, i))
    for (dom, dim), sub in scored.assign(domain=scored["idea_id"].map(domain_of)).groupby(
        ["domain", "dimension"]
    ):
        sc = scales[str(dim)]
        rows = list(zip(sub["idea_id"], sub["reviewer_id"], sub["score"].astype(int), strict=False))
        index = PanelIndex(rows, scale_min=sc.low, scale_max=sc.high, categories=sc.categories)
        examples: dict[int, list[int]] = defaultdict(list)
        for _, r, x in rows:
            examples[int(r)].append(int(x))
        for r, i in targets.get(str(dom), ()):
            pred = predict(
                index.panel(i, exclude_reviewer=r),
                examples[r][-K_EXAMPLES:],
                scale_min=sc.low,
                scale_max=sc.high,
                categories=sc.categories,
            )
            if pred is not None:
                out.append((r, i, dim, float(pred.score), float(pred.confidence)))
    return pd.DataFrame(out, columns=["reviewer_id", "idea_id", "dimension", "score", "confidence"])


def demo_source(
    seed: int, reads_per_idea: float
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Scale]]:
    from apps.demo.generator import DIMENSIONS, generate_demo

    # The demo's 300 ideas and 25 reviewers; the ratings target sets how many of each panel's
    # members read each idea (the shipped demo: 3,000 ratings, about 1.6 reads per idea).
    n_ideas = 300
    data = generate_demo(
        seed=seed, n_ideas=n_ideas, ratings_target=round(n_ideas * 6 * reads_per_idea)
    )
    patent_domain = {p["external_id"]: p["domain"] for p in data.patents}
    ideas = {
        row["external_id"]: (n, patent_domain[row["patent"]]) for n, row in enumerate(data.ideas)
    }
    users = {row["username"]: n for n, row in enumerate(data.reviewers)}
    r = pd.DataFrame(data.ratings)
    frame = pd.DataFrame(
        {
            "reviewer_id": r["reviewer"].map(users).astype(np.int64),
            "idea_id": r["idea"].map(lambda e: ideas[e][0]).astype(np.int64),
            "dimension": r["dimension"],
            "score": pd.to_numeric(r["score"], errors="coerce").astype(float),
        }
    )
    frame["status"] = np.where(frame["score"].notna(), "scored", "gated")
    catalog = pd.DataFrame([(n, dom) for n, dom in ideas.values()], columns=["idea_id", "domain"])
    cats = {"need_validity": [0], "market_size": [0]}
    return frame, catalog, scales_from({k: (lo, hi) for k, lo, hi in DIMENSIONS}, cats)


def db_source() -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Scale]]:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    django.setup()
    from apps.decisions.selectors import decision_inputs

    inputs = decision_inputs()
    frame = inputs.frame[inputs.frame["status"] != "declined"]
    return frame, inputs.catalog, inputs.scales


def shortlist(frame, catalog, scales, predictions=None) -> tuple[set[int], dict[int, IdeaState]]:
    """The top SHARE of each domain on the overall ranking, and every idea's state."""
    chosen: set[int] = set()
    states: dict[int, IdeaState] = {}
    reads = frame.groupby("idea_id")["reviewer_id"].nunique().to_dict()
    for dom, cat in catalog.groupby("domain"):
        ids = np.sort(cat["idea_id"].to_numpy(np.int64))
        sub = frame[frame["idea_id"].isin(ids)]
        pred = None
        if predictions is not None and len(predictions):
            pred = predictions[predictions["idea_id"].isin(ids)]
        _, ranked = fit_all(sub, scales=scales, ideas=ids, predictions=pred)
        if ALL not in ranked:
            continue
        rk = ranked[ALL]
        k = max(1, math.ceil(SHARE * len(ids)))
        order = np.argsort(-rk.estimate, kind="stable")
        chosen |= set(rk.ideas[order[:k]].tolist())
        for j, i in enumerate(rk.ideas.tolist()):
            states[i] = IdeaState(
                str(dom),
                float(rk.estimate[j]),
                float(rk.sd[j]),
                reads.get(i, 0),
                float(rk.judge_share[j]),
            )
    return chosen, states


def simulate(frame, catalog, scales, *, strategy, start, batch, seed, truth, policy, judges) -> int:
    rng = np.random.default_rng(seed)
    pairs = frame.groupby(["reviewer_id", "idea_id"]).indices  # pair -> row positions
    pool = sorted(pairs)
    order = rng.permutation(len(pool))
    revealed = {pool[int(j)] for j in order[:start]}
    by_reviewer_idea = defaultdict(set)
    for r, i in pool:
        by_reviewer_idea[i].add(r)
    load: dict[int, int] = defaultdict(int)
    for r, _ in revealed:
        load[r] += 1
    round_no = 0
    while True:
        rows = np.concatenate([pairs[p] for p in revealed]) if revealed else np.zeros(0, int)
        seen = frame.iloc[np.sort(rows)]
        hidden = [p for p in pool if p not in revealed]
        # Both strategies see the same model with the same judge predictions for the unread
        # pairs (as the product's board does); only the choice of the next reads differs.
        preds = judge_predictions(seen, hidden, catalog, scales) if judges else None
        chosen, states = shortlist(seen, catalog, scales, preds)
        if len(chosen & truth) / len(truth) >= TARGET or len(revealed) == len(pool):
            return len(revealed)
        if strategy == "balanced":
            reads = defaultdict(int)
            for _, i in revealed:
                reads[i] += 1
            picks: list[tuple[int, int]] = []
            used_ideas: set[int] = set()
            for i in sorted({i for _, i in hidden}, key=lambda i: (reads[i], i)):
                if len(picks) >= batch:
                    break
                options = [r for r in by_reviewer_idea[i] if (r, i) not in revealed]
                if options and i not in used_ideas:
                    r = min(options, key=lambda r: (load[r], r))
                    picks.append((r, i))
                    used_ideas.add(i)
        else:
            # One routing round as the product runs it (every reviewer's picks, a share of them
            # random), then the batch: that share of random picks, the rest by value.
            suggestions = route(
                ideas=states,
                candidates=hidden,
                open_load={},
                confidence=pair_confidence(preds) if preds is not None else None,
                one_read_var=one_read_var(states),
                policy=policy,
                seed=seed * 1000 + round_no,
            )
            n_random = round(policy.random_share * batch)
            randoms = [s for s in suggestions if s.kind == RANDOM]
            others = sorted(
                (s for s in suggestions if s.kind != RANDOM),
                key=lambda s: (s.kind != MIN_READS, -s.value),
            )
            chosen_pairs = randoms[:n_random] + others
            picks = []
            seen_ideas: set[int] = set()
            for s in chosen_pairs:
                if len(picks) < batch and s.idea_id not in seen_ideas:
                    picks.append((s.reviewer_id, s.idea_id))
                    seen_ideas.add(s.idea_id)
        if not picks:
            return len(revealed)
        for p in picks:
            revealed.add(p)
            load[p[0]] += 1
        round_no += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", choices=["demo", "db"], default="demo")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=25)
    parser.add_argument("--start", type=int, default=30)
    parser.add_argument(
        "--reads-per-idea",
        type=float,
        default=3.5,
        help="demo only: reads the generator makes per idea (its panels hold 3-4 reviewers)",
    )
    default = Policy()
    parser.add_argument("--random-share", type=float, default=default.random_share)
    parser.add_argument("--min-reads", type=int, default=default.min_reads)
    parser.add_argument(
        "--no-judges", action="store_true", help="fit on human reads only (no predictions)"
    )
    args = parser.parse_args()
    # The product's policy (apps/decisions/ranking/routing.py), its defaults unless overridden.
    policy = Policy(random_share=args.random_share, min_reads=args.min_reads, share=SHARE)
    routed, balanced = [], []
    for seed in range(args.seeds):
        frame, catalog, scales = (
            demo_source(seed, args.reads_per_idea) if args.source == "demo" else db_source()
        )
        truth, _ = shortlist(frame, catalog, scales)
        n_pairs = frame.groupby(["reviewer_id", "idea_id"]).ngroups
        kw = dict(
            start=args.start,
            batch=args.batch,
            seed=seed,
            truth=truth,
            policy=policy,
            judges=not args.no_judges,
        )
        r = simulate(frame, catalog, scales, strategy="routed", **kw)
        b = simulate(frame, catalog, scales, strategy="balanced", **kw)
        routed.append(r)
        balanced.append(b)
        print(
            f"seed {seed}: {len(catalog)} ideas, {n_pairs} reads available, shortlist "
            f"{len(truth)}; routed {r}, balanced {b}",
            flush=True,
        )
    r_med, b_med = float(np.median(routed)), float(np.median(balanced))
    saving = 100 * (b_med - r_med) / b_med if b_med else 0.0
    print(
        f"reads to {TARGET} shortlist overlap: routed {r_med:.0f}, balanced {b_med:.0f} "
        f"(saving {saving:.0f} %)"
    )


if __name__ == "__main__":
    main()
