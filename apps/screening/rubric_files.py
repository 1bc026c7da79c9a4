"""Parsing and validation of rubric files (YAML or JSON). Pure: no database access."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from apps.core import untrusted
from apps.core.errors import ApplicationError, ErrorCollector
from apps.screening.rubric_schema import rubric_shape_errors


@dataclass
class DimensionSpec:
    key: str
    name: str
    description: str
    scale_min: int
    scale_max: int
    levels: dict[str, str]
    pass_above: int | None = None
    requires: list[str] = field(default_factory=list)
    categories: list[int] = field(default_factory=list)
    questions: list[dict[str, str]] = field(default_factory=list)
    question_scores: dict[str, int] = field(default_factory=dict)
    optional: bool = False


# The one list of a dimension's editable fields (besides its key): the rubric importer compares
# them, the API serializes them, the admin edits them, save_rubric writes them.
DIMENSION_FIELDS: tuple[str, ...] = (
    "name",
    "description",
    "position",
    "scale_min",
    "scale_max",
    "levels",
    "pass_above",
    "requires",
    "categories",
    "questions",
    "question_scores",
    "optional",
)
# The rubric's own words for what is rated, used by the judge prompts; empty means PBIG's.
WORDING_FIELDS: tuple[str, ...] = ("task", "item_noun", "source_noun")


@dataclass
class RubricSpec:
    key: str
    name: str
    description: str
    dimensions: list[DimensionSpec]
    # Keys of the domains whose ideas are rated on this rubric.
    domains: list[str] = field(default_factory=list)
    task: str = ""
    item_noun: str = ""
    source_noun: str = ""


def load_rubric_text(text: str | bytes, *, filename: str = "") -> dict[str, Any]:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ApplicationError(f"The rubric file is not UTF-8 text: {exc}") from exc
    try:
        data = (
            untrusted.json_loads(text) if filename.endswith(".json") else untrusted.yaml_load(text)
        )
    except (ValueError, yaml.YAMLError) as exc:
        raise ApplicationError(f"The rubric file cannot be parsed: {exc}") from exc
    if not isinstance(data, dict):
        raise ApplicationError(
            "The rubric file must hold one mapping with key, name and dimensions."
        )
    return data


# Scores are stored in smallint columns; no rubric needs more than a few dozen levels.
SCALE_LIMIT = 1000
# Column widths of the keys and names (apps/screening/models.py).
KEY_MAX, NAME_MAX = 64, 200


def _nul_paths(value: Any, path: str = "") -> list[str]:
    """Where the rubric holds text with a NUL character (keys and values), by field path."""
    if isinstance(value, str):
        return [path or "file"] if "\x00" in value else []
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            if isinstance(k, str) and "\x00" in k:
                found.append(path or "file")
            found += _nul_paths(v, where)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _nul_paths(v, f"{path}[{i}]")
    return found


def _int(value: Any) -> int | None:
    return untrusted.parse_int(value)


def parse_rubric(data: dict[str, Any]) -> RubricSpec:
    """Validate a rubric mapping; every problem is reported at once with its field path."""
    errs = ErrorCollector()
    for where in _nul_paths(data):
        errs.add(where.replace("\x00", "\u2400"), untrusted.nul_error("\x00"))
    errs.raise_if_any("The rubric file has errors; nothing was imported.")
    # The document's shape first (types and sizes, apps.screening.rubric_schema): the rules
    # below may then rely on each field's type.
    errs.errors.extend(rubric_shape_errors(data))
    errs.raise_if_any("The rubric file has errors; nothing was imported.")
    key = str(data.get("key") or "").strip()
    if not key or not key.replace("-", "").replace("_", "").isalnum() or len(key) > KEY_MAX:
        errs.add(
            "key",
            f"is required: letters, digits, - and _, at most {KEY_MAX} characters",
            value=key[:80],
        )
    name = str(data.get("name") or key).strip()
    if len(name) > NAME_MAX:
        errs.add("name", f"must be at most {NAME_MAX} characters", value=name[:80])
    domains_raw = data.get("domains") or []
    if isinstance(domains_raw, str):
        domains_raw = [d for d in domains_raw.replace(",", ";").split(";")]
    domains: list[str] = []
    if not isinstance(domains_raw, list):
        errs.add("domains", "must be a list of domain keys", value=domains_raw)
    else:
        for i, d in enumerate(domains_raw):
            dk = str(d or "").strip()
            if not dk or not dk.replace("-", "").replace("_", "").isalnum() or len(dk) > 64:
                errs.add(f"domains[{i}]", "must be a domain key: letters, digits, - and _", value=d)
            elif dk not in domains:
                domains.append(dk)
    wording: dict[str, str] = {}
    for wkey, limit in (("task", 2000), ("item_noun", 100), ("source_noun", 100)):
        value = data.get(wkey)
        if value is not None and not isinstance(value, str):
            errs.add(wkey, "must be text", value=value)
        elif value is not None and len(value.strip()) > limit:
            errs.add(wkey, f"must be at most {limit} characters", value=value)
        wording[wkey] = " ".join(str(value or "").split())
    raw_dims = data.get("dimensions")
    if not isinstance(raw_dims, list) or not raw_dims:
        errs.add("dimensions", "must be a non-empty list")
        raw_dims = []

    dims: list[DimensionSpec] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_dims):
        where = f"dimensions[{i}]"
        if not isinstance(raw, dict):
            errs.add(where, "must be a mapping")
            continue
        dkey = str(raw.get("key") or "").strip()
        if not dkey:
            errs.add(f"{where}.key", "is required")
        elif len(dkey) > KEY_MAX or not dkey.replace("-", "").replace("_", "").isalnum():
            errs.add(
                f"{where}.key",
                f"must be letters, digits, - and _, at most {KEY_MAX} characters",
                value=dkey[:80],
            )
            dkey = ""
        if len(str(raw.get("name") or dkey)) > NAME_MAX:
            errs.add(f"{where}.name", f"must be at most {NAME_MAX} characters")
        elif dkey in seen:
            errs.add(f"{where}.key", "is used twice", value=dkey)
        scale = raw.get("scale") or {}
        lo = _int(scale.get("min") if isinstance(scale, dict) else None)
        hi = _int(scale.get("max") if isinstance(scale, dict) else None)
        if lo is None or hi is None:
            errs.add(f"{where}.scale", "needs integer min and max", value=scale)
        elif not -SCALE_LIMIT <= lo < hi <= SCALE_LIMIT:
            errs.add(
                f"{where}.scale",
                f"min must be below max, both between -{SCALE_LIMIT} and {SCALE_LIMIT}",
                value=scale,
            )
            lo = hi = None
        pass_above = raw.get("pass_above")
        pass_int = _int(pass_above)
        if pass_above is not None and (pass_int is None or abs(pass_int) > SCALE_LIMIT):
            errs.add(
                f"{where}.pass_above",
                f"must be an integer between -{SCALE_LIMIT} and {SCALE_LIMIT}",
                value=pass_above,
            )
        requires = raw.get("requires") or []
        if not isinstance(requires, list):
            errs.add(
                f"{where}.requires", "must be a list of earlier dimension keys", value=requires
            )
            requires = []
        for req in requires:
            if req not in seen:
                errs.add(f"{where}.requires", "must name an earlier dimension", value=req)
        levels_raw = raw.get("levels") or {}
        levels: dict[str, str] = {}
        if not isinstance(levels_raw, dict):
            errs.add(f"{where}.levels", "must map each score to its meaning")
        else:
            for level, meaning in levels_raw.items():
                lv = _int(level)
                if lv is None or (lo is not None and hi is not None and not lo <= lv <= hi):
                    errs.add(f"{where}.levels", "names a level off the scale", value=level)
                else:
                    levels[str(lv)] = str(meaning).strip()
        categories_raw = raw.get("categories") or []
        if not isinstance(categories_raw, list):
            errs.add(f"{where}.categories", "must be a list of levels", value=categories_raw)
            categories_raw = []
        categories = [c for c in categories_raw if _int(c) is not None]
        if any(abs(_int(c) or 0) > SCALE_LIMIT for c in categories):
            errs.add(f"{where}.categories", "names a level off the scale")
            categories = []
        questions = raw.get("questions") or []
        question_scores: dict[str, int] = {}
        if isinstance(questions, list) and len(questions) > 8:
            errs.add(f"{where}.questions", "must be at most 8 questions")
            questions = []
        if questions:
            if not isinstance(questions, list) or not all(
                isinstance(q, dict) and q.get("key") and q.get("text") for q in questions
            ):
                errs.add(f"{where}.questions", "must be a list of {key, text} mappings")
                questions = []
            for combo, score in (raw.get("question_scores") or {}).items():
                s = _int(score)
                if s is None or (lo is not None and hi is not None and not lo <= s <= hi):
                    errs.add(
                        f"{where}.question_scores", "maps to a score off the scale", value=combo
                    )
                else:
                    question_scores[str(combo)] = s
            expected = 2 ** len(questions)
            if questions and len(question_scores) != expected:
                errs.add(
                    f"{where}.question_scores",
                    f"must give a score for each of the {expected} answer combinations",
                )
        optional = raw.get("optional", False)
        if not isinstance(optional, bool):
            errs.add(f"{where}.optional", "must be true or false", value=optional)
            optional = False
        if dkey:
            seen.add(dkey)
        dims.append(
            DimensionSpec(
                key=dkey,
                name=str(raw.get("name") or dkey),
                description=str(raw.get("description") or "").strip(),
                scale_min=lo or 0,
                scale_max=hi or 0,
                levels=levels,
                pass_above=_int(pass_above),
                requires=[str(r) for r in requires],
                categories=[int(c) for c in categories],
                questions=[{"key": str(q["key"]), "text": str(q["text"])} for q in questions],
                question_scores=question_scores,
                optional=optional,
            )
        )
    errs.raise_if_any("The rubric file has errors; nothing was imported.")
    return RubricSpec(
        key=key,
        name=name,
        description=str(data.get("description") or "").strip(),
        dimensions=dims,
        domains=domains,
        **wording,
    )


def _known(model: Any, values: dict[str, Any]) -> dict[str, Any]:
    """Only the fields the model has: migrations pass historical models that predate some."""
    names = {f.name for f in model._meta.get_fields()}
    return {k: v for k, v in values.items() if k in names}


def save_rubric(
    spec: RubricSpec, *, rubric_model: Any, dimension_model: Any, make_default: bool
) -> Any:
    """Upsert a rubric and its dimensions by key.

    Takes the model classes so migrations can use it. Attaching domains is the importer's job.
    """
    rubric_values = {"name": spec.name, "description": spec.description}
    rubric_values.update({w: getattr(spec, w) for w in WORDING_FIELDS})
    rubric, _ = rubric_model.objects.update_or_create(
        key=spec.key, defaults=_known(rubric_model, rubric_values)
    )
    for position, d in enumerate(spec.dimensions):
        values = {f: getattr(d, f) for f in DIMENSION_FIELDS if f != "position"}
        dimension_model.objects.update_or_create(
            rubric=rubric,
            key=d.key,
            defaults=_known(dimension_model, {**values, "position": position}),
        )
    if make_default:
        rubric_model.objects.exclude(pk=rubric.pk).filter(is_default=True).update(is_default=False)
        rubric_model.objects.filter(pk=rubric.pk).update(is_default=True)
        rubric.is_default = True
    return rubric
