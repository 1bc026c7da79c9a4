"""Answers that the gates allow but that contradict each other, so the form asks to confirm.

Pure functions over the rubric's dimensions and one reviewer's scores; nothing here refuses a
submission (imports keep such ratings as they are), the staged form only asks once before saving.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from apps.screening.models import Dimension


def _categories(dim: Dimension) -> dict[int, str]:
    """Category levels of a dimension with their meaning, e.g. {0: "Not a B2B product."}."""
    return {int(c): dim.level_meaning(int(c)).strip() for c in dim.categories}


def category_conflicts(
    dimensions: Sequence[Dimension], scores: Mapping[str, int | None]
) -> list[str]:
    """Sentences naming each pair of dimensions that disagree on a shared category.

    Two dimensions share a category when both have a category level with the same meaning (PBIG:
    0 = "Not a B2B product." on need validity and on market size). Putting one of them in the
    category and grading the other says both "not B2B" and "B2B", e.g. need validity 2 with
    market size 0.
    """
    messages: list[str] = []
    for i, first in enumerate(dimensions):
        for second in dimensions[i + 1 :]:
            shared = {
                level: meaning
                for level, meaning in _categories(first).items()
                if meaning and _categories(second).get(level) == meaning
            }
            for level, meaning in shared.items():
                a, b = scores.get(first.key), scores.get(second.key)
                if a is None or b is None or (a == level) == (b == level):
                    continue
                graded, in_category = (second, first) if a == level else (first, second)
                graded_score = b if a == level else a
                messages.append(
                    f"{in_category.name} {level} says “{meaning.rstrip('.')}”, but "
                    f"{graded.name} {graded_score} grades it as if it were not."
                )
    return messages
