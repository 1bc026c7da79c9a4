"""What the staged screening form hands its template: stages, dimensions, levels, questions.

Plain dataclasses built by ``ScreeningForm.stages()``; the template reads them and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from apps.screening.models import Dimension


@dataclass
class LevelView:
    value: int
    meaning: str
    checked: bool
    is_category: bool


@dataclass
class QuestionView:
    key: str
    text: str
    name: str
    answer: bool | None


@dataclass
class DimensionView:
    dim: Dimension
    name: str
    levels: list[LevelView]
    questions: list[QuestionView]
    rationale_name: str
    rationale: str
    derived_score: int | None
    skip_name: str = ""
    skipped: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def derived_meaning(self) -> str:
        return self.dim.level_meaning(self.derived_score) if self.derived_score is not None else ""


@dataclass
class KeptValue:
    """A value typed into a stage that is closed now: carried as a hidden input, not saved."""

    name: str
    value: str


@dataclass
class StageView:
    number: int
    dimensions: list[Dimension]
    is_open: bool
    opens_when: str
    # Open stages carry their fields; closed ones say why they are closed and keep what was typed.
    fields: list[DimensionView] = field(default_factory=list)
    closed_because: str = ""
    kept: list[KeptValue] = field(default_factory=list)
    # Dimensions of this closed stage whose saved or typed scores a save would drop.
    losses: list[str] = field(default_factory=list)

    @property
    def names(self) -> str:
        return ", ".join(d.name for d in self.dimensions)


@dataclass
class Given:
    """Everything posted (or pre-filled), open or not: the form keeps it while stages close."""

    scores: dict[str, int | None] = field(default_factory=dict)
    answers: dict[str, dict[str, bool]] = field(default_factory=dict)
    rationales: dict[str, str] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)
