"""Leave-one-out evaluation of offline judges on the demo data, pure Python (no database).

Shared by tests/judges/engine/test_offline_quality.py and bench/bench_offline_judge.py, so the
tests and the benchmark measure the same thing:

- ``demo_set(seed)``: the demo (apps.demo.generator.generate_demo, fixed date) as frames with
  integer ids, rendered texts (prompting.patent_text / idea_text) and rubric dimensions;
- ``select_all(...)``: the examples of every target of one (domain, dimension), the same ids
  ``apps.judges.engine.examples.select_examples`` returns (checked by a test), without its per-call
  pandas filtering;
- ``local_predictions(...)``: our judge (LocalBackend.judge_batch with stored vectors);
- ``reference_predictions(...)``: the REFERENCE judge of issue 7, for comparison only (never
  product code): TF-IDF (word 1-2-grams, English stop words, sublinear tf) fitted once on all
  items of the domain, each of the same k examples votes for its score with weight
  0.001 + cosine, the weighted majority wins (scores within REFERENCE_TIE_TOLERANCE of the
  heaviest are tied; the lowest tied score wins); no confidence. Deliberately its own code
  (scikit-learn directly, a Python loop per request), not the product's functions, so the
  comparison stays a real check;
- ``finals(...)``: seeds -> one prediction per target with postprocess.aggregate_seeds (the
  reference: majority over its seeds, no threshold);
- ``alpha_table(...)``: Krippendorff's ordinal alpha between final predictions and the
  reviewer's scores per (domain, dimension), units = (reviewer, idea), with coverage.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer

from apps.demo.generator import DIMENSIONS, generate_demo
from apps.disagreement.analysis.alpha import krippendorff_alpha
from apps.judges.backends.local import LocalBackend
from apps.judges.engine.calibration import cross_fit_confidence
from apps.judges.engine.item_text import fit_item_vectors
from apps.judges.engine.judgment import Example, JudgeRequest, RubricDimension
from apps.judges.engine.panel import PanelIndex, level_only
from apps.judges.engine.postprocess import aggregate_seeds
from apps.judges.engine.prompting import idea_text, patent_text

SEEDS = (0, 1, 2)
REFERENCE_TIE_TOLERANCE = 1e-6
DEMO_NOW = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class DemoSet:
    ideas: pd.DataFrame  # idea_id, patent_id, domain, patent_text, idea_text
    ratings: pd.DataFrame  # the example pool columns: rating_id, idea_id, patent_id, ...
    dimensions: dict[str, RubricDimension]

    @property
    def domains(self) -> list[str]:
        return sorted(self.ideas["domain"].unique())


def demo_set(seed: int = 0) -> DemoSet:
    demo = generate_demo(seed=seed, now=DEMO_NOW)
    patent_id = {p["external_id"]: n for n, p in enumerate(demo.patents)}
    patents = {p["external_id"]: p for p in demo.patents}
    ideas = pd.DataFrame(
        [
            {
                "idea_id": n,
                "external_id": x["external_id"],
                "patent_id": patent_id[x["patent"]],
                "domain": patents[x["patent"]]["domain"],
                "patent_text": patent_text(
                    patents[x["patent"]]["title"],
                    patents[x["patent"]]["abstract"],
                    patents[x["patent"]]["claims"],
                ),
                "idea_text": idea_text(
                    x["title"], x["description"], x["implementation"], x["differentiation"]
                ),
            }
            for n, x in enumerate(demo.ideas)
        ]
    )
    by_external = dict(zip(ideas["external_id"], ideas["idea_id"], strict=True))
    reviewer = {r["username"]: n for n, r in enumerate(demo.reviewers)}
    rows = []
    for n, r in enumerate(demo.ratings):
        if r["score"] is None:
            continue
        idea = ideas.iloc[by_external[r["idea"]]]
        rows.append(
            {
                "rating_id": n + 1,
                "idea_id": int(idea["idea_id"]),
                "patent_id": int(idea["patent_id"]),
                "reviewer_id": reviewer[r["reviewer"]],
                "domain": idea["domain"],
                "dimension": r["dimension"],
                "score": int(r["score"]),
            }
        )
    dimensions = {
        key: RubricDimension(
            key=key,
            name=key.replace("_", " "),
            description="",
            scale_min=lo,
            scale_max=hi,
            categories=(0,) if lo == 0 else (),
        )
        for key, lo, hi in DIMENSIONS
    }
    return DemoSet(ideas=ideas, ratings=pd.DataFrame(rows), dimensions=dimensions)


def domain_vectors(data: DemoSet) -> dict[int, sparse.csr_matrix]:
    """What apps.judges.vectors stores: one fit per domain over all its items (sparse rows)."""
    vectors: dict[int, sparse.csr_matrix] = {}
    for domain in data.domains:
        part = data.ideas[data.ideas["domain"] == domain]
        rows = fit_item_vectors(list(zip(part["patent_text"], part["idea_text"], strict=True)))
        vectors.update((int(i), rows[n]) for n, i in enumerate(part["idea_id"]))
    return vectors


def _priority(seed: int, rating_id: int) -> int:
    digest = hashlib.sha256(f"{int(seed)}:{int(rating_id)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def select_all(pool: pd.DataFrame, *, kind: str, k: int, seed: int) -> list[list[int]]:
    """Example rating ids for every row of ``pool`` (one domain and dimension) as the target."""
    records = list(
        pool[["rating_id", "idea_id", "patent_id", "reviewer_id"]].itertuples(
            index=False, name=None
        )
    )
    ranked = sorted(records, key=lambda r: (_priority(seed, r[0]), r[0]))
    by_reviewer: dict[int, list[tuple]] = {}
    for r in ranked:
        by_reviewer.setdefault(r[3], []).append(r)
    out = []
    for _, idea, patent, reviewer in records:
        candidates = by_reviewer[reviewer] if kind == "personalized" else ranked
        chosen: list[int] = []
        for rid, e_idea, e_patent, e_reviewer in candidates:
            if len(chosen) == k:
                break
            if e_patent == patent or e_idea == idea:
                continue
            if kind == "aggregate" and e_reviewer == reviewer:
                continue
            chosen.append(rid)
        out.append(chosen)
    return out


def _cells(data: DemoSet, dimensions: list[str] | None):
    for domain in data.domains:
        for key in dimensions or list(data.dimensions):
            pool = data.ratings[
                (data.ratings["domain"] == domain) & (data.ratings["dimension"] == key)
            ].reset_index(drop=True)
            if not pool.empty:
                yield domain, key, pool


def build_requests(
    data: DemoSet,
    *,
    kind: str,
    k: int,
    seed: int,
    dimensions: list[str] | None = None,
    panel: bool = False,
) -> tuple[list[JudgeRequest], pd.DataFrame]:
    """Every scored rating as a target: its requests and a frame of targets (truth). With
    ``panel``, each request carries the other reviewers' scores on its idea (engine.panel), as
    production runs do; the target reviewer's are left out."""
    texts = data.ideas.set_index("idea_id")[["patent_text", "idea_text"]]
    patent_of = dict(zip(texts.index, texts["patent_text"], strict=True))
    idea_of = dict(zip(texts.index, texts["idea_text"], strict=True))
    requests: list[JudgeRequest] = []
    frames = []
    for _domain, key, pool in _cells(data, dimensions):
        rating = pool.set_index("rating_id")
        d = data.dimensions[key]
        index = PanelIndex(
            pool[["idea_id", "reviewer_id", "score"]].itertuples(index=False, name=None),
            scale_min=d.scale_min,
            scale_max=d.scale_max,
            categories=d.categories,
        )
        for target, example_ids in zip(
            pool.itertuples(index=False),
            select_all(pool, kind=kind, k=k, seed=seed),
            strict=True,
        ):
            examples = tuple(
                Example(
                    item_id=int(rid),
                    patent_text=patent_of[int(rating.at[rid, "idea_id"])],
                    idea_text=idea_of[int(rating.at[rid, "idea_id"])],
                    score=int(rating.at[rid, "score"]),
                    idea_id=int(rating.at[rid, "idea_id"]),
                )
                for rid in example_ids
            )
            requests.append(
                JudgeRequest(
                    dimension=data.dimensions[key],
                    examples=examples,
                    patent_text=patent_of[target.idea_id],
                    idea_text=idea_of[target.idea_id],
                    seed=seed,
                    idea_id=int(target.idea_id),
                    panel=(
                        index.panel(int(target.idea_id), exclude_reviewer=int(target.reviewer_id))
                        if panel
                        else ()
                    ),
                )
            )
        frames.append(pool.assign(kind=kind, k=k, seed=seed))
    return requests, pd.concat(frames, ignore_index=True)


