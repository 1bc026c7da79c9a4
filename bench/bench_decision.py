"""Benchmark: is the manager's shortlist right? Decide measured against the demo's truth.

    .venv/bin/python bench/bench_decision.py              # 20 seeds (the documented figures)
    .venv/bin/python bench/bench_decision.py --seeds 3 --budget 300   # a quick look
    .venv/bin/python bench/bench_decision.py --starts none            # part 1 only (a minute)

The demo generator (apps/demo/generator.py) knows what the board only estimates: each idea's
latent quality per dimension. The truth of an idea is that quality averaged over the six
dimensions (``DemoData.truth``); the true shortlist of a domain is the top 10 % of ALL its
ideas by that truth (read or not). Any read the bench adds is answered by the generator's own
perception model (``DemoData.oracle``), so a simulated reviewer grades an idea as the demo's
reviewers would.

Two parts, per seed (the demo as shipped: 300 ideas, 25 reviewers, seed 0..N-1):

1. The board on the shipped reads (the decision a manager makes today), against baselines a
   manager could compute alone: the mean of each reviewer's z-scores and the plain mean of
   rescaled scores (a gate counts as the scale's floor in both). On the ideas someone read:
   the overlap of the top 10 % with the true top 10 % of the read ideas, and Spearman with the
   truth; on all ideas: overlap with the true top 10 % of the domain. Boards: people's reads
   only, the product's (people + the panel judge's predictions for every unread pair of a read
   idea, as the prediction runs make them + the domain text model where its check passes).
   The 90 % intervals' coverage of the truth (target 85-95 %), with the truth put in the units
   of the board's standing (relative to the domain's average idea, each dimension in SDs of
   the domain's ideas: what an overall estimate states), and beside it against the truth as
   the generator states it (over every domain at once), "(raw truth)".
2. Reads added in batches by the product's routing (ranking/routing.py), by the balanced
   assignment (fewest reads first, as assignment_bulk_balanced) and at random, from the
   shipped reads and from a sparser start (a random half of them). Routing runs with the
   prediction path on (the panel judge predicts every unread pair of a read idea after each
   batch; routing weighs its confidence) and off; the board gives those predictions no weight,
   so the balanced and random picks, which never look at them, are the same either way.
   After each batch the board is fitted and its top 10 % (the page's default order,
   the lower bound) compared with the true top 10 % of all ideas, per domain (the mean over the
   domains is reported). A table by reads spent, then the reads each strategy needed to reach
   0.8 (median over the seeds; a seed that never reaches it counts as the budget + 1 batch).

bench/bench_routing.py (which graded routing against the model's own full-data fit, so a bias
of the model could not show) is folded in here. No database; one BLAS thread.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

from apps.decisions.ranking import model as ranking_model  # noqa: E402
from apps.decisions.ranking.board import scales_from  # noqa: E402
from apps.decisions.ranking.cut import top_n_probability  # noqa: E402
from apps.decisions.ranking.domain import fit_domain  # noqa: E402
from apps.decisions.ranking.model import ALL, Scale  # noqa: E402
from apps.decisions.ranking.routing import (  # noqa: E402
    MIN_READS,
    RANDOM,
    IdeaState,
    Policy,
    one_read_var,
    pair_confidence,
    route,
)
from apps.demo.generator import DIMENSIONS, generate_demo  # noqa: E402
from apps.judges.engine.item_text import fit_item_vectors  # noqa: E402
from apps.judges.engine.panel import PanelIndex, predict  # noqa: E402
from apps.judges.engine.prompting import idea_text, patent_text  # noqa: E402

TARGET = 0.8
SHARE = 0.10
K_EXAMPLES = 8  # examples per personalized panel prediction (the judges' default k)
NOW = datetime(2026, 1, 1, tzinfo=UTC)
STRATEGIES = ("routed", "balanced", "random")
CATEGORIES = {"need_validity": [0], "market_size": [0]}


@dataclass
class World:
    """One seed's demo: the ideas, who may read what, every answer the oracle gives, the truth."""

    seed: int
    catalog: pd.DataFrame  # idea_id, domain
    scales: dict[str, Scale]
    truth: np.ndarray  # by idea_id
    # The truth in the board's units (what its intervals are for): per domain and dimension,
    # the latent quality less the domain's mean, over its sd; then the mean over dimensions.
    standing: np.ndarray
    shipped: list[tuple[int, int]]  # (reviewer_id, idea_id) the demo has
    candidates: list[tuple[int, int]]  # every (reviewer, idea of one of their domains)
    answers: pd.DataFrame  # the rating frame of every candidate pair (oracle), by pair
    rows_of: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)
    vectors: dict[str, tuple[np.ndarray, object]] = field(default_factory=dict)


