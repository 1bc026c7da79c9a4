"""Judge throughput through the openai backend against the fake OpenAI-compatible server.

    .venv/bin/python bench/bench_judge_throughput.py [--n 60] [--latency 0.3] [--k 9]
                                                     [--concurrency 1 4 8]

For each concurrency C: N judgments (one dimension, one example set of k examples, N different
targets) are run with judge_many through the real `openai` client over HTTP to tests/fake_llm.py,
which answers after a fixed latency. Prints wall time against the ideal N x latency / C (ratio
1.00 = no overhead), and how much of the prompt is the shared, cacheable prefix: by characters
(prompting.shared_prefix_share) and by tokens the server reported as cached
(usage.prompt_tokens_details.cached_tokens / prompt_tokens).
No Django needed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.judges.backends import (  # noqa: E402
    Example,
    JudgeRequest,
    RubricDimension,
    get_backend,
    judge_many,
)
from apps.judges.engine.prompting import build_messages, idea_text, patent_text, shared_prefix_share  # noqa: E402
from tests.fake_llm import FakeLLM  # noqa: E402

DIMENSION = RubricDimension(
    key="innovativeness",
    name="Innovativeness",
    description="How new is this use of the technology?",
    scale_min=1,
    scale_max=5,
    levels={
        1: "A well-known application.",
        2: "Similar technology is already used this way, though not fully explored.",
        3: "A use I had not thought of, but not exciting.",
        4: "Surprising and strongly original.",
        5: "Clearly innovative; it could open a new field.",
    },
)
TOPICS = [
    "speech denoising",
    "contract parsing",
    "battery analytics",
    "crop imaging",
    "invoice matching",
    "medical records",
    "chat summaries",
    "code review",
]


def _patent(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return patent_text(
        f"Method and system for {topic} ({i})",
        f"A method for {topic} in which signals are collected, normalised and scored by a "
        f"trained model; variant {i} adds calibration against reference data. " * 3,
        f"1. A method for {topic} comprising receiving input data, extracting features and "
        "outputting a ranked result. 2. The method of claim 1 wherein the model is retrained. " * 2,
    )


def _idea(i: int) -> str:
    topic = TOPICS[(i * 3) % len(TOPICS)]
    return idea_text(
        f"{topic.title()} product {i}",
        f"A subscription service that applies {topic} to the daily work of mid-sized "
        f"companies, variant {i}.",
        "Built as a cloud API with a web dashboard and connectors to common business tools.",
        "Cheaper and faster to deploy than consulting-heavy alternatives.",
    )


def build_requests(n: int, k: int) -> list[JudgeRequest]:
    examples = tuple(
        Example(
            item_id=1000 + j,
            patent_text=_patent(500 + j),
            idea_text=_idea(500 + j),
            score=1 + j % 5,
        )
        for j in range(k)
    )
    return [
        JudgeRequest(
            dimension=DIMENSION,
            examples=examples,
            patent_text=_patent(i),
            idea_text=_idea(i),
            seed=0,
            model="bench-model",
        )
        for i in range(n)
    ]


def run(n: int, latency: float, k: int, concurrency: int) -> dict[str, float]:
    requests = build_requests(n, k)
    with FakeLLM(latency=latency) as fake:
        backend = get_backend(
            "openai",
            base_url=fake.base_url,
            api_key="bench",
            model="bench-model",
            timeout=30,
            max_retries=2,
        )
        started = time.perf_counter()
        replies = judge_many(backend, requests, concurrency=concurrency)
        wall = time.perf_counter() - started
    prompt = sum(r.prompt_tokens for r in replies)
    cached = sum(r.cached_prompt_tokens for r in replies)
    ideal = n * latency / concurrency
    return {
        "wall": wall,
        "ideal": ideal,
        "ratio": wall / ideal,
        "failed": sum(1 for r in replies if r.error),
        "prefix_chars": statistics.fmean(shared_prefix_share(build_messages(r)) for r in requests),
        "cached_tokens": cached / prompt if prompt else 0.0,
        "prompt_tokens_per_call": prompt / n,
        "mean_latency_ms": statistics.fmean(r.latency_ms for r in replies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--k", type=int, default=9)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    args = parser.parse_args()
    print(f"N={args.n} judgments, fake latency {args.latency * 1000:.0f} ms, k={args.k} examples")
    print(
        f"{'C':>3} {'wall s':>8} {'ideal s':>8} {'ratio':>6} {'failed':>6} "
        f"{'prefix chars':>12} {'cached tok':>10} {'tok/call':>8} {'ms/call':>8}"
    )
    for c in args.concurrency:
        r = run(args.n, args.latency, args.k, c)
        print(
            f"{c:>3} {r['wall']:>8.2f} {r['ideal']:>8.2f} {r['ratio']:>6.2f} "
            f"{r['failed']:>6.0f} {r['prefix_chars']:>12.1%} {r['cached_tokens']:>10.1%} "
            f"{r['prompt_tokens_per_call']:>8.0f} {r['mean_latency_ms']:>8.0f}"
        )


if __name__ == "__main__":
    main()
