"""Contradicting categories, as pure functions over dimensions and scores."""

from __future__ import annotations

from apps.screening.consistency import category_conflicts
from apps.screening.models import Dimension


def _dim(key: str, name: str, categories=(0,), zero="Not a B2B product.") -> Dimension:
    levels = {"0": zero, "1": "low", "2": "mid", "3": "high"}
    return Dimension(
        key=key, name=name, scale_min=0, scale_max=3, levels=levels, categories=list(categories)
    )


NEED = _dim("need_validity", "Need validity")
MARKET = _dim("market_size", "Market size")


def test_it_finds_a_grade_next_to_the_shared_category():
    assert category_conflicts([NEED, MARKET], {"need_validity": 2, "market_size": 0}) == [
        "Market size 0 says “Not a B2B product”, but Need validity 2 grades it as if it were not."
    ]
    assert len(category_conflicts([NEED, MARKET], {"need_validity": 0, "market_size": 3})) == 1


def test_it_accepts_agreement_and_missing_scores():
    assert category_conflicts([NEED, MARKET], {"need_validity": 0, "market_size": 0}) == []
    assert category_conflicts([NEED, MARKET], {"need_validity": 2, "market_size": 1}) == []
    assert category_conflicts([NEED, MARKET], {"need_validity": 2}) == []


def test_categories_with_different_meanings_are_not_shared():
    other = _dim("market_size", "Market size", zero="Unknown market.")
    assert category_conflicts([NEED, other], {"need_validity": 2, "market_size": 0}) == []
    plain = _dim("market_size", "Market size", categories=())
    assert category_conflicts([NEED, plain], {"need_validity": 2, "market_size": 0}) == []