def build_world(seed: int) -> World:
    data = generate_demo(seed=seed, now=NOW)
    assert data.oracle is not None
    pdom = {p["external_id"]: p["domain"] for p in data.patents}
    ideas = {row["external_id"]: n for n, row in enumerate(data.ideas)}
    domain = [pdom[row["patent"]] for row in data.ideas]
    users = {row["username"]: n for n, row in enumerate(data.reviewers)}
    doms = {users[r["username"]]: r["domains"].split(";") for r in data.reviewers}
    truth_map = data.truth()
    truth = np.array([truth_map[row["external_id"]] for row in data.ideas])
    shipped = sorted({(users[r["reviewer"]], ideas[r["idea"]]) for r in data.ratings})
    candidates = [(r, i) for r, ds in doms.items() for i in range(len(domain)) if domain[i] in ds]
    names = {n: u for u, n in users.items()}
    ext = {n: e for e, n in ideas.items()}
    rows = []
    for r, i in candidates:
        for dim, score in data.oracle.rating(names[r], ext[i]).items():
            rows.append((r, names[r], i, dim, score))
    answers = pd.DataFrame(rows, columns=["reviewer_id", "reviewer", "idea_id", "dimension", "s"])
    answers["score"] = pd.to_numeric(answers["s"], errors="coerce").astype(float)
    answers["status"] = np.where(answers["score"].notna(), "scored", "gated")
    answers = answers.drop(columns="s")
    catalog = pd.DataFrame({"idea_id": np.arange(len(domain)), "domain": domain})
    scales = scales_from({k: (lo, hi) for k, lo, hi in DIMENSIONS}, CATEGORIES)
    standing = board_units(data.latent, [row["external_id"] for row in data.ideas], domain)
    world = World(seed, catalog, scales, truth, standing, shipped, candidates, answers)
    world.rows_of = {
        (int(r), int(i)): ix
        for (r, i), ix in answers.groupby(["reviewer_id", "idea_id"]).indices.items()
    }
    patents = {p["external_id"]: p for p in data.patents}
    for dom, cat in catalog.groupby("domain"):
        ids = cat["idea_id"].to_numpy(np.int64)
        texts = []
        for i in ids:
            idea = data.ideas[int(i)]
            p = patents[idea["patent"]]
            texts.append(
                (
                    patent_text(p["title"], p["abstract"], p["claims"]),
                    idea_text(
                        idea["title"],
                        idea["description"],
                        idea["implementation"],
                        idea["differentiation"],
                    ),
                )
            )
        # The idea alone: each patent is shared by 2-3 ideas, so its text says little about
        # which of them is better (what the domain measurement of item text parts picks).
        world.vectors[str(dom)] = (ids, fit_item_vectors(texts, "idea"))
    return world


def board_units(latent: dict, ideas: list[str], domain: list[str]) -> np.ndarray:
    """Each idea's truth as the board states a standing: relative to its domain's average
    idea, in SDs of the domain's ideas per dimension (ranking/model.py: the overall ranking is
    the mean over the dimensions of quality / tau, with the domain's prior mean at 0)."""
    q = np.array([[latent[e][d] for d in sorted(latent[ideas[0]])] for e in ideas])
    dom = np.array(domain)
    out = np.zeros(len(ideas))
    for d in np.unique(dom):
        m = dom == d
        out[m] = ((q[m] - q[m].mean(axis=0)) / q[m].std(axis=0)).mean(axis=1)
    return out