def local_predictions(
    data: DemoSet,
    vectors: dict[int, sparse.csr_matrix],
    *,
    kind: str,
    k: int,
    seeds: tuple[int, ...] = SEEDS,
    dimensions: list[str] | None = None,
    panel: bool = False,
) -> pd.DataFrame:
    """Per-seed predictions of our local judge: targets + pred, raw_confidence, reason, signal
    and base (the level-only baseline: the examples' mean, rounded)."""
    backend = LocalBackend(vectors=vectors)
    frames = []
    for seed in seeds:
        requests, targets = build_requests(
            data, kind=kind, k=k, seed=seed, dimensions=dimensions, panel=panel
        )
        replies = backend.judge_batch(requests)
        frames.append(
            targets.assign(
                pred=[r.score for r in replies],
                raw_confidence=[r.confidence for r in replies],
                reason=[r.reason for r in replies],
                signal=[r.signal for r in replies],
                base=[level_only([e.score for e in q.examples]) for q in requests],
            )
        )
    return pd.concat(frames, ignore_index=True)


def reference_predictions(
    data: DemoSet,
    *,
    kind: str,
    k: int,
    seeds: tuple[int, ...] = SEEDS,
    dimensions: list[str] | None = None,
) -> pd.DataFrame:
    """Per-seed predictions of the reference judge (module docstring)."""
    index: dict[int, tuple[str, int]] = {}
    grams: dict[str, np.ndarray] = {}
    for domain in data.domains:
        part = data.ideas[data.ideas["domain"] == domain]
        texts = [f"{p}\n{i}" for p, i in zip(part["patent_text"], part["idea_text"], strict=True)]
        matrix = TfidfVectorizer(
            ngram_range=(1, 2), stop_words="english", sublinear_tf=True
        ).fit_transform(texts)
        grams[domain] = (matrix @ matrix.T).toarray()
        for row, idea in enumerate(part["idea_id"].astype(int)):
            index[idea] = (domain, row)
    frames = []
    for seed in seeds:
        requests, targets = build_requests(data, kind=kind, k=k, seed=seed, dimensions=dimensions)
        preds = []
        for request in requests:
            domain, t = index[request.idea_id]
            votes: dict[int, float] = {}
            for e in request.examples:
                weight = 0.001 + max(0.0, float(grams[domain][t, index[e.idea_id][1]]))
                votes[e.score] = votes.get(e.score, 0.0) + weight
            heaviest = max(votes.values(), default=0.0)
            tied = [s for s, w in votes.items() if w >= heaviest - REFERENCE_TIE_TOLERANCE]
            preds.append(min(tied) if tied else None)
        frames.append(targets.assign(pred=preds, raw_confidence=None))
    return pd.concat(frames, ignore_index=True)


