"""A small study of panel evidence in LLM prompts, on the real local server (Gemma 3 270M).

    .venv/bin/python bench/bench_llm_panel_evidence.py [--n 30] [--k 2] [--domain cs]
        [--dimension innovativeness] [--kind personalized] [--threads N]

The same targets are judged twice through the openai backend against bin/llm-server's model:
the paper's prompt, and the prompt with panel evidence (the other reviewers' scores on the
target, each mapped onto the target reviewer's scale; apps.judges.engine.prompting.panel_block).
Targets: --n demo ratings of one domain and dimension (seeded draw) whose idea was scored by at
least one other reviewer; examples: the demo study's own selection (tests/judges/offline_eval.py
select_all, --kind, k = --k); one seed. Printed per variant: usable replies, pooled ordinal alpha
against the reviewers' scores, per-reviewer alpha where a reviewer has 4+ targets, exact
agreement, mean absolute error; next to the offline panel judge and the level-only baseline on
the same targets. No database: the demo is generated in memory. A small sample: read the
figures as a direction, not a measurement of the model.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.disagreement.analysis.alpha import krippendorff_alpha  # noqa: E402
from apps.judges.backends import get_backend, judge_many  # noqa: E402
from apps.judges.backends.local import LocalBackend  # noqa: E402
from apps.judges.engine.judgment import Example, JudgeRequest  # noqa: E402
from apps.judges.engine.panel import PanelIndex, level_only  # noqa: E402
from apps.judges.engine.prompting import build_messages  # noqa: E402
from apps.llm_server.server import LocalLLMServer  # noqa: E402
from tests.judges.offline_eval import demo_set, select_all  # noqa: E402


def _alpha(truth: list[float], pred: list[float | None], values: list[float]) -> float | None:
    pairs = [(t, p) for t, p in zip(truth, pred, strict=True) if p is not None]
    if len(pairs) < 2:
        return None
    data = np.array(pairs, dtype=float).T
    a = krippendorff_alpha(data, "ordinal", values)
    return None if np.isnan(a) else float(a)


def figures(
    truth: list[int], pred: list[int | None], reviewers: list[int], values: list[float]
) -> dict[str, object]:
    kept = [(t, p, r) for t, p, r in zip(truth, pred, reviewers, strict=True) if p is not None]
    per = []
    for r in sorted({r for _, _, r in kept}):
        mine = [(t, p) for t, p, rr in kept if rr == r]
        if len(mine) >= 4:
            a = _alpha([t for t, _ in mine], [p for _, p in mine], values)
            if a is not None:
                per.append(a)
    return {
        "usable": f"{len(kept)}/{len(truth)}",
        "pooled": _alpha([float(t) for t in truth], [p for p in pred], values),
        "per_reviewer": float(np.mean(per)) if per else None,
        "reviewers": len(per),
        "exact": sum(t == p for t, p, _ in kept) / len(kept) if kept else None,
        "mae": sum(abs(t - p) for t, p, _ in kept) / len(kept) if kept else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--domain", default="cs")
    parser.add_argument("--dimension", default="innovativeness")
    parser.add_argument("--kind", choices=["personalized", "aggregate"], default="personalized")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    data = demo_set(0)
    dim = data.dimensions[args.dimension]
    ratings = data.ratings
    pool = ratings[
        (ratings["domain"] == args.domain) & (ratings["dimension"] == args.dimension)
    ].reset_index(drop=True)
    index = PanelIndex(
        pool[["idea_id", "reviewer_id", "score"]].itertuples(index=False, name=None),
        scale_min=dim.scale_min,
        scale_max=dim.scale_max,
        categories=dim.categories,
    )
    examples = select_all(pool, kind=args.kind, k=args.k, seed=args.seed)
    texts = data.ideas.set_index("idea_id")
    by_rating = pool.set_index("rating_id")
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(pool))
    chosen = []
    for n in order:
        row = pool.iloc[int(n)]
        panel = index.panel(int(row["idea_id"]), exclude_reviewer=int(row["reviewer_id"]))
        if panel and len(examples[int(n)]) == args.k:
            chosen.append((int(n), panel))
        if len(chosen) == args.n:
            break

    def request(n: int, panel: tuple) -> JudgeRequest:
        row = pool.iloc[n]
        return JudgeRequest(
            dimension=dim,
            examples=tuple(
                Example(
                    item_id=int(rid),
                    patent_text=texts.loc[by_rating.loc[rid, "idea_id"], "patent_text"],
                    idea_text=texts.loc[by_rating.loc[rid, "idea_id"], "idea_text"],
                    score=int(by_rating.loc[rid, "score"]),
                    idea_id=int(by_rating.loc[rid, "idea_id"]),
                )
                for rid in examples[n]
            ),
            patent_text=texts.loc[row["idea_id"], "patent_text"],
            idea_text=texts.loc[row["idea_id"], "idea_text"],
            idea_id=int(row["idea_id"]),
            panel=panel,
        )

    plain = [request(n, ()) for n, _ in chosen]
    evidence = [request(n, panel) for n, panel in chosen]
    truth = [int(pool.iloc[n]["score"]) for n, _ in chosen]
    reviewers = [int(pool.iloc[n]["reviewer_id"]) for n, _ in chosen]
    values = [float(v) for v in range(dim.scale_min, dim.scale_max + 1)]
    chars = [sum(len(m["content"]) for m in build_messages(r)) for r in (plain[0], evidence[0])]
    print(
        f"{len(chosen)} targets, {args.domain} / {args.dimension} ({dim.scale_min}-"
        f"{dim.scale_max}), {args.kind} k = {args.k}, panel sizes "
        f"{min(len(p) for _, p in chosen)}-{max(len(p) for _, p in chosen)}; prompt "
        f"{chars[0]} -> {chars[1]} characters"
    )
    rows: dict[str, list[int | None]] = {}
    server = LocalLLMServer(n_threads=args.threads).start()
    try:
        backend = get_backend("openai", base_url=server.base_url, model=server.model)
        for name, batch in (("LLM, paper's prompt", plain), ("LLM + panel evidence", evidence)):
            started = time.perf_counter()
            replies = judge_many(backend, batch, concurrency=1)
            rows[name] = [r.score if r.ok else None for r in replies]
            print(f"  {name}: {time.perf_counter() - started:.0f} s")
    finally:
        server.stop()
    rows["offline panel judge"] = [r.score for r in LocalBackend().judge_batch(evidence)]
    rows["level-only baseline"] = [level_only([e.score for e in r.examples]) for r in plain]
    print("| variant | usable | pooled alpha | per-reviewer alpha (reviewers) | exact | MAE |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, pred in rows.items():
        f = figures(truth, pred, reviewers, values)

        def fmt(x: object) -> str:
            return "n/a" if x is None else f"{float(x):.3f}"  # type: ignore[arg-type]

        print(
            f"| {name} | {f['usable']} | {fmt(f['pooled'])} | {fmt(f['per_reviewer'])} "
            f"({f['reviewers']}) | {fmt(f['exact'])} | {fmt(f['mae'])} |"
        )


if __name__ == "__main__":
    main()