def seen_frame(world: World, pairs) -> pd.DataFrame:
    if not pairs:
        return world.answers.iloc[:0]
    ix = np.concatenate([world.rows_of[p] for p in pairs])
    return world.answers.iloc[np.sort(ix)]


def panel_predictions(world: World, seen: pd.DataFrame, read: set) -> pd.DataFrame:
    """The offline panel judge's predictions for every unread pair of a read idea, from the
    reads so far (apps/judges/engine/panel.py, personalized on the reviewer's latest reads), as
    the product's prediction runs make them. Ideas nobody read get none here."""
    out = []
    domain_of = world.catalog["domain"].to_numpy()
    scored = seen[seen["status"] == "scored"]
    read_ideas = {i for _, i in read}
    targets: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for r, i in world.candidates:
        if (r, i) not in read and i in read_ideas:
            targets[str(domain_of[i])].append((r, i))
    sdom = domain_of[scored["idea_id"].to_numpy()]
    for (dom, dim), sub in scored.assign(domain=sdom).groupby(["domain", "dimension"]):
        sc = world.scales[str(dim)]
        rows = list(zip(sub["idea_id"], sub["reviewer_id"], sub["score"].astype(int), strict=True))
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
                out.append((r, i, dim, float(pred.score), float(pred.confidence), "panel"))
    return pd.DataFrame(
        out, columns=["reviewer_id", "idea_id", "dimension", "score", "confidence", "signal"]
    )


@dataclass
class Board:
    estimate: np.ndarray  # by idea_id
    sd: np.ndarray
    n_reads: np.ndarray
    judge_share: np.ndarray

    @property
    def low(self) -> np.ndarray:
        return self.estimate - 1.6448536269514722 * self.sd


def fit_board(world: World, seen: pd.DataFrame, preds, *, text: bool) -> Board:
    n = len(world.catalog)
    est, sd, js = np.zeros(n), np.zeros(n), np.zeros(n)
    reads = np.bincount(
        seen.drop_duplicates(["reviewer_id", "idea_id"])["idea_id"].to_numpy(np.int64),
        minlength=n,
    )
    for dom, cat in world.catalog.groupby("domain"):
        ids = np.sort(cat["idea_id"].to_numpy(np.int64))
        sub = seen[seen["idea_id"].isin(ids)]
        p = preds[preds["idea_id"].isin(ids)] if preds is not None and len(preds) else None
        vec = world.vectors[str(dom)] if text else None
        fitted = fit_domain(sub, scales=world.scales, ideas=ids, predictions=p, vectors=vec)
        rk = fitted.rankings[ALL]
        est[rk.ideas], sd[rk.ideas], js[rk.ideas] = rk.estimate, rk.sd, rk.judge_share
    return Board(est, sd, reads, js)


def z_mean(world: World, seen: pd.DataFrame) -> np.ndarray:
    """The mean of each reviewer's z-scores (per reviewer and dimension; a gate is the floor)."""
    return _baseline(world, seen, z=True)


def plain_mean(world: World, seen: pd.DataFrame) -> np.ndarray:
    """The plain mean of rescaled scores, (score - floor) / width; a gate is the floor."""
    return _baseline(world, seen, z=False)


