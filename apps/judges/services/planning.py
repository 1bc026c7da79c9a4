"""Planning a judge run (pure: no database, no Django): its work units and their examples.

A run's plan is computed once, when the run starts, from a snapshot of the ratings (the pool of
scored ratings per dimension, and the targets) that is stored with the run
(models.JudgeRunPlan). Everything here is a function of that snapshot, so a resumed run, or a
second worker helping with it, derives exactly the same units and examples.

Examples follow apps.judges.engine.examples.select_examples exactly (same rating ids, same order; a
test compares the two), computed in batch: the priorities of a (dimension, seed) are hashed
once for the whole pool, each target's eligible candidates are a mask over the ranked pool, and
a smaller k is a prefix of the larger k's list (the draw takes the k smallest priorities).
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

ZERO_SHOT, AGGREGATE, PERSONALIZED = "zero_shot", "aggregate", "personalized"
PURPOSE_PREDICTION = "prediction"
LOCAL_BACKEND = "local"

# Pool rows, as stored in JudgeRunPlan.pool: [rating_id, idea_id, patent_id, reviewer_id, score].
PoolRow = Sequence[int]
# Target rows, as stored in JudgeRunPlan.targets: [reviewer_id, idea_id, patent_id].
TargetRow = Sequence[int]


@dataclass(frozen=True)
class ConfigSpec:
    """What planning needs to know of a configuration (JudgeConfig, or its run overrides)."""

    id: int
    kind: str
    k_values: tuple[int, ...]
    seeds: int
    backend: str = LOCAL_BACKEND
    # seeds_judged's rule. A plan stored before it lacks the key and keeps every seed: a run
    # resumed across the upgrade must derive the units its chunks were cut from.
    one_seed_without_examples: bool = True

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "k_values": list(self.k_values),
            "seeds": self.seeds,
            "backend": self.backend,
            "one_seed_without_examples": self.one_seed_without_examples,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ConfigSpec:
        return cls(
            id=int(data["id"]),  # type: ignore[call-overload]
            kind=str(data["kind"]),
            k_values=tuple(int(k) for k in data["k_values"]),  # type: ignore[attr-defined]
            seeds=int(data["seeds"]),  # type: ignore[call-overload]
            backend=str(data.get("backend", LOCAL_BACKEND)),
            one_seed_without_examples=bool(data.get("one_seed_without_examples", False)),
        )


@dataclass(frozen=True)
class WorkUnit:
    """One judge call: a configuration, k and seed, on one target (reviewer, idea, dimension)."""

    config_id: int
    kind: str
    k: int
    seed: int
    reviewer_id: int
    idea_id: int
    dimension_id: int
    patent_id: int = 0

    @property
    def key(self) -> tuple[int, int, int, str, int, int]:
        """The prediction's unique key (models.JudgePrediction's constraint, minus the run)."""
        return (self.reviewer_id, self.idea_id, self.dimension_id, self.kind, self.k, self.seed)


def k_values(
    *, purpose: str, run_shots: Sequence[int], kind: str, config_k: Sequence[int]
) -> list[int]:
    """The k a configuration is run with: zero-shot 0; a prediction its largest k; a study the
    run's k sweep; otherwise the configuration's own."""
    if kind == ZERO_SHOT:
        return [0]
    if purpose == PURPOSE_PREDICTION:
        return [max(config_k)] if config_k else [0]
    if run_shots:
        return sorted({int(k) for k in run_shots})
    return sorted({int(k) for k in config_k}) or [0]


def seeds_judged(config: ConfigSpec, k: int) -> int:
    """How many seeds a configuration is judged with at this k. A seed draws the examples and
    nothing else in the offline judge, so without examples its seeds repeat one another exactly
    (the same score, confidence, reason and fingerprint: checked on every zero-shot target of
    bench_scale's 30x refresh); one is judged and its final is the same vote. That was two of
    the 15 units of each rating a leave-one-out evaluation judged and stored (now 13). An
    LLM's seeds are samples, and keep their count."""
    if config.one_seed_without_examples and config.backend == LOCAL_BACKEND and k == 0:
        return 1
    return config.seeds


def plan_units(
    *,
    dimension_ids: Sequence[int],
    targets: dict[int, list[TargetRow]],
    configs: Sequence[ConfigSpec],
) -> list[WorkUnit]:
    """Every (configuration, k, seed, target) of a run, in a stable order.

    Within one (dimension, configuration, k, seed) the targets are sorted by (reviewer, idea), so
    the calls for one reviewer and dimension are sent back to back: with personalized examples
    they share the prompt prefix, which single-slot LLM servers cache.

    Invariant: no two units share a prediction key. A run stores one prediction per key (kind,
    k, seed, target), so two configurations of the same kind (a kind given by name selects every
    active one) would overwrite each other's rows and the run would end short of its total
    (27,819 of 40,464 in issue 21); the first configuration in the given order keeps the key.
    """
    units: list[WorkUnit] = []
    seen: set[tuple[int, int, int, str, int, int]] = set()
    for dim_id in dimension_ids:
        rows = sorted((int(r), int(i), int(p)) for r, i, p in targets.get(dim_id, []))
        for config in configs:
            for k in config.k_values:
                for seed in range(seeds_judged(config, k)):
                    for r, i, p in rows:
                        unit = WorkUnit(config.id, config.kind, k, seed, r, i, dim_id, p)
                        if unit.key not in seen:
                            seen.add(unit.key)
                            units.append(unit)
    return units


def _priority(seed: int, rating_id: int) -> int:
    # The same priority as apps.judges.engine.examples._priority (the documented draw).
    digest = hashlib.sha256(f"{int(seed)}:{int(rating_id)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class _RankedPool:
    """One dimension's pool, ordered by the draw priority of one seed.

    Plain lists, walked from the front: a unit takes the first k ratings it may use, which are
    a few steps in (only the target's idea, patent and, for other reviewers' examples, the
    target reviewer's own ratings are skipped); comparing the whole pool for each unit, as
    arrays, cost more."""

    def __init__(self, pool: Sequence[PoolRow], seed: int) -> None:
        by_id = {int(row[0]): row for row in pool}
        order = sorted(by_id, key=lambda rid: (_priority(seed, rid), rid))
        rows = [by_id[rid] for rid in order]
        self.rating = [int(r[0]) for r in rows]
        self.idea = [int(r[1]) for r in rows]
        self.patent = [int(r[2]) for r in rows]
        self.reviewer = [int(r[3]) for r in rows]
        self._own: dict[int, list[int]] = {}

    def own(self, reviewer_id: int) -> list[int]:
        """Positions of one reviewer's ratings, in priority order (cached)."""
        if reviewer_id not in self._own:
            self._own[reviewer_id] = [n for n, r in enumerate(self.reviewer) if r == reviewer_id]
        return self._own[reviewer_id]

    def pick(
        self, *, kind: str, reviewer_id: int, idea_id: int, patent_id: int, k: int
    ) -> list[int]:
        own = kind == PERSONALIZED
        chosen: list[int] = []
        if k <= 0:
            return chosen
        for n in self.own(reviewer_id) if own else range(len(self.rating)):
            if (
                self.patent[n] != patent_id
                and self.idea[n] != idea_id
                and (own or self.reviewer[n] != reviewer_id)
            ):
                chosen.append(self.rating[n])
                if len(chosen) == k:
                    break
        return chosen


# Ranked pools recently built in this process, by (seed, the pool's rows): a run asks for the
# same pools batch after batch, and the runs of one domain's burst share them. Hashing every
# rating's priority was an eighth of a prediction run's time.
_RANKED: OrderedDict[tuple[int, bytes], _RankedPool] = OrderedDict()
RANKED_CACHE_SIZE = 64


def _ranked_pool(pool: Sequence[PoolRow], seed: int, digest: bytes) -> _RankedPool:
    key = (int(seed), digest)  # digest: pool_digest(pool)
    found = _RANKED.get(key)
    if found is None:
        found = _RANKED[key] = _RankedPool(pool, seed)
        while len(_RANKED) > RANKED_CACHE_SIZE:
            _RANKED.popitem(last=False)
    else:
        _RANKED.move_to_end(key)
    return found


def pool_digest(pool: Sequence[PoolRow]) -> bytes:
    """What a ranked pool depends on: its rows' rating, idea, patent and reviewer ids."""
    rows = np.array([row[:4] for row in pool], dtype=np.int64).reshape(-1, 4)
    return hashlib.blake2b(rows.tobytes(), digest_size=16).digest()


def examples_for_units(
    units: Sequence[WorkUnit], pools: Mapping[int, Sequence[PoolRow]]
) -> list[list[int]]:
    """The example rating ids of every unit (same as select_examples, unit by unit)."""
    wanted: dict[tuple[int, int, str, int, int, int], int] = defaultdict(int)
    for u in units:
        if u.kind != ZERO_SHOT and u.k > 0:
            key = (u.dimension_id, u.seed, u.kind, u.reviewer_id, u.idea_id, u.patent_id)
            wanted[key] = max(wanted[key], u.k)
    ranked: dict[tuple[int, int], _RankedPool] = {}
    digests: dict[int, bytes] = {}  # a pool's digest serves each of its seeds
    longest: dict[tuple[int, int, str, int, int, int], list[int]] = {}
    for key, k in wanted.items():
        dim_id, seed, kind, reviewer_id, idea_id, patent_id = key
        if (dim_id, seed) not in ranked:
            pool = pools.get(dim_id, [])
            if dim_id not in digests:
                digests[dim_id] = pool_digest(pool)
            ranked[(dim_id, seed)] = _ranked_pool(pool, seed, digests[dim_id])
        longest[key] = ranked[(dim_id, seed)].pick(
            kind=kind, reviewer_id=reviewer_id, idea_id=idea_id, patent_id=patent_id, k=k
        )
    out: list[list[int]] = []
    for u in units:
        if u.kind == ZERO_SHOT or u.k <= 0:
            out.append([])
        else:
            key = (u.dimension_id, u.seed, u.kind, u.reviewer_id, u.idea_id, u.patent_id)
            out.append(longest[key][: u.k])
    return out


def chunk_bounds(
    units: Sequence[WorkUnit], backends: dict[int, str], llm_size: int
) -> list[tuple[int, int]]:
    """[start, stop) ranges of the units, one range per chunk.

    LLM calls (one per target and seed) are split into chunks of `llm_size` per configuration
    and dimension, which several workers process in parallel. The local judge's units stay one
    chunk however many configurations and dimensions they span, judged in vectorised batches by
    one worker: a chunk per configuration and dimension made a prediction run six chunks of 300
    units, each with its own lease, heartbeats and store (issue 28).
    """

    def segment(unit: WorkUnit) -> tuple[int, int] | None:
        if backends.get(unit.config_id, "local") == "local":
            return None
        return (unit.config_id, unit.dimension_id)

    bounds: list[tuple[int, int]] = []
    start = 0
    size = max(1, int(llm_size))
    for i in range(1, len(units) + 1):
        current = segment(units[start])
        end_of_segment = i == len(units) or segment(units[i]) != current
        if end_of_segment or (current is not None and i - start >= size):
            bounds.append((start, i))
            start = i
    return bounds


def leave_one_out_targets(
    pool: Iterable[PoolRow], *, reviewer_id: int | None, min_history: int
) -> list[list[int]]:
    """Targets of an evaluation (one reviewer) or a study (every reviewer with at least
    `min_history` scored ratings in the pool): each rated idea, as [reviewer, idea, patent]."""
    rows = list(pool)
    counts: dict[int, int] = defaultdict(int)
    for row in rows:
        counts[int(row[3])] += 1
    out = []
    for row in rows:
        reviewer = int(row[3])
        if reviewer_id is not None:
            if reviewer != reviewer_id:
                continue
        elif counts[reviewer] < min_history:
            continue
        out.append([reviewer, int(row[1]), int(row[2])])
    return sorted(out)
