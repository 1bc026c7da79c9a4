"""Realistic demo data with a planted disagreement structure. Pure Python (numpy), no Django.

`generate_demo()` returns rows in the import formats (docs/formats.md): patents, ideas, reviewers
and long-format ratings, plus the pending assignments that fill each demo reviewer's queue.

How the scores come about (this is what the analytics and judges are tested against):
- every idea has a latent quality per dimension: a general factor shared by all dimensions, plus
  the hidden effects of the words it is built from (its application, its moat, its business model,
  the system that generated it, whether it stretches the patent, whether it is vague), plus noise;
  so the text partly predicts the quality and a judge that reads the text can learn it;
- business and technical reviewers see need validity and market size through partly different
  eyes (a shared per-background view of each idea), and business reviewers are stricter there;
- consumer-framed ideas get the "not B2B" category (0) on need and market from most reviewers;
- each reviewer perceives an idea's quality with a little personal noise and turns it into a grade
  through their own grade curve per dimension (the shares of ideas they give each grade): where
  the curve sits is their strictness, how wide it is their scale use (some compress to the middle,
  some use the whole scale). On the planted dimensions (innovativeness, competitive advantage,
  need validity, market size) the curves differ a lot, so raw scores disagree (low Krippendorff
  alpha) while the reviewers' orders of the ideas, and so their above-median sets, overlap
  (higher Jaccard), as in the paper's Table 3. Specificity and technical validity share a curve
  (closer to consensus);
- reviewers work in small panels per domain, so reviewer pairs co-rate enough ideas (>= 10) for
  coarse agreement and each reviewer builds enough history for a personalized judge.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import cast

import numpy as np

from apps.demo import findings_pool as FP
from apps.demo import vocabulary as V

# key, scale min, scale max (the PBIG rubric, apps/screening/rubrics/pbig.yaml).
DIMENSIONS: list[tuple[str, int, int]] = [
    ("specificity", 1, 4),
    ("technical_validity", 1, 4),
    ("innovativeness", 1, 5),
    ("competitive_advantage", 1, 4),
    ("need_validity", 0, 3),
    ("market_size", 0, 3),
]
DIMENSION_KEYS = [d[0] for d in DIMENSIONS]
# Short names of the latent qualities, in the same order as DIMENSIONS.
LATENT = ["spec", "tech", "innov", "comp", "need", "market"]
# Dimensions on which reviewers' scales are planted to differ strongly.
PLANTED = ["innovativeness", "competitive_advantage", "need_validity", "market_size"]

# An idea's latent quality = GENERAL_WEIGHT * a general factor (shared by its dimensions) +
# TEXT_WEIGHT * the hidden effects of its words + IDEA_NOISE * dimension-specific noise.
GENERAL_WEIGHT = 0.4
TEXT_WEIGHT = 1.7
IDEA_NOISE = 0.4
# How a reviewer's perception of an idea varies around its latent quality (latent units).
NOISE = {
    "specificity": 0.3,
    "technical_validity": 0.3,
    "innovativeness": 0.15,
    "competitive_advantage": 0.15,
    "need_validity": 0.15,
    "market_size": 0.15,
}
# Weight of the per-background view on need validity and market size.
VIEW_WEIGHT = 0.2
# The consensus grade distributions (share of ideas per grade, lowest grade first) for the
# dimensions where reviewers roughly agree; "not B2B" (0) is outside these distributions.
CONSENSUS = {
    "specificity": [0.03, 0.05, 0.52, 0.40],
    "technical_validity": [0.04, 0.22, 0.44, 0.30],
}
# Where reviewers centre their grade curves: a personal strictness plus a per-dimension part.
CENTRE_PERSONA = 0.25
CENTRE_SD = 0.8
# Where business and technical reviewers' curves sit on need validity and market size: business
# reviewers are stricter (they know what budgets really pay for).
BACKGROUND_SHIFT = {"business": -0.35, "technical": 0.25}
# On those two dimensions the curves vary less within a background than across backgrounds.
CENTRE_SD_BY_BACKGROUND = 0.35
# Every planted curve keeps at least this share of ideas strictly above its median grade, and no
# grade holds more than MAX_GRADE_SHARE of the ideas.
ABOVE_MEDIAN_MIN = 0.2
MAX_GRADE_SHARE = 0.8
# Scale-use styles for the planted dimensions: the width of the reviewer's grade curve.
STYLES = {"compresses to the middle": 0.45, "moderate": 0.6, "uses the whole scale": 0.8}
SPECIFICITY_PASS_ABOVE = 2
# The second seed word of the findings' own random stream (issue 19).
FINDINGS_STREAM = 19
TECHNICAL_VALIDITY_PASS_ABOVE = 1


# The oracle's own random stream: with (seed, ORACLE_STREAM, reviewer, idea) as its key, the
# perception noise of a pair the demo did not rate (issue 25).
ORACLE_STREAM = 25


def _grade(perceived: float, population: np.ndarray, shares: list[float], lo: int, hi: int) -> int:
    """A perceived quality as a grade: the idea's percentile in the population, on the
    reviewer's own grade curve (``shares`` per grade)."""
    u = float(np.searchsorted(population, perceived)) / len(population)
    grade = int(np.searchsorted(np.cumsum(shares)[:-1], u))
    first = 1 if lo == 0 else lo  # 0 is the "not B2B" category, not a grade
    return min(first + grade, hi)