def _baseline(world: World, seen: pd.DataFrame, *, z: bool) -> np.ndarray:
    n = len(world.catalog)
    parts = []
    for dim, sc in world.scales.items():
        sub = seen[seen["dimension"] == dim]
        score = sub["score"].to_numpy(float)
        cats = np.isin(score, list(sc.categories))
        x = np.where(sub["status"].to_numpy() == "gated", 0.0, (score - sc.floor) / sc.width)
        keep = ~cats & np.isfinite(x)
        d = pd.DataFrame(
            {
                "r": sub["reviewer_id"].to_numpy()[keep],
                "i": sub["idea_id"].to_numpy()[keep],
                "x": x[keep],
            }
        )
        if z:
            g = d.groupby("r")["x"]
            sdv = g.transform("std").fillna(0.0).to_numpy()
            d["x"] = (d["x"] - g.transform("mean")) / np.where(sdv > 0, sdv, 1.0)
        else:
            d["x"] = (d["x"] - d["x"].mean()) / max(d["x"].std(), 1e-9)
        parts.append(d)
    allp = pd.concat(parts)
    m = allp.groupby("i")["x"].mean()
    out = np.full(n, np.nan)
    out[m.index.to_numpy(np.int64)] = m.to_numpy()
    return out


def top(values: np.ndarray, ids: np.ndarray, k: int, tiebreak: np.ndarray | None = None):
    order = np.lexsort(
        (ids, -(tiebreak[ids] if tiebreak is not None else np.zeros(len(ids))), -values[ids])
    )
    return set(ids[order[:k]].tolist())


def scores(world: World, key: np.ndarray, *, read_only: np.ndarray | None = None, tiebreak=None):
    """(overlap with the true top 10 %, Spearman with the truth), means over the domains."""
    ov, sp = [], []
    for _, cat in world.catalog.groupby("domain"):
        ids = np.sort(cat["idea_id"].to_numpy(np.int64))
        if read_only is not None:
            ids = ids[read_only[ids]]
        if len(ids) < 5:
            continue
        k = max(1, math.ceil(SHARE * len(ids)))
        truth_top = top(world.truth, ids, k)
        ov.append(len(top(key, ids, k, tiebreak) & truth_top) / k)
        sp.append(spearmanr(key[ids], world.truth[ids]).statistic)
    return float(np.mean(ov)), float(np.mean(sp))


def coverage(
    world: World,
    b: Board,
    mask: np.ndarray | None = None,
    *,
    truth: np.ndarray | None = None,
    extra_sd: np.ndarray | None = None,
) -> float:
    """Share of ideas whose truth in the board's units (or ``truth``: another reference, with
    its own sd ``extra_sd`` added to the interval's) lies inside their 90 % interval."""
    t = world.standing if truth is None else truth
    sd = b.sd if extra_sd is None else np.sqrt(b.sd**2 + extra_sd**2)
    lo, hi = b.estimate - 1.6448536269514722 * sd, b.estimate + 1.6448536269514722 * sd
    inside = (t >= lo) & (t <= hi)
    return float(inside[mask].mean() if mask is not None else inside.mean())


def reads_buckets(n_reads: np.ndarray) -> dict[str, np.ndarray]:
    """Ideas by the number of people who read them."""
    return {
        "0 reads": n_reads == 0,
        "1-2 reads": (n_reads >= 1) & (n_reads <= 2),
        "3 reads": n_reads == 3,
        "4+ reads": n_reads >= 4,
    }


