"""The declared shape of a rubric document (YAML or JSON), checked before its rules are read.

`rubric_shape_errors` validates the parsed document against the pydantic models below: which
fields are mappings, lists, text, whole numbers or true/false, and how long each may be. Every
mismatch becomes a FieldError naming its path (`dimensions[0].requires[0]`), and only a document
of the right shape reaches the rubric's own rules (apps.screening.rubric_files.parse_rubric:
scales, gates, levels on the scale), which can then rely on the types. Before this, a value of
the wrong type reached code that assumed another (`requires: [[a]]`, `question_scores: [1, 2]`,
a bound written "²") and answered 500.

Why pydantic (v2): the shape is declared once, as types with bounds, instead of an isinstance
check before every use; it reports every mismatch at once with its location; it validates in
its compiled core; and it is already installed (the openai SDK is built on it). Unknown keys are
ignored, as before: rubric files may carry comments-as-keys.

Pure: no Django, no database.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, ValidationError

from apps.core import untrusted
from apps.core.errors import FieldError

# Longest free text of a rubric (a description, a level's meaning, the prompt's task).
TEXT_MAX = 100_000
# A rubric with more dimensions than this is not a screening rubric.
DIMENSIONS_MAX = 200
# PBIG's question-based dimension asks 2; each question doubles the score table.
QUESTIONS_MAX = 8
LIST_MAX = 1000


def _text(value: Any) -> Any:
    """A scalar written as text (numbers and dates as written); never bytes or a container."""
    if isinstance(value, bytes | bytearray):
        raise ValueError("must be text, not binary data")
    if isinstance(value, dict | list | tuple | set):
        raise ValueError("must be text, not a list or a mapping")
    return value if isinstance(value, str) else str(value)


def _whole(value: Any) -> Any:
    number = untrusted.parse_int(value)
    if number is None:
        raise ValueError(
            f"must be a whole number written with the digits 0-9 (at most "
            f"{untrusted.MAX_INT_DIGITS} of them)"
        )
    return number


def _listed(value: Any) -> Any:
    """Domains may be written as one text, separated by commas or semicolons."""
    return [d for d in value.replace(",", ";").split(";")] if isinstance(value, str) else value


Text = Annotated[str, BeforeValidator(_text), Field(max_length=TEXT_MAX)]
Whole = Annotated[int, BeforeValidator(_whole)]


class _Document(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ScaleDoc(_Document):
    min: Whole | None = None
    max: Whole | None = None


class QuestionDoc(_Document):
    key: Text | None = None
    text: Text | None = None


class DimensionDoc(_Document):
    key: Text | None = None
    name: Text | None = None
    description: Text | None = None
    scale: ScaleDoc | None = None
    pass_above: Whole | None = None
    requires: Annotated[list[Text], Field(max_length=DIMENSIONS_MAX)] | None = None
    levels: Annotated[dict[Whole, Text | None], Field(max_length=LIST_MAX)] | None = None
    categories: Annotated[list[Whole], Field(max_length=LIST_MAX)] | None = None
    questions: Annotated[list[QuestionDoc], Field(max_length=QUESTIONS_MAX)] | None = None
    question_scores: Annotated[dict[Text, Whole], Field(max_length=2**QUESTIONS_MAX)] | None = None
    optional: StrictBool = False


class RubricDoc(_Document):
    key: Text | None = None
    name: Text | None = None
    description: Text | None = None
    domains: (
        Annotated[list[Text | None], BeforeValidator(_listed), Field(max_length=LIST_MAX)] | None
    ) = None
    task: Text | None = None
    item_noun: Text | None = None
    source_noun: Text | None = None
    dimensions: Annotated[list[DimensionDoc], Field(max_length=DIMENSIONS_MAX)] | None = None


# Our wording for pydantic's error types (its own messages name Python types).
MESSAGES = {
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "model_attributes_type": "must be a mapping",
    "list_type": "must be a list",
    "bool_type": "must be true or false",
    "string_too_long": "must be at most {max_length} characters",
    "too_long": "must have at most {max_length} entries",
}


def _path(loc: tuple[int | str, ...]) -> str:
    """('dimensions', 0, 'requires', 1) -> 'dimensions[0].requires[1]'. Union branches and
    the marker of a mapping's key are left out."""
    path = ""
    for part in loc:
        if isinstance(part, str) and ("[" in part or part.startswith("function-")):
            continue
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "file"


def rubric_shape_errors(data: dict[str, Any]) -> list[FieldError]:
    """Every place where the document's shape is not a rubric's, one FieldError each (the
    first per path: a union of types reports each branch, and one message says enough)."""
    try:
        RubricDoc.model_validate(data)
    except ValidationError as exc:
        return _field_errors(exc)
    return []


# A dimension's fields stored as JSON, which the Django admin edits as text.
JSON_FIELDS = ("levels", "requires", "categories", "questions", "question_scores")


def dimension_shape_errors(values: dict[str, Any]) -> list[FieldError]:
    """The shape of a stored dimension's JSON fields (the admin's inline form), by field name."""
    doc = {name: values[name] for name in JSON_FIELDS if values.get(name) is not None}
    try:
        DimensionDoc.model_validate(doc)
    except ValidationError as exc:
        return _field_errors(exc)
    return []


def _field_errors(exc: ValidationError) -> list[FieldError]:
    errors: dict[str, FieldError] = {}
    for error in exc.errors(include_url=False):
        where = _path(tuple(error["loc"]))
        template = MESSAGES.get(error["type"])
        if template is not None:
            message = template.format(**(error.get("ctx") or {}))
        elif error["type"] == "value_error":
            message = str(error["msg"]).removeprefix("Value error, ")
        else:
            message = str(error["msg"])
        value = error.get("input")
        shown = None if isinstance(value, dict | list) else str(value)[:80]
        errors.setdefault(where, FieldError(field=where, message=message, value=shown))
    return list(errors.values())
