"""LLM prompts with panel evidence (a configuration option): the other reviewers' scores on the
target, mapped onto the target reviewer's scale; never the target's own. No database."""

from __future__ import annotations

import re

import pytest

from apps.judges.engine.judgment import Example, JudgeRequest, RubricDimension
from apps.judges.engine.panel import PanelIndex, PanelScore, evidence
from apps.judges.engine.prompting import build_messages, panel_block, shared_block

DIM = RubricDimension(
    key="innov",
    name="Innovativeness",
    description="",
    scale_min=0,
    scale_max=5,
    categories=(0,),
)
TARGET_IDEA, TARGET_REVIEWER = 1, 7


def _index() -> PanelIndex:
    """Idea 1: the target reviewer gave it 5, two others gave their usual minus one spread."""
    rows = [(TARGET_IDEA, TARGET_REVIEWER, 5), (TARGET_IDEA, 8, 1), (TARGET_IDEA, 9, 2)]
    rows += [(i, 8, s) for i, s in zip((2, 3, 4), (1, 2, 3), strict=True)]  # mean 1.75
    rows += [(i, 9, s) for i, s in zip((2, 3, 4), (2, 3, 4), strict=True)]  # mean 2.75
    rows += [(i, TARGET_REVIEWER, s) for i, s in zip((2, 3, 4), (4, 5, 4), strict=True)]
    return PanelIndex(rows, scale_min=0, scale_max=5, categories=(0,))


def _request(panel, examples=(3, 4, 5)) -> JudgeRequest:
    return JudgeRequest(
        dimension=DIM,
        examples=tuple(
            Example(item_id=n, patent_text=f"Patent {n}", idea_text=f"Idea {n}", score=s)
            for n, s in enumerate(examples, start=10)
        ),
        patent_text="Target patent",
        idea_text="Target idea",
        idea_id=TARGET_IDEA,
        panel=tuple(panel),
    )


def _restated(block: str) -> list[float]:
    line = next(line for line in block.splitlines() if line.startswith("Restated scores:"))
    values = line.removeprefix("Restated scores: ").split(" (mean")[0]
    return [float(v) for v in values.split(", ")]


def test_the_prompt_shows_the_other_reviewers_mapped_onto_the_targets_scale():
    panel = _index().panel(TARGET_IDEA, exclude_reviewer=TARGET_REVIEWER)
    request = _request(panel)
    user = build_messages(request)[1]["content"]
    assert "## What other reviewers gave this idea" in user
    assert "2 other reviewers scored this idea" in user
    found = evidence(panel, [3, 4, 5], scale_min=0, scale_max=5, categories=(0,))
    assert found is not None
    # Each member's z (score - own mean) / own spread, on the examples' level and spread.
    for p, mapped in zip(panel, found.mapped, strict=True):
        z = (p.score - p.mean) / p.spread
        assert mapped == pytest.approx(found.level + found.spread * z)
    assert found.level == pytest.approx(4.0)
    assert _restated(user) == [round(v, 1) for v in found.mapped]
    # The evidence sits in the target block, after the target, before the reminder.
    assert user.index("Target idea") < user.index("## What other") < user.index("Reply with")


def test_the_targets_own_scores_never_reach_the_prompt():
    index = _index()
    panel = index.panel(TARGET_IDEA, exclude_reviewer=TARGET_REVIEWER)
    assert TARGET_REVIEWER not in {p.reviewer_id for p in panel}
    block = panel_block(_request(panel))
    restated = _restated(block)
    assert len(restated) == 2
    # Both others sit below their usual level; the target gave the top score. Had the target's
    # own score leaked, a restated score above 4 (their 5 on their own scale) would appear.
    assert all(v < 4 for v in restated), restated
    leaked = panel_block(_request(index.panel(TARGET_IDEA, exclude_reviewer=-1)))
    assert len(_restated(leaked)) == 3 and max(_restated(leaked)) > 4
    assert "3 other reviewers" in leaked and "3 other reviewers" not in block


def test_without_a_panel_the_prompt_is_the_papers_byte_for_byte():
    plain = _request(())
    assert panel_block(plain) == ""
    content = build_messages(plain)[1]["content"]
    assert "other reviewers" not in content
    with_panel = _request(_index().panel(TARGET_IDEA, exclude_reviewer=TARGET_REVIEWER))
    # The cacheable prefix is the same with and without evidence.
    assert shared_block(with_panel) == shared_block(plain)
    assert build_messages(with_panel)[1]["content"].startswith(shared_block(plain))


def test_zero_shot_maps_onto_the_panels_typical_scale_and_says_so():
    panel = _index().panel(TARGET_IDEA, exclude_reviewer=TARGET_REVIEWER)
    block = panel_block(_request(panel, examples=()))
    assert "the panel's typical scale" in block and "no examples show this scale" in block
    found = evidence(panel, [], scale_min=0, scale_max=5, categories=(0,))
    assert found is not None and found.k == 0
    assert found.level == pytest.approx((1.75 + 2.75) / 2)


def test_categories_are_counted_not_mapped_and_mapped_scores_stay_on_the_scale():
    panel = (
        PanelScore(8, 0, 0.0, 1.0, is_category=True),
        PanelScore(9, 5, 1.0, 0.5),  # eight spreads above their mean: clipped to the top
    )
    block = panel_block(_request(panel))
    assert "1 of them chose level 0, which marks a category" in block
    assert _restated(block) == [5.0]
    assert "2 other reviewers" in block
    assert re.search(r"mean 5\b", block)