def part_one(world: World, *, judges: bool) -> dict[str, float]:
    seen = seen_frame(world, world.shipped)
    read = np.bincount(seen["idea_id"].to_numpy(np.int64), minlength=len(world.catalog)) > 0
    out: dict[str, float] = {}
    preds = panel_predictions(world, seen, set(world.shipped)) if judges else None
    boards = {
        "people": fit_board(world, seen, None, text=False),
        "people+text": fit_board(world, seen, None, text=True),
    }
    if judges:
        boards["product"] = fit_board(world, seen, preds, text=True)
    for name, b in boards.items():
        out[f"{name} read overlap"], out[f"{name} read spearman"] = scores(
            world, b.low, read_only=read, tiebreak=b.estimate
        )
        out[f"{name} read overlap (estimate)"], _ = scores(world, b.estimate, read_only=read)
        out[f"{name} all overlap"], out[f"{name} all spearman"] = scores(
            world, b.low, tiebreak=b.estimate
        )
        out[f"{name} all overlap (estimate)"], _ = scores(world, b.estimate)
        out[f"{name} coverage"] = coverage(world, b)
        out[f"{name} coverage read"] = coverage(world, b, read)
        out[f"{name} coverage unread"] = coverage(world, b, ~read)
        # Against the truth as the generator states it (the mean latent over all domains,
        # in SDs of every idea): a different origin and unit from the board's standing.
        out[f"{name} coverage read (raw truth)"] = coverage(world, b, read, truth=world.truth)
    # Coverage by reads per idea, of the truth and of the reviewers' consensus: the board
    # fitted on every read the oracle can give (every reviewer of the domain reads every
    # idea), what reads can measure at best; its own sd is added to the interval's.
    product = boards["product" if judges else "people+text"]
    consensus = fit_board(world, seen_frame(world, world.candidates), None, text=False)
    for label, mask in reads_buckets(product.n_reads).items():
        out[f"coverage, {label}"] = coverage(world, product, mask) if mask.any() else math.nan
        out[f"coverage of consensus, {label}"] = (
            coverage(world, product, mask, truth=consensus.estimate, extra_sd=consensus.sd)
            if mask.any()
            else math.nan
        )
    # The same board with the severities and the origin taken as known and no grade
    # resolution floor (the intervals before issue 25's calibration), for comparison.
    flags = ranking_model.REVIEWER_UNCERTAINTY, ranking_model.GRADE_RESOLUTION
    ranking_model.REVIEWER_UNCERTAINTY = ranking_model.GRADE_RESOLUTION = False
    try:
        before = fit_board(world, seen, preds, text=True)
    finally:
        ranking_model.REVIEWER_UNCERTAINTY, ranking_model.GRADE_RESOLUTION = flags
    out["before: coverage read"] = coverage(world, before, read)
    out["before: read overlap"], out["before: read spearman"] = scores(
        world, before.low, read_only=read, tiebreak=before.estimate
    )
    for name, fn in (("z-score mean", z_mean), ("plain mean", plain_mean)):
        v = fn(world, seen)
        out[f"{name} read overlap"], out[f"{name} read spearman"] = scores(world, v, read_only=read)
    out["read share"] = float(read.mean())
    return out


def balanced_picks(world: World, read: set, hidden: list, batch: int, load) -> list:
    reads: dict[int, int] = defaultdict(int)
    for _, i in read:
        reads[i] += 1
    by_idea: dict[int, list[int]] = defaultdict(list)
    for r, i in hidden:
        by_idea[i].append(r)
    picks = []
    for i in sorted(by_idea, key=lambda i: (reads[i], i)):
        if len(picks) >= batch:
            break
        r = min(by_idea[i], key=lambda r: (load[r], r))
        picks.append((r, i))
    return picks


def routed_picks(world, board: Board, hidden, preds, batch, policy, seed) -> list:
    domain_of = world.catalog["domain"].to_numpy()
    # As the product: each idea carries the board's P(top N) for its domain's shortlist size
    # (here the true shortlist's, ceil(10 % of the domain)), the figure its reason quotes and
    # its value is computed from.
    p_top, top_n = np.zeros(len(domain_of)), np.zeros(len(domain_of), dtype=int)
    for _, cat in world.catalog.groupby("domain"):
        ids = cat["idea_id"].to_numpy(np.int64)
        k = max(1, math.ceil(SHARE * len(ids)))
        p_top[ids] = top_n_probability(board.estimate[ids], board.sd[ids], k)
        top_n[ids] = k
    states = {
        int(i): IdeaState(
            str(domain_of[i]),
            float(board.estimate[i]),
            float(board.sd[i]),
            int(board.n_reads[i]),
            float(board.judge_share[i]),
            p_top=float(p_top[i]),
            top_n=int(top_n[i]),
        )
        for i in world.catalog["idea_id"]
    }
    suggestions = route(
        ideas=states,
        candidates=hidden,
        open_load={},
        confidence=pair_confidence(preds) if preds is not None else None,
        one_read_var=one_read_var(states),
        policy=policy,
        seed=seed,
    )
    n_random = round(policy.random_share * batch)
    randoms = [s for s in suggestions if s.kind == RANDOM]
    others = sorted(
        (s for s in suggestions if s.kind != RANDOM),
        key=lambda s: (s.kind != MIN_READS, -s.value),
    )
    picks, used = [], set()
    for s in randoms[:n_random] + others:
        if len(picks) < batch and s.idea_id not in used:
            picks.append((s.reviewer_id, s.idea_id))
            used.add(s.idea_id)
    return picks