@dataclass
class Oracle:
    """The truth for benches: the rating reviewer R would give idea I, by the demo's own
    perception model (``generate_demo``'s ratings are made by ``perceived_rating``).

    A pair the demo rated answers with the draws the demo made for it, so it reproduces the
    demo's rating exactly; any other pair draws its perception noise (and its "not B2B" draw)
    from its own stream keyed by (seed, ORACLE_STREAM, reviewer, idea): the same answer every
    time, whatever else is asked, and the demo's own rows are untouched.
    """

    seed: int
    reviewers: dict[str, int]  # username -> the generator's person index
    backgrounds: list[str]
    grades: list[dict[str, list[float]]]  # per person: shares per grade per dimension
    ideas: dict[str, int]  # idea external_id -> index
    consumer: list[bool]
    perceive: dict[tuple[str, str], np.ndarray]  # (dimension, background view) -> per idea
    population: dict[tuple[str, str], np.ndarray]  # sorted perceptions of the population
    # (person, idea) -> (noise per dimension, the category draw or None): the demo's own draws.
    drawn: dict[tuple[int, int], tuple[list[float], float | None]]

    def draws(self, pi: int, ii: int) -> tuple[list[float], float | None]:
        if (pi, ii) in self.drawn:
            return self.drawn[(pi, ii)]
        rng = np.random.default_rng([self.seed, ORACLE_STREAM, pi, ii])
        noise = [float(x) for x in rng.normal(size=len(DIMENSIONS))]
        u = float(rng.random())
        return noise, (u if self.consumer[ii] else None)

    def perceived_rating(
        self, pi: int, ii: int, noise: list[float], draw: float | None
    ) -> dict[str, int | None]:
        """The grades, category answers and gates of person ``pi`` on idea ``ii`` given the
        draws (one standard normal per dimension, the category draw)."""
        background = self.backgrounds[pi]
        scores: dict[str, int | None] = {}
        for (dim, lo, hi), z in zip(DIMENSIONS, noise, strict=True):
            bg = background if dim in ("need_validity", "market_size") else ""
            perceived = self.perceive[(dim, bg)][ii] + NOISE[dim] * z
            scores[dim] = _grade(
                perceived, self.population[(dim, bg)], self.grades[pi][dim], lo, hi
            )
        if draw is not None:
            p_zero = 0.85 if background == "business" else 0.45
            if draw < p_zero:
                scores["need_validity"] = 0
                scores["market_size"] = 0
        # The staged screening gates, exactly as the rubric defines them (every dimension was
        # graded above, so none is None yet).
        if cast(int, scores["specificity"]) <= SPECIFICITY_PASS_ABOVE:
            for dim in DIMENSION_KEYS[1:]:
                scores[dim] = None
        elif cast(int, scores["technical_validity"]) <= TECHNICAL_VALIDITY_PASS_ABOVE:
            scores["innovativeness"] = None
            scores["competitive_advantage"] = None
        return scores

    def rating(self, reviewer: str, idea: str) -> dict[str, int | None]:
        """Per dimension the score ``reviewer`` would give ``idea`` (None: a gate closed the
        stage before it; 0 on need and market: the "not B2B" category)."""
        pi, ii = self.reviewers[reviewer], self.ideas[idea]
        return self.perceived_rating(pi, ii, *self.draws(pi, ii))

    def grade(self, reviewer: str, idea: str, dimension: str) -> int | None:
        return self.rating(reviewer, idea)[dimension]


@dataclass
class DemoData:
    """Rows ready to write as import files, plus what the generator planted (for tests)."""

    domains: list[dict[str, str]]
    patents: list[dict[str, str]]
    ideas: list[dict[str, str]]
    reviewers: list[dict[str, str]]
    ratings: list[dict[str, object]]
    # Ideas in a reviewer's domains that the reviewer has not rated: their demo queue.
    pending: list[dict[str, str]]
    # idea external_id -> latent quality per dimension key (before any reviewer's view).
    latent: dict[str, dict[str, float]] = field(default_factory=dict)
    # username -> {"style", "persona", "grades": {dimension: shares per grade}, "panels", "role"}.
    reviewer_traits: dict[str, dict] = field(default_factory=dict)
    # The findings truth (apps/demo/findings_pool.py): idea external_id -> {finding key: the
    # chance a reviewer writing rationales on it raises it}; the pool's size is the idea's true
    # number of findings. And idea -> username -> the finding keys that reviewer raised.
    findings_pool: dict[str, dict[str, float]] = field(default_factory=dict)
    findings_raised: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # The truth for benches: any reviewer's rating of any idea (``Oracle``).
    oracle: Oracle | None = None

    def truth(self) -> dict[str, float]:
        """Each idea's true standing: its latent quality averaged over the dimensions."""
        return {k: float(np.mean(list(v.values()))) for k, v in self.latent.items()}

    def counts(self) -> dict[str, int]:
        return {
            "domains": len(self.domains),
            "patents": len(self.patents),
            "ideas": len(self.ideas),
            "reviewers": len(self.reviewers),
            "ratings": len(self.ratings),
            "pending": len(self.pending),
        }