def calibrate(preds: pd.DataFrame) -> pd.DataFrame:
    """Adds ``confidence``: raw confidences cross-fitted by reviewer (calibration.py)."""
    correct = (preds["pred"] == preds["score"]).to_numpy()
    calibrated = cross_fit_confidence(
        preds["raw_confidence"].to_numpy(float), correct, preds["reviewer_id"].to_numpy()
    )
    return preds.assign(confidence=calibrated, correct=correct)


def finals(preds: pd.DataFrame, *, threshold: int | None) -> pd.DataFrame:
    """One final prediction per target; threshold None = keep every seed (the reference)."""
    rows = []
    conf_col = "confidence" if "confidence" in preds.columns else "raw_confidence"
    for key, group in preds.groupby(["domain", "dimension", "reviewer_id", "idea_id"]):
        if threshold is None:
            final = aggregate_seeds([(int(p), None) for p in group["pred"]], threshold=0)
        else:
            final = aggregate_seeds(
                [(int(p), int(c)) for p, c in zip(group["pred"], group[conf_col], strict=True)],
                threshold=threshold,
            )
        rows.append((*key, int(group["score"].iloc[0]), final.score, final.confidence))
    return pd.DataFrame(
        rows,
        columns=[
            "domain",
            "dimension",
            "reviewer_id",
            "idea_id",
            "score",
            "final",
            "final_confidence",
        ],
    )


def alpha_table(final: pd.DataFrame, data: DemoSet) -> pd.DataFrame:
    """Alpha (ordinal, over the dimension's scale) and coverage per (domain, dimension)."""
    rows = []
    for (domain, key), group in final.groupby(["domain", "dimension"]):
        d = data.dimensions[key]
        pred = group["final"].to_numpy(dtype=float)
        reliability = np.vstack([group["score"].to_numpy(dtype=float), pred])
        alpha = float(
            krippendorff_alpha(
                reliability, level="ordinal", values=list(range(d.scale_min, d.scale_max + 1))
            )
        )
        rows.append(
            {
                "domain": domain,
                "dimension": key,
                "alpha": alpha,
                "coverage": float(np.mean(~np.isnan(pred))),
                "n": len(group),
            }
        )
    return pd.DataFrame(rows).set_index(["domain", "dimension"])