def part_two(world: World, *, start: str, strategy: str, judges: bool, batch: int, budget: int):
    """Overlap with the true top 10 % of all ideas after each batch: [(reads added, overlap)]."""
    rng = np.random.default_rng([world.seed, 7])
    read = list(world.shipped)
    if start == "sparse":
        keep = rng.permutation(len(read))[: len(read) // 2]
        read = [read[int(j)] for j in sorted(keep)]
    read_set = set(read)
    load: dict[int, int] = defaultdict(int)
    policy = Policy(share=SHARE)
    curve = []
    added = 0
    round_no = 0
    while True:
        seen = seen_frame(world, sorted(read_set))
        preds = panel_predictions(world, seen, read_set) if judges else None
        board = fit_board(world, seen, preds, text=True)
        ov, _ = scores(world, board.low, tiebreak=board.estimate)
        curve.append((added, ov))
        if added >= budget:
            return curve
        hidden = [p for p in world.candidates if p not in read_set]
        if not hidden:
            return curve
        if strategy == "balanced":
            picks = balanced_picks(world, read_set, hidden, batch, load)
        elif strategy == "random":
            picks = [hidden[int(j)] for j in rng.permutation(len(hidden))[:batch]]
        else:
            picks = routed_picks(
                world, board, hidden, preds, batch, policy, world.seed * 1000 + round_no
            )
        for p in picks:
            read_set.add(p)
            load[p[0]] += 1
        added += len(picks)
        round_no += 1


def reads_to(curve, target: float, cap: int) -> int:
    for added, ov in curve:
        if ov >= target:
            return added
    return cap


# (start, strategy, prediction path). The board gives the panel judge's predictions no weight
# (they only echo the reads), so balanced and random picks are the same with the path on or
# off; only routing uses them (its value of a read weighs the reviewer's judge confidence).
RUNS = (
    ("shipped", "routed", True),
    ("shipped", "routed", False),
    ("shipped", "balanced", False),
    ("shipped", "random", False),
    ("sparse", "routed", False),
    ("sparse", "balanced", False),
    ("sparse", "random", False),
)
# The columns of each start's table: the product's routing (prediction path on where run),
# then the others.
TABLES = {
    "shipped": [("routed", True), ("routed", False), ("balanced", False), ("random", False)],
    "sparse": [("routed", False), ("balanced", False), ("random", False)],
}


def one_seed(args: tuple[int, int, int, tuple[str, ...]]) -> tuple[dict[str, float], dict]:
    """Both parts for one seed: part 1's figures, part 2's curves per (start, strategy, path)."""
    seed, batch, budget, starts = args
    world = build_world(seed)
    first = part_one(world, judges=True)
    curves = {
        (start, strategy, judges): part_two(
            world, start=start, strategy=strategy, judges=judges, batch=batch, budget=budget
        )
        for start, strategy, judges in RUNS
        if start in starts
    }
    return first, curves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--batch", type=int, default=50, help="reads added per round")
    parser.add_argument("--budget", type=int, default=500, help="reads added at most per run")
    parser.add_argument("--jobs", type=int, default=2, help="seeds run in parallel")
    parser.add_argument(
        "--starts",
        default="shipped,sparse",
        help="part 2's starting reads: shipped, sparse (a random half of them), both, or "
        "none (part 1 only)",
    )
    args = parser.parse_args()
    starts = tuple(x for x in args.starts.split(",") if x in TABLES)
    t0 = time.perf_counter()
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    work = [(seed, args.batch, args.budget, starts) for seed in range(args.seeds)]
    if args.jobs > 1:
        with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
            results = pool.map(one_seed, work)
    else:
        results = [one_seed(w) for w in work]
    n = len(results)
    print(f"\n1. The board on the shipped demo's reads, {n} seeds: median [min-max]")
    print("   (read: among the ideas someone read; all: all ideas of the domain; means over")
    print("   the 3 domains; overlap: of the top 10 % with the true top 10 %; order: the")
    print("   page's default, the lower bound, unless '(estimate)')")
    for k in results[0][0]:
        v = np.array([r[0][k] for r in results])
        v = v[np.isfinite(v)]
        if not len(v):
            continue
        q1, q3 = np.percentile(v, [25, 75])
        print(f"  {k:42s} {np.median(v):.3f} [IQR {q1:.2f}-{q3:.2f}; {v.min():.2f}-{v.max():.2f}]")
    cap = args.budget + args.batch
    headline: dict[str, float] = {}
    for start, columns in TABLES.items():
        if start not in starts:
            continue
        print(
            f"\n2. From the {start} reads ({'a random half of ' if start == 'sparse' else ''}"
            f"the demo's): overlap of the board's top 10 % with the true top 10 % of all "
            f"ideas, median of {n} seeds"
        )
        names = [f"{s}{' +pred' if j else ''}" for s, j in columns]
        print("  reads added  " + "  ".join(f"{name:>14s}" for name in names))
        curves = {c: [r[1][(start, *c)] for r in results] for c in columns}
        for j, (added, _) in enumerate(curves[columns[0]][0]):
            cells = [np.median([cv[j][1] for cv in curves[c] if j < len(cv)]) for c in columns]
            print(f"  {added:>11d}  " + "  ".join(f"{x:14.3f}" for x in cells))
        need = {c: [reads_to(cv, TARGET, cap) for cv in curves[c]] for c in columns}
        med = {c: float(np.median(v)) for c, v in need.items()}
        routed, balanced = need[columns[0]], need[("balanced", False)]
        wins = sum(r < b for r, b in zip(routed, balanced, strict=True))
        losses = sum(r > b for r, b in zip(routed, balanced, strict=True))
        print(
            "  reads to 0.8 (median [IQR]; per seed min-max): "
            + ", ".join(
                f"{name} {med[c]:.0f} [{np.percentile(need[c], 25):.0f}-"
                f"{np.percentile(need[c], 75):.0f}] ({min(need[c])}-{max(need[c])})"
                for name, c in zip(names, columns, strict=True)
            )
            + f"; {names[0]} fewer than balanced on {wins} seeds, more on {losses}"
            + f" ({cap} = not reached within the budget)",
            flush=True,
        )
        for name, c in zip(names, columns, strict=True):
            missed = sum(x >= cap for x in need[c])
            if missed:
                state = (
                    "CENSORED: the median itself is the budget + 1 batch, the true figure is higher"
                    if med[c] >= cap
                    else "the median is reached; those seeds count as the budget + 1 batch"
                )
                print(
                    f"  {name}: 0.8 not reached within {args.budget} reads on {missed} of "
                    f"{n} seeds ({state})"
                )
        if not headline:
            headline = {
                "routed": med[columns[0]],
                "balanced": med[("balanced", False)],
                "random": med[("random", False)],
            }
    print(f"\n{n} seeds in {time.perf_counter() - t0:.0f} s with {args.jobs} processes")
    if not headline:  # part 1 only: no reads added, no line for them
        return
    r, b, x = headline["routed"], headline["balanced"], headline["random"]
    saving = 100 * (b - r) / b if b else 0.0
    print(
        f"reads to 0.8 true top-10 % overlap: routed {r:.0f}, balanced {b:.0f}, "
        f"random {x:.0f} (saving {saving:.0f} % vs balanced)"
    )


if __name__ == "__main__":
    main()
