"""One panel debate on one idea and one dimension (after MAJ-Eval, paper 004).

The loop, given ``ask(kind, member, round, messages) -> TurnResult``:
1. ``single``: one plain judge with no persona scores the idea (the baseline a panel must beat).
2. ``score`` (round 0): every member scores alone, without seeing the others.
3. ``revise`` (rounds 1..max_rounds): every member sees the others' latest scores and reasons,
   and a coordinator's note naming the largest unresolved disagreement (the two members whose
   scores lie furthest apart), and may revise its score.
4. Stopping rule: before a round, stop if all members already agree (``unanimous``); after a
   round, stop if no member changed its score (``stable``); else stop after ``max_rounds``
   (``max_rounds``).
5. Aggregation rule: the panel's score is the mean of the members' latest valid scores (the
   paper averages); ``before`` is the same mean over the round-0 scores. A member whose reply
   could not be used keeps its previous score (or has none, in round 0).
6. ``synthesis``: one call summarising the debate in a few sentences; its text is stored, its
   score is not used.

``ask`` is where the service stores and replays turns, so a retried debate calls the model only
for turns it has not stored yet and arrives at the same result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from apps.judges.engine.judgment import RubricDimension
from apps.judges.engine.parsing import ReplyError, parse_reply
from apps.judges.engine.prompting import instruction_block
from apps.panels.engine.text import clip

SINGLE = "single"
SCORE = "score"
REVISE = "revise"
SYNTHESIS = "synthesis"
KINDS = (SINGLE, SCORE, REVISE, SYNTHESIS)
STOP_UNANIMOUS = "unanimous"
STOP_STABLE = "stable"
STOP_MAX_ROUNDS = "max_rounds"
NO_MEMBER = 0  # the member slot of the single judge and the synthesis
REASON_CHARS = 240
REPLY_FORMAT = (
    'Reply with one line of JSON only: {"score": <integer>, "confidence": <0-100>, '
    '"reason": "<one sentence>"}'
)


@dataclass(frozen=True)
class Member:
    key: int  # the persona's id: unique within a panel, never 0
    name: str
    description: str


@dataclass(frozen=True)
class TurnResult:
    score: int | None
    reason: str


Ask = Callable[[str, int, int, list[dict[str, str]]], TurnResult]


@dataclass
class DebateResult:
    single: int | None
    rounds: list[dict[int, int]]  # round -> member -> its latest valid score
    reasons: dict[int, str]
    stop_reason: str
    synthesis: str = ""
    before: float | None = None
    after: float | None = None
    debate_rounds: int = 0  # revise rounds actually run
    changed: list[tuple[int, int, int, int]] = field(default_factory=list)


def parse_turn(text: str, dimension: RubricDimension) -> TurnResult:
    """A member's score and reason from its reply; score None if the reply is unusable."""
    try:
        parsed = parse_reply(text, scale_min=dimension.scale_min, scale_max=dimension.scale_max)
    except ReplyError:
        return TurnResult(score=None, reason="")
    return TurnResult(score=parsed.score, reason=clip(parsed.reason, REASON_CHARS))


def aggregate(scores: dict[int, int]) -> float | None:
    """The documented rule: the mean of the members' scores; None if nobody scored."""
    values = list(scores.values())
    return sum(values) / len(values) if values else None


def largest_disagreement(scores: dict[int, int]) -> tuple[int, int] | None:
    """The two members furthest apart (lowest and highest score; ties go to the lower member
    key, so the choice is deterministic); None when all agree."""
    if len(scores) < 2:
        return None
    low = min(scores, key=lambda k: (scores[k], k))
    high = max(scores, key=lambda k: (scores[k], -k))
    return None if scores[low] == scores[high] else (low, high)


def coordinator_note(scores: dict[int, int], reasons: dict[int, str], names: dict[int, str]) -> str:
    pair = largest_disagreement(scores)
    if pair is None:
        return "Coordinator: the panel agrees."
    low, high = pair
    return (
        f"Coordinator: the largest disagreement is between {names[low]} ({scores[low]}: "
        f"{reasons.get(low) or 'no reason given'}) and {names[high]} ({scores[high]}: "
        f"{reasons.get(high) or 'no reason given'}). Weigh both arguments."
    )