def _pick(rng: np.random.Generator, items: list):
    return items[int(rng.integers(len(items)))]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _a(noun_phrase: str) -> str:
    """The phrase with its indefinite article."""
    return ("an " if noun_phrase[:1].lower() in "aeiou" else "a ") + noun_phrase


def _join(parts: list[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


# --- Patents ----------------------------------------------------------------------------------

_PATENT_KIND = {
    "nlp": [
        "Method and system for",
        "System for",
        "Computer-implemented method for",
        "Apparatus and method for",
    ],
    "cs": [
        "Method and system for",
        "System for",
        "Computer-implemented method for",
        "Distributed system for",
    ],
    "materials": [
        "Composition and process for",
        "Method of producing",
        "Process for",
        "Material and method for",
    ],
}
_ABSTRACT_OPENERS = [
    "Disclosed is a {kind} that {does}{twist}.",
    "The invention provides a {kind} that {does}{twist}.",
    "A {kind} is described that {does}{twist}.",
    "Embodiments relate to a {kind} that {does}{twist}.",
]
_EXTRA_WHEREIN = {
    "nlp": [
        "the model is a transformer encoder with fewer than 400 million parameters",
        "the threshold is adjusted per document type from validation data",
        "the output is accompanied by a confidence value between 0 and 1",
        "the processing runs on a single commodity GPU",
        "intermediate results are cached and reused across requests",
    ],
    "cs": [
        "the model is retrained when the observed error exceeds a bound",
        "the processing is distributed over a plurality of worker nodes",
        "state is checkpointed to durable storage at configurable intervals",
        "the method runs within a container orchestrated by a cluster manager",
        "decisions are logged with the inputs used to make them",
    ],
    "materials": [
        "the reaction is carried out at a temperature between 60 and 180 degrees Celsius",
        "the particle size is between 5 and 50 micrometres",
        "the mass fraction of the active component is between 0.5 and 12 percent",
        "the product retains at least 90 percent of its initial performance after 500 cycles",
        "the process uses no halogenated solvent",
    ],
}


def _patent_text(rng, domain: str, tech: dict, twist: str) -> dict[str, str]:
    kind = "method" if domain != "materials" else _pick(rng, ["material", "process", "composition"])
    twist_clause = f", in particular {twist}" if rng.random() < 0.6 else ""
    opener = _pick(rng, _ABSTRACT_OPENERS).format(kind=kind, does=tech["does"], twist=twist_clause)
    steps = tech["steps"]
    k = min(len(steps), 3)
    embodiment = f"In one embodiment the {kind} comprises {_join(steps[:k])}."
    advantage = _pick(
        rng,
        [
            f"Compared with {tech['prior']}, the approach addresses {tech['benefit']}.",
            f"Existing solutions rely on {tech['prior']}; "
            f"the disclosed approach addresses {tech['benefit']}.",
            f"The approach addresses {tech['benefit']}, a known weakness of {tech['prior']}.",
        ],
    )
    gain = int(rng.integers(12, 61))
    result = _pick(
        rng,
        [
            f"Reported examples show an improvement of about {gain} percent "
            "over a reference configuration.",
            f"In the examples given, the key figure of merit improves by roughly {gain} percent.",
            "Several embodiments and test results are described.",
        ],
    )
    sentences = [opener, embodiment, advantage, result]
    if rng.random() < 0.4:
        sentences[1], sentences[2] = sentences[2], sentences[1]
    abstract = " ".join(sentences)

    subject = {
        "nlp": "A computer-implemented method",
        "cs": "A computer-implemented method",
        "materials": "A process",
    }[domain]
    claims = [
        f"1. {subject} for {tech['short']}, comprising: "
        + "; ".join(steps[:-1])
        + "; and "
        + steps[-1]
        + "."
    ]
    extras = list(_EXTRA_WHEREIN[domain])
    rng.shuffle(extras)
    for n, extra in enumerate(extras[: int(rng.integers(2, 4))], start=2):
        claims.append(
            f"{n}. The {'process' if domain == 'materials' else 'method'} of claim 1, "
            f"wherein {extra}."
        )
    n = len(claims) + 1
    if domain == "materials":
        claims.append(f"{n}. A product obtained by the process of any one of claims 1 to {n - 1}.")
    else:
        claims.append(
            f"{n}. A system comprising one or more processors and memory storing instructions "
            "that, "
            "when executed, cause the processors to perform the method of any one of "
            f"claims 1 to {n - 1}."
        )
    return {"abstract": abstract, "claims": "\n".join(claims)}


# --- Ideas ------------------------------------------------------------------------------------

_INTEGRATIONS = {
    "nlp": [
        "the customer's document management system",
        "Microsoft 365 and Google Workspace",
        "the ticketing system already in use",
        "the CRM",
        "the ERP's accounts-payable module",
    ],
    "cs": [
        "Kubernetes clusters",
        "OpenTelemetry collectors",
        "the CI pipeline",
        "the data warehouse",
        "existing cloud accounts",
    ],
    "materials": [
        "existing coating lines",
        "standard roll-to-roll equipment",
        "the plant's control system",
        "off-the-shelf fixed-bed vessels",
        "existing cell assembly lines",
    ],
}
_CLOSERS = [
    "closes that gap",
    "is designed around this weakness",
    "addresses the root of the problem",
]
_FIT_SENTENCES = {
    "nlp": [
        "It connects to {integration}, so {users} keep their current workflow.",
        "Deployment fits into {integration} with a short configuration step.",
    ],
    "cs": [
        "It plugs into {integration}, so {users} keep their current tooling.",
        "Deployment fits into {integration} with a short configuration step.",
    ],
    "materials": [
        "It is designed to run on {integration}, so {users} need no new production line.",
        "Manufacturing uses {integration} with modest process changes.",
    ],
}
_METRICS = {
    "nlp": [
        "handling time per document",
        "share of answers accepted without edits",
        "error rate against a hand-checked sample",
        "hours saved per week",
    ],
    "cs": [
        "p99 latency",
        "monthly infrastructure cost",
        "mean time to resolution",
        "defects found per thousand lines",
    ],
    "materials": [
        "cost per tonne",
        "service life in accelerated ageing tests",
        "energy use per unit of output",
        "yield against the incumbent material",
    ],
}


def _idea_text(
    rng,
    domain: str,
    brand: str,
    tech: dict,
    app: dict,
    moat: dict,
    bm: dict,
    vague: bool,
    consumer: str | None,
) -> dict[str, str]:
    short = tech["short"]
    product = app["product"]
    if " for " in product:
        title = _pick(rng, [f"{brand}: {product}", f"{brand}, {_a(product)} built on {short}"])
    else:
        title = _pick(
            rng,
            [
                f"{brand}: {product} for {app['industry']}",
                f"{brand}, {_a(product)} built on {short}",
                f"{brand} — {_cap(product)} for {app['users']}",
            ],
        )
    if vague:
        description = " ".join(
            [
                _pick(rng, V.VAGUE_OPENERS).format(industry=app["industry"], short=short),
                "It could help different teams save time and make better decisions.",
                "Many use cases are possible and the product can be adapted to each customer.",
            ]
            + ([f"It would be {consumer}."] if consumer else [])
        )
        implementation = _pick(
            rng,
            [
                "Implementation details would be worked out with early customers.",
                "The technology from the patent would be packaged into software or hardware "
                f"as needed, possibly with {_pick(rng, _INTEGRATIONS[domain])}.",
            ],
        )
        differentiation = f"It is innovative and {moat['text'].format(short=short)}."
    else:
        problem_first = rng.random() < 0.5
        who_forms = [f"{brand} is {_a(product)}, aimed at {app['users']} in {app['industry']}."]
        if " for " not in product:
            who_forms.append(f"{brand} is {_a(product)} for {app['users']} in {app['industry']}.")
        who = _pick(rng, who_forms)
        pain = _pick(
            rng,
            [
                f"Today {app['problem']}.",
                f"The problem: {app['problem']}.",
                f"In {app['industry']}, {app['problem']}.",
            ],
        )
        how = _pick(
            rng,
            [
                f"It applies {short} so that customers get {app['outcome']}.",
                f"Using {short}, it delivers {app['outcome']}.",
                f"The product turns the patent's {short} into {app['outcome']}.",
            ],
        )
        parts = [pain, who, how] if problem_first else [who, pain, how]
        if consumer:
            parts.append(f"It would be {consumer}.")
        else:
            parts.append(bm["text"] + ".")
        description = " ".join(parts)
        steps = tech["steps"]
        i = int(rng.integers(0, max(1, len(steps) - 2)))
        impl = [
            _pick(
                rng,
                [
                    f"The core is the patented approach of {steps[i]} and {steps[i + 1]}.",
                    f"Under the hood it relies on {steps[i]}, followed by {steps[i + 1]}.",
                    f"The first release implements the patent's steps of {steps[i]} "
                    f"and {steps[i + 1]}.",
                ],
            ),
            _pick(rng, _FIT_SENTENCES[domain]).format(
                integration=_pick(rng, _INTEGRATIONS[domain]), users=app["users"]
            ),
        ]
        if rng.random() < 0.7:
            n_sites = int(rng.integers(2, 6))
            weeks = int(rng.integers(6, 16))
            metric = _pick(rng, _METRICS[domain])
            impl.append(f"A {weeks}-week pilot at {n_sites} customer sites would measure {metric}.")
        implementation = " ".join(impl)
        differentiation = " ".join(
            [
                _pick(
                    rng,
                    [
                        f"Unlike {tech['prior']}, {brand} {_pick(rng, _CLOSERS)}.",
                        f"Current alternatives rely on {tech['prior']}.",
                    ],
                ),
                f"Its edge: {moat['text'].format(short=short)}.",
            ]
        )
    return {
        "title": title,
        "description": description,
        "implementation": implementation,
        "differentiation": differentiation,
    }


_RATIONALES = {
    "specificity": {
        "low": [
            "Hard to tell what is actually being sold.",
            "Reads like a pitch for a platform, not a product.",
            "I could not picture a concrete product here.",
        ],
        "mid": [
            "I can picture a product, though several variants are possible.",
            "Concrete enough, but the scope could be tighter.",
        ],
        "high": [
            "Very clear: one product, one buyer, one workflow.",
            "Concrete product with a clear user and deployment.",
        ],
    },
    "technical_validity": {
        "low": [
            "The patent does not really cover this use.",
            "I doubt the {short} transfers to this setting.",
        ],
        "mid": [
            "A prototype is plausible but the integration work is underestimated.",
            "Feasible in a lab; production is another story.",
        ],
        "high": [
            "The {short} fits this use well; a prototype is straightforward.",
            "Technically sound; this is what the patent was made for.",
        ],
    },
    "innovativeness": {
        "low": [
            "This is a well-known application.",
            "Incumbents already sell something close to this.",
        ],
        "mid": [
            "A sensible twist on an existing use.",
            "Not a use I had considered, but not surprising either.",
        ],
        "high": [
            "Surprising application of the {short}.",
            "Original angle; I have not seen this offered.",
        ],
    },
    "competitive_advantage": {
        "low": [
            "Easy to copy with off-the-shelf tools.",
            "Nothing here a competitor could not replicate quickly.",
        ],
        "mid": [
            "The technology matters, but the product itself is easy to imitate.",
            "Some moat, mostly from execution.",
        ],
        "high": [
            "The patent is essential and the data moat is real.",
            "Hard to imitate without licensing the patent.",
        ],
    },
    "need_validity": {
        "low": [
            "Nice to have; I do not see budget for it.",
            "The pain is real but small for {users}.",
        ],
        "mid": [
            "A clear return, mostly in cost savings.",
            "Buyers would see value, though mostly qualitative.",
        ],
        "high": [
            "Strong need: money and growth both at stake for {users}.",
            "This solves an expensive, recurring problem.",
        ],
        "zero": [
            "This is a consumer product, not B2B.",
            "Not a business-to-business offering as described.",
        ],
    },
    "market_size": {
        "low": ["Niche market.", "Only a handful of {industry} would buy this."],
        "mid": [
            "Many companies have the issue; adoption depends on budgets.",
            "Sizeable market, but long sales cycles.",
        ],
        "high": [
            "Nearly every company in the segment needs this.",
            "Broad market across industries.",
        ],
        "zero": ["Consumer product; no B2B market as framed.", "Not B2B."],
    },
}


def _rationale(rng, dim: str, score: int, lo: int, hi: int, ctx: dict[str, str]) -> str:
    if score == 0 and lo == 0:
        bucket = "zero"
    else:
        frac = (score - max(lo, 1)) / max(1, hi - max(lo, 1))
        bucket = "low" if frac < 0.34 else ("mid" if frac < 0.67 else "high")
    return _pick(rng, _RATIONALES[dim][bucket]).format(**ctx)


# --- Reviewers --------------------------------------------------------------------------------


def _reviewers(rng, n: int, domain_keys: list[str]) -> list[dict]:
    names: set[tuple[str, str]] = set()
    people: list[dict] = []
    n_business = int(round(n * 0.4))
    backgrounds = ["business"] * n_business + ["technical"] * (n - n_business)
    rng.shuffle(backgrounds)
    n_double = n // 4 if len(domain_keys) > 1 else 0
    for i in range(n):
        while True:
            first, last = _pick(rng, V.FIRST_NAMES), _pick(rng, V.LAST_NAMES)
            # (Name pairs run out only for thousands of reviewers; usernames stay unique anyway.)
            if (first, last) not in names or len(names) >= len(V.FIRST_NAMES) * len(V.LAST_NAMES):
                names.add((first, last))
                break
        username = (first[0] + last.replace(" ", "")).lower()
        username = username.translate(str.maketrans("áéíóúüöäçñ", "aeiouuoacn"))
        base, k = username, 2
        while any(p["username"] == username for p in people):
            username, k = f"{base}{k}", k + 1
        primary = domain_keys[i % len(domain_keys)]
        domains = [primary]
        if i < n_double:
            domains.append(domain_keys[(i + 1) % len(domain_keys)])
        bg = backgrounds[i]
        years = int(rng.integers(3, 26))
        role = (
            _pick(rng, V.TECHNICAL_ROLES[primary])
            if bg == "technical"
            else _pick(rng, V.BUSINESS_ROLES)
        )
        people.append(
            {
                "username": username,
                "first": first,
                "last": last,
                "background": bg,
                "domains": domains,
                "years": years,
                "role": role,
            }
        )
    return people


def _above_median_share(p: np.ndarray) -> float:
    """Share of a population strictly above its median grade, for grade shares `p`."""
    cum = np.cumsum(p)
    median = int(np.searchsorted(cum, 0.5))
    return float(1.0 - cum[median])


def _grade_distribution(rng, dim: str, style: str, persona: float, shift: float) -> list[float]:
    """The reviewer's shares of ideas per grade on one dimension (their strictness and scale use).

    Planted dimensions differ a lot between reviewers (where the mass sits, how wide it is) but
    every curve keeps 25-50% of ideas strictly above its own median grade, so reviewers who order
    ideas alike also pick similar strong ideas: raw scores disagree, above-median sets overlap.
    """
    lo, hi = next((lo, hi) for key, lo, hi in DIMENSIONS if key == dim)
    k = hi - (1 if lo == 0 else lo) + 1
    if dim in CONSENSUS:
        base = np.array(CONSENSUS[dim])
        p = base * np.exp(0.25 * rng.normal(size=k) + 0.1 * persona * np.arange(k))
        return [float(x) for x in p / p.sum()]
    idx = np.arange(k)
    width = STYLES[style]
    for _ in range(200):
        spread = CENTRE_SD if shift == 0 else CENTRE_SD_BY_BACKGROUND
        centre = (k - 1) * (0.5 + CENTRE_PERSONA * persona + spread * rng.normal() + shift)
        if width > 0:
            w = width * math.exp(0.15 * rng.normal())
            p = np.exp(-((idx - centre) ** 2) / (2 * w * w))
        else:  # bimodal: mostly the lowest and the highest grades
            tilt = 1.0 / (1.0 + math.exp(-(centre - (k - 1) / 2)))
            p = np.full(k, 0.08)
            p[0] += 1.0 - tilt
            p[-1] += tilt
        p = p / p.sum()
        if ABOVE_MEDIAN_MIN <= _above_median_share(p) <= 0.5 and p.max() < MAX_GRADE_SHARE:
            return [float(x) for x in p]
    return [1.0 / k] * k


# --- The generator ----------------------------------------------------------------------------


def generate_demo(
    *,
    seed: int = 0,
    n_domains: int = 3,
    n_patents: int = 120,
    n_ideas: int = 300,
    n_reviewers: int = 25,
    ratings_target: int = 3000,
    pending_per_reviewer: int = 4,
    now: datetime | None = None,
) -> DemoData:
    """Generate the demo data set; the same arguments always give the same rows.

    `now` anchors the rating dates (spread over the 60 days before it); it defaults to today's
    midnight UTC so runs on the same day agree to the byte.
    """
    if not 1 <= n_domains <= len(V.DOMAINS):
        raise ValueError(f"n_domains must be between 1 and {len(V.DOMAINS)}")
    if n_patents < n_domains or n_ideas < n_patents or n_reviewers < 1:
        raise ValueError(
            "need at least one patent per domain, one idea per patent and one reviewer"
        )
    rng = np.random.default_rng(seed)
    if now is None:
        today = datetime.now(UTC).date()
        now = datetime(today.year, today.month, today.day, tzinfo=UTC)
    domains = V.DOMAINS[:n_domains]
    domain_keys = [k for k, _ in domains]

    # Patents, spread evenly over the domains; technology x twist combinations keep titles distinct.
    patents: list[dict] = []
    patent_tech: dict[str, dict] = {}
    patent_domain: dict[str, str] = {}
    used_numbers: set[int] = set()
    per_domain = [
        n_patents // n_domains + (1 if i < n_patents % n_domains else 0) for i in range(n_domains)
    ]
    for (dkey, dname), count in zip(domains, per_domain, strict=True):
        techs = V.TECHNOLOGIES[dkey]
        combos = [(t, tw) for tw_i in range(4) for t in techs for tw in [t["twists"][tw_i]]]
        for j in range(count):
            tech, twist = combos[j % len(combos)]
            while True:
                number = int(rng.integers(10_100_000, 12_400_000))
                if number not in used_numbers:
                    used_numbers.add(number)
                    break
            ext = f"US{number}B{_pick(rng, ['1', '2', '2', '2'])}"
            title = f"{_pick(rng, _PATENT_KIND[dkey])} {tech['name']} {twist}"
            if j >= len(combos):
                title += f" (embodiment {j // len(combos) + 1})"
            text = _patent_text(rng, dkey, tech, twist)
            patents.append(
                {
                    "external_id": ext,
                    "domain": dkey,
                    "domain_name": dname,
                    "title": _cap(title),
                    "abstract": text["abstract"],
                    "claims": text["claims"],
                }
            )
            patent_tech[ext] = tech
            patent_domain[ext] = dkey

    # Ideas: 2-3 per patent (n_ideas / n_patents on average).
    base, extra = divmod(n_ideas, n_patents)
    per_patent = [base] * n_patents
    for i in rng.permutation(n_patents)[:extra]:
        per_patent[int(i)] += 1
    domain_apps: dict[str, list[str]] = {}
    for dkey in domain_keys:
        apps: list[str] = []
        for t in V.TECHNOLOGIES[dkey]:
            apps += [a for a in t["fits"] if a not in apps]
        domain_apps[dkey] = apps
    brands: set[str] = set()
    source_weights = np.array([0.26, 0.22, 0.22, 0.15, 0.15])
    ideas: list[dict] = []
    effects: list[dict[str, float]] = []
    contexts: list[dict[str, str]] = []
    consumer_flags: list[bool] = []
    idea_domain: list[str] = []
    seq = 0
    for p, count in zip(patents, per_patent, strict=True):
        tech = patent_tech[p["external_id"]]
        dkey = p["domain"]
        used_apps: list[str] = []
        for _ in range(count):
            seq += 1
            stretch = rng.random() < 0.22
            pool = [
                a for a in (domain_apps[dkey] if stretch else tech["fits"]) if a not in used_apps
            ]
            if stretch:
                pool = [a for a in pool if a not in tech["fits"]] or pool
            if not pool:
                pool = [a for a in domain_apps[dkey] if a not in used_apps] or domain_apps[dkey]
            app_key = _pick(rng, pool)
            stretch = app_key not in tech["fits"]
            used_apps.append(app_key)
            app = V.APPLICATIONS[app_key]
            moat = _pick(rng, V.MOATS)
            bm = _pick(rng, V.BUSINESS_MODELS)
            source = V.SOURCES[int(rng.choice(len(V.SOURCES), p=source_weights))]
            vague = rng.random() < (0.22 if source["name"] == "single-prompt baseline" else 0.05)
            consumer = _pick(rng, V.CONSUMER_FRAMINGS) if rng.random() < 0.05 else None
            while True:
                brand = _pick(rng, V.BRAND_PREFIXES) + _pick(rng, V.BRAND_SUFFIXES)
                if brand not in brands or len(brands) > 550:
                    brands.add(brand)
                    break
            text = _idea_text(rng, dkey, brand, tech, app, moat, bm, vague, consumer)
            ideas.append(
                {
                    "external_id": f"IDEA-{dkey.upper()}-{seq:04d}",
                    "patent": p["external_id"],
                    **text,
                    "source": source["name"],
                }
            )
            eff = {k: 0.0 for k in LATENT}
            for src in (app["effects"], moat["effects"], bm["effects"], source["effects"]):
                for k, v in src.items():
                    eff[k] += v
            if stretch:
                eff["tech"] -= 1.0
                eff["innov"] += 0.35
                eff["spec"] -= 0.1
            if vague:
                eff["spec"] -= 2.2
                eff["tech"] -= 0.3
                eff["comp"] -= 0.3
            effects.append(eff)
            contexts.append(
                {"short": tech["short"], "users": app["users"], "industry": app["industry"]}
            )
            consumer_flags.append(consumer is not None)
            idea_domain.append(dkey)

    # Latent quality: general factor + text effects + dimension-specific noise, standardised.
    n = len(ideas)
    general = rng.normal(size=n)
    lat = np.zeros((n, len(LATENT)))
    for j, k in enumerate(LATENT):
        e = np.array([eff[k] for eff in effects])
        lat[:, j] = GENERAL_WEIGHT * general + TEXT_WEIGHT * e + IDEA_NOISE * rng.normal(size=n)
    centred = (lat - lat.mean(axis=0)) / lat.std(axis=0)
    # Vague ideas keep their large specificity deficit after standardising (they are outliers).
    latent = {
        ideas[i]["external_id"]: {
            DIMENSION_KEYS[j]: float(centred[i, j]) for j in range(len(LATENT))
        }
        for i in range(n)
    }
    # Per-background views of need and market: each background shares a view of each idea.
    view = {bg: rng.normal(size=(n, 2)) for bg in ("technical", "business")}

    # Reviewers and their traits: per dimension, how they spread ideas over the grades.
    people = _reviewers(rng, n_reviewers, domain_keys)
    traits: dict[str, dict] = {}
    for person in people:
        persona = float(rng.normal())  # a generally lenient (+) or strict (-) person
        style = _pick(rng, list(STYLES))
        grades: dict[str, list[float]] = {}
        for dim, _lo, _hi in DIMENSIONS:
            shift = 0.0
            if dim in ("need_validity", "market_size"):
                shift = BACKGROUND_SHIFT[person["background"]]
            grades[dim] = _grade_distribution(rng, dim, style, persona, shift)
        traits[person["username"]] = {
            "style": style,
            "persona": persona,
            "grades": grades,
            "panels": [],
        }

    # Panels: per domain, members split into groups of 3-4 that rate a block of ideas together.
    pairs_target = max(1, round(ratings_target / len(DIMENSIONS)))
    members = {d: [p for p in people if d in p["domains"]] for d in domain_keys}
    total_members = sum(len(m) for m in members.values()) or 1
    ideas_by_domain = {d: [i for i in range(n) if idea_domain[i] == d] for d in domain_keys}
    rated_pairs: list[tuple[int, int]] = []  # (person index, idea index)
    person_index = {p["username"]: i for i, p in enumerate(people)}
    for d in domain_keys:
        group = list(members[d])
        if not group:
            continue
        order = rng.permutation(len(group))
        group = [group[int(i)] for i in order]
        n_panels = max(1, round(len(group) / 3.5))
        panels = [list(x) for x in np.array_split(np.array(group, dtype=object), n_panels)]
        idea_pool = [int(i) for i in rng.permutation(ideas_by_domain[d])]
        cap = max(1, int(len(idea_pool) * 0.85))
        domain_pairs = pairs_target * len(group) / total_members
        blocks = []
        for panel in panels:
            size = len(panel)
            mean_raters = 3.5 if size >= 4 else (2.8 if size == 3 else float(size))
            blocks.append(max(1, round(domain_pairs * size / len(group) / mean_raters)))
        scale_down = min(1.0, cap / max(1, sum(blocks)))
        start = 0
        for panel, block in zip(panels, blocks, strict=True):
            block = max(1, int(block * scale_down))
            chosen = idea_pool[start : start + block]
            start += block
            names = [p["username"] for p in panel]
            for u in names:
                traits[u]["panels"].append({"domain": d, "members": names})
            for idea_i in chosen:
                size = len(panel)
                if size >= 4:
                    k = 4 if rng.random() < 0.5 else 3
                elif size == 3:
                    k = 3 if rng.random() < 0.8 else 2
                else:
                    k = size
                raters = rng.choice(size, size=k, replace=False)
                for r in sorted(int(x) for x in raters):
                    rated_pairs.append((person_index[names[r]], idea_i))

    # How reviewers perceive each idea: its latent quality (seen through the reviewer's background
    # for need and market) plus a little personal noise. Percentiles come from the whole idea
    # population, so a reviewer's grade curve applies to ideas, not to their own sample.
    perceive: dict[tuple[str, str], np.ndarray] = {}
    population: dict[tuple[str, str], np.ndarray] = {}
    for j, (dim, _lo, _hi) in enumerate(DIMENSIONS):
        for bg in ("technical", "business") if dim in ("need_validity", "market_size") else ("",):
            base = centred[:, j].copy()
            if bg:
                base = (
                    base + VIEW_WEIGHT * view[bg][:, 0 if dim == "need_validity" else 1]
                ) / math.sqrt(1 + VIEW_WEIGHT**2)
            z = base
            perceive[(dim, bg)] = z
            draws = np.concatenate([z + NOISE[dim] * rng.normal(size=n) for _ in range(8)])
            population[(dim, bg)] = np.sort(draws)

    # The perception model, one home for the demo's ratings and the benches' oracle.
    drawn: dict[tuple[int, int], tuple[list[float], float | None]] = {}
    oracle = Oracle(
        seed=seed,
        reviewers={p["username"]: n for n, p in enumerate(people)},
        backgrounds=[p["background"] for p in people],
        grades=[traits[p["username"]]["grades"] for p in people],
        ideas={idea["external_id"]: n for n, idea in enumerate(ideas)},
        consumer=list(consumer_flags),
        perceive=perceive,
        population=population,
        drawn=drawn,
    )

    # Scores, gates, rationales and dates. The rationales' findings come from their own stream.
    frng = np.random.default_rng([seed, FINDINGS_STREAM])
    pools = FP.build_pools(frng, [i["patent"] for i in ideas])
    findings_raised: dict[str, dict[str, list[str]]] = {}
    ratings: list[dict] = []
    by_person: dict[int, list[int]] = {}
    for pi, ii in rated_pairs:
        by_person.setdefault(pi, []).append(ii)
    start_time = now - timedelta(days=60)
    for pi in sorted(by_person):
        person = people[pi]
        t = traits[person["username"]]
        items = by_person[pi]
        order = rng.permutation(len(items))
        # Each reviewer works through their ideas at their own pace over the 60 days.
        offsets = np.sort(rng.uniform(0, 59.5 * 24 * 3600, size=len(items)))
        for rank, oi in enumerate(order):
            ii = items[int(oi)]
            idea = ideas[ii]
            when = start_time + timedelta(seconds=float(offsets[rank]))
            stamp = when.replace(microsecond=0).isoformat()
            noise = [float(rng.normal()) for _ in DIMENSIONS]
            draw = float(rng.random()) if consumer_flags[ii] else None
            drawn[(pi, ii)] = (noise, draw)
            scores = oracle.perceived_rating(pi, ii, noise, draw)
            with_rationale = []
            for dim, lo, hi in DIMENSIONS:
                score = scores[dim]
                if score is not None and rng.random() < 0.3:
                    # The template text is no longer used, but drawing it keeps the main stream
                    # (and so every later score and date) exactly as it was.
                    _rationale(rng, dim, score, lo, hi, contexts[ii])
                    with_rationale.append(dim)
            texts, raised = FP.reviewer_rationales(frng, pools[ii], with_rationale)
            if raised:
                findings_raised.setdefault(idea["external_id"], {})[person["username"]] = raised
            for dim, _lo, _hi in DIMENSIONS:
                ratings.append(
                    {
                        "idea": idea["external_id"],
                        "reviewer": person["username"],
                        "dimension": dim,
                        "score": scores[dim],
                        "rationale": texts.get(dim, ""),
                        "created_at": stamp,
                    }
                )

    # Pending: ideas in the reviewer's domains they have not rated; unread ideas first.
    rated_by: dict[int, set[int]] = {}
    read: set[int] = set()
    for pi, ii in rated_pairs:
        rated_by.setdefault(pi, set()).add(ii)
        read.add(ii)
    pending: list[dict] = []
    load: dict[int, int] = {}
    for pi, person in enumerate(people):
        candidates = [
            i
            for d in person["domains"]
            for i in ideas_by_domain[d]
            if i not in rated_by.get(pi, set())
        ]
        # Spread the queue over unread ideas, least-queued first, then ideas others rated.
        candidates.sort(key=lambda i: (i in read, load.get(i, 0), float(rng.random())))
        for ii in candidates[:pending_per_reviewer]:
            load[ii] = load.get(ii, 0) + 1
            pending.append({"reviewer": person["username"], "idea": ideas[ii]["external_id"]})

    reviewers = [
        {
            "username": p["username"],
            "email": f"{p['username']}@demo.pluralist.example",
            "name": f"{p['first']} {p['last']}",
            "background": p["background"],
            "domains": ";".join(p["domains"]),
            "years_experience": str(p["years"]),
        }
        for p in people
    ]
    for p in people:
        traits[p["username"]]["role"] = p["role"]
    return DemoData(
        domains=[{"key": k, "name": name} for k, name in domains],
        patents=patents,
        ideas=ideas,
        reviewers=reviewers,
        ratings=ratings,
        pending=pending,
        latent=latent,
        reviewer_traits=traits,
        findings_pool={
            idea["external_id"]: dict(zip(pool.keys, pool.probabilities, strict=True))
            for idea, pool in zip(ideas, pools, strict=True)
        },
        findings_raised=findings_raised,
        oracle=oracle,
    )
