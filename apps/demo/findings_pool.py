"""The demo's findings: what reviewers' rationales say, drawn from per-idea pools of points.

The truth the generator plants (exposed on DemoData for tests):
- every idea has a pool of findings: 3-7 of its own plus the 0-3 findings its patent shares with
  all its ideas (for example a weakness of the patent's technology);
- a finding is a (topic, concern) pair, written in one of several paraphrases that share the
  topic's and the concern's words; within one idea's pool topics and concerns are all distinct,
  so two findings of one idea never read alike;
- detection follows a power law: the finding of rank r in the idea's pool is raised by a reviewer
  who writes rationales on the idea with probability P_MAX * r^-ALPHA (independently per
  reviewer), so a few findings are raised by nearly everyone and the tail by few;
- a reviewer who raises none of them still states the pool's most common one (a rationale
  always says something); the findings a reviewer raises are spread
  over their rationales for the idea, and a rationale left without one repeats one of the
  reviewer's findings in other words (the same finding, not a new one).

Drawn from its own random stream (seeded from the demo seed), so the scores, ratings, assignments
and dates of the demo are exactly those of the generator without findings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

P_MAX = 0.75
ALPHA = 0.9
OWN_FINDINGS = (3, 7)
SHARED_FINDINGS = (0, 3)

TOPICS = [
    "onboarding workflow",
    "pricing model",
    "sensor calibration",
    "data pipeline",
    "sales channel",
    "regulatory pathway",
    "supply chain",
    "user interface",
    "training dataset",
    "field maintenance",
    "hardware footprint",
    "customer support",
    "integration layer",
    "security model",
    "manufacturing yield",
    "licensing terms",
    "deployment timeline",
    "reporting dashboard",
    "pilot customers",
    "energy consumption",
]
CONCERNS = [
    "hidden integration costs",
    "slow certification",
    "vendor lock-in",
    "weak differentiation from incumbents",
    "unclear ownership of results",
    "privacy exposure",
    "staff retraining burden",
    "seasonal demand swings",
    "fragile accuracy outside the lab",
    "long procurement cycles",
    "thin margins at scale",
    "dependence on one supplier",
    "poor interoperability with legacy systems",
    "heavy upfront capital",
    "patent expiry risk",
    "liability for wrong outputs",
    "scarce specialist talent",
    "noisy real-world inputs",
    "export control limits",
    "low willingness to pay",
    "unproven durability",
    "complex installation",
    "auditability gaps",
    "latency under peak load",
]
# Paraphrases differ in their function words only, as reviewers restating a point do; the
# point itself is carried by the topic's and the concern's words.
PHRASINGS = [
    "{Topic}: {concern}.",
    "The {topic} has {concern}.",
    "{Concern} in the {topic}.",
    "For the {topic}, {concern}.",
    "There is {concern} with the {topic}.",
    "{Concern}, as far as the {topic} goes.",
]


def finding_key(topic: str, concern: str) -> str:
    return f"{topic} / {concern}"


def phrase(rng: np.random.Generator, key: str) -> str:
    topic, concern = key.split(" / ")
    template = PHRASINGS[int(rng.integers(len(PHRASINGS)))]
    return template.format(
        topic=topic,
        concern=concern,
        Topic=topic[:1].upper() + topic[1:],
        Concern=concern[:1].upper() + concern[1:],
    )


def _distinct_pairs(rng: np.random.Generator, n: int, taken: list[str]) -> list[str]:
    """n findings whose topics and concerns differ from each other and from `taken`."""
    used_t = {k.split(" / ")[0] for k in taken}
    used_c = {k.split(" / ")[1] for k in taken}
    topics = [t for t in rng.permutation(TOPICS) if t not in used_t]
    concerns = [c for c in rng.permutation(CONCERNS) if c not in used_c]
    return [finding_key(str(t), str(c)) for t, c in zip(topics[:n], concerns[:n], strict=False)]


@dataclass
class Pool:
    keys: list[str]
    probabilities: list[float]


def build_pools(rng: np.random.Generator, idea_patents: list[str]) -> list[Pool]:
    """One pool per idea (in the order given), with the patent's shared findings in each."""
    shared: dict[str, list[str]] = {}
    for patent in dict.fromkeys(idea_patents):
        lo, hi = SHARED_FINDINGS
        shared[patent] = _distinct_pairs(rng, int(rng.integers(lo, hi + 1)), [])
    pools = []
    for patent in idea_patents:
        lo, hi = OWN_FINDINGS
        own = _distinct_pairs(rng, int(rng.integers(lo, hi + 1)), shared[patent])
        keys = [*shared[patent], *own]
        order = rng.permutation(len(keys))  # a shared finding may sit anywhere in the ranking
        keys = [keys[int(i)] for i in order]
        probs = [P_MAX * (rank + 1) ** -ALPHA for rank in range(len(keys))]
        pools.append(Pool(keys=keys, probabilities=probs))
    return pools


def reviewer_rationales(
    rng: np.random.Generator, pool: Pool, dimensions: list[str]
) -> tuple[dict[str, str], list[str]]:
    """Texts for one reviewer's rationales on one idea, and the findings they raise."""
    if not dimensions:
        return {}, []
    p = np.asarray(pool.probabilities)
    raised = [k for k, hit in zip(pool.keys, rng.random(len(p)) < p, strict=True) if hit]
    if not raised:
        raised = [pool.keys[0]]
    order = [raised[int(i)] for i in rng.permutation(len(raised))]
    per_dim: dict[str, list[str]] = {d: [] for d in dimensions}
    for i, key in enumerate(order):
        per_dim[dimensions[i % len(dimensions)]].append(key)
    texts = {}
    for d in dimensions:
        keys = per_dim[d] or [order[int(rng.integers(len(order)))]]
        texts[d] = " ".join(phrase(rng, k) for k in keys)
    return texts, raised