def _system(member: Member | None) -> str:
    if member is None:
        return "You are an expert reviewer. " + REPLY_FORMAT
    return f"You are {member.name}. {clip(member.description, 700)} " + REPLY_FORMAT


def score_messages(
    member: Member | None, dimension: RubricDimension, item_text: str
) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": _system(member)},
        {"role": "user", "content": f"{instruction_block(dimension)}\n\n## Idea\n{item_text}"},
    ]


def revise_messages(
    member: Member,
    dimension: RubricDimension,
    item_text: str,
    *,
    own: tuple[int, str],
    others: list[tuple[str, int, str]],
    note: str,
    round_no: int,
) -> list[dict[str, str]]:
    lines = [f"- {name}: {score}. {reason}" for name, score, reason in others]
    debate = (
        f"## Debate, round {round_no}\nYour score: {own[0]}. {own[1]}\n"
        "The other panel members:\n" + "\n".join(lines) + f"\n{note}\n"
        "Keep your score or change it; change it only if an argument convinces you."
    )
    return [
        *score_messages(member, dimension, item_text),
        {"role": "user", "content": debate},
    ]


def synthesis_messages(
    dimension: RubricDimension,
    item_text: str,
    members: list[Member],
    scores: dict[int, int],
    reasons: dict[int, str],
) -> list[dict[str, str]]:
    lines = [
        f"- {m.name}: {scores[m.key]}. {reasons.get(m.key, '')}" for m in members if m.key in scores
    ]
    return [
        {
            "role": "system",
            "content": "You summarise a review panel's debate for a manager, in two sentences. "
            + REPLY_FORMAT,
        },
        {
            "role": "user",
            "content": f"{instruction_block(dimension)}\n\n## Idea\n{clip(item_text, 1500)}\n\n"
            "## Final positions\n" + "\n".join(lines) + "\nGive the panel's overall score "
            "and, as the reason, where the members agree and where they still differ.",
        },
    ]


def run_debate(
    *,
    members: list[Member],
    dimension: RubricDimension,
    item_text: str,
    max_rounds: int,
    ask: Ask,
) -> DebateResult:
    names = {m.key: m.name for m in members}
    single = ask(SINGLE, NO_MEMBER, 0, score_messages(None, dimension, item_text)).score
    scores: dict[int, int] = {}
    reasons: dict[int, str] = {}
    for m in members:
        reply = ask(SCORE, m.key, 0, score_messages(m, dimension, item_text))
        if reply.score is not None:
            scores[m.key] = reply.score
            reasons[m.key] = reply.reason
    result = DebateResult(
        single=single,
        rounds=[dict(scores)],
        reasons=reasons,
        stop_reason=STOP_MAX_ROUNDS,
        before=aggregate(scores),
    )
    for round_no in range(1, max_rounds + 1):
        if largest_disagreement(scores) is None:
            result.stop_reason = STOP_UNANIMOUS
            break
        note = coordinator_note(scores, reasons, names)
        previous = dict(scores)
        previous_reasons = dict(reasons)
        for m in members:
            if m.key not in previous:
                continue  # never scored: it has no position to defend
            others = [
                (names[k], s, previous_reasons.get(k, ""))
                for k, s in previous.items()
                if k != m.key
            ]
            reply = ask(
                REVISE,
                m.key,
                round_no,
                revise_messages(
                    m,
                    dimension,
                    item_text,
                    own=(previous[m.key], previous_reasons.get(m.key, "")),
                    others=others,
                    note=note,
                    round_no=round_no,
                ),
            )
            if reply.score is not None:
                if reply.score != previous[m.key]:
                    result.changed.append((round_no, m.key, previous[m.key], reply.score))
                scores[m.key] = reply.score
                reasons[m.key] = reply.reason or reasons.get(m.key, "")
        result.rounds.append(dict(scores))
        result.debate_rounds = round_no
        if scores == previous:
            result.stop_reason = STOP_STABLE
            break
    result.after = aggregate(scores)
    if scores:
        synthesis = ask(
            SYNTHESIS,
            NO_MEMBER,
            result.debate_rounds + 1,
            synthesis_messages(dimension, item_text, members, scores, reasons),
        )
        result.synthesis = synthesis.reason
    return result


def planned_calls(*, members: int, max_rounds: int) -> int:
    """The most calls one debate can make: single + alone + every round + synthesis."""
    return 1 + members + members * max_rounds + 1
