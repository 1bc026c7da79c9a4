"""Judge configurations: the one validator, and the writes (create, update, delete, defaults).

`judge_config_errors` is the only home of the rules a configuration must follow (bounds of every
numeric field, the allowed kinds and backends, the SSRF allowlist for `base_url`). The admin form
(apps.judges.forms.JudgeConfigForm), the API serializer and the services all call it, so a value
refused in one place is refused, with the same message, in every other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import IntegrityError, transaction

from apps.accounts.models import User
from apps.core.errors import ApplicationError, FieldError
from apps.judges.models import JudgeConfig, JudgeHistory

# The paper's k sweep: what studies (admin form, API, judge_study) use by default.
DEFAULT_SHOTS = [0, 1, 2, 5, 9]
# The automatic configurations evaluate fewer k: every reviewer, domain and dimension is
# re-evaluated after each burst of new ratings, and each k costs seeds x items judge calls.
# k = 2 and k = 9 (with zero-shot at k = 0) still draw alpha-against-k lines; the full sweep is
# a study's job (see docs/judges.md, "Automatic runs").
AUTO_SHOTS = [2, 9]
CONFIG_FIELDS = [
    "name",
    "kind",
    "backend",
    "model",
    "base_url",
    "shots",
    "seeds",
    "temperature",
    "confidence_threshold",
    "min_history",
    "concurrency",
    "is_active",
    "auto",
    "panel_evidence",
]
# Inclusive bounds of every numeric field (issue 9.3: a value the database cannot hold must be a
# clear error naming the field, never "smallint out of range").
BOUNDS: dict[str, tuple[float, float]] = {
    "shots": (0, 50),  # each k
    "seeds": (1, 10),
    "temperature": (0.0, 2.0),
    "confidence_threshold": (0, 100),
    "min_history": (1, 1000),
    "concurrency": (1, 64),
}
MAX_SHOT_VALUES = 10
MAX_LENGTHS = {"name": 100, "model": 200, "base_url": 200}


def default_backend() -> str:
    """An LLM when one is configured, otherwise the local statistical baseline."""
    return JudgeConfig.Backend.OPENAI if settings.LLM_BASE_URL else JudgeConfig.Backend.LOCAL


def default_threshold(backend: str) -> int:
    """The confidence threshold new configurations get (settings, see config/settings/base.py)."""
    if backend == JudgeConfig.Backend.OPENAI:
        return int(settings.JUDGE_LLM_CONFIDENCE_THRESHOLD)
    return int(settings.JUDGE_LOCAL_CONFIDENCE_THRESHOLD)


def _normalised_url(url: str) -> str:
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}"


def allowed_base_urls() -> list[str]:
    """LLM_BASE_URL is always allowed; anything else must be in LLM_ALLOWED_BASE_URLS."""
    urls = [settings.LLM_BASE_URL, *settings.LLM_ALLOWED_BASE_URLS]
    return sorted({_normalised_url(u) for u in urls if u})


def base_url_error(url: str) -> str:
    """Why this endpoint may not be used ("" when it may). An admin could otherwise point a
    configuration at the app's own internal services (SSRF): only listed endpoints are called."""
    if not url:
        return ""
    try:
        URLValidator(schemes=["http", "https"])(url)
    except ValidationError:
        return "must be an http(s) URL"
    if _normalised_url(url) in allowed_base_urls():
        return ""
    return (
        "is not an allowed LLM endpoint: use LLM_BASE_URL or an address listed in the "
        "LLM_ALLOWED_BASE_URLS setting"
    )


def config_run_error(*, backend: str, base_url: str) -> FieldError | None:
    """Why a configuration with this backend and endpoint cannot run under the running settings
    (None when it can). The one home of this rule: creating or editing a configuration refuses
    it (API and form), a study refuses to start with it, the automatic runs skip it and the
    judges page says why (issue 29: an openai configuration without an endpoint while
    LLM_BASE_URL was empty joined the automatic runs and failed them whole)."""
    if backend != JudgeConfig.Backend.OPENAI:
        return None
    if not base_url and not settings.LLM_BASE_URL:
        return FieldError(
            "base_url",
            "is required for the openai backend while the LLM_BASE_URL setting is empty: give "
            "the endpoint, or choose the local backend",
        )
    problem = base_url_error(base_url)
    return FieldError("base_url", problem, value=base_url) if problem else None


def config_cannot_run(config: JudgeConfig, *, backend: str = "") -> str:
    """Why this stored configuration cannot run now ("" when it can); `backend` is a study's
    override of every configuration's backend."""
    error = config_run_error(backend=backend or config.backend, base_url=config.base_url)
    return "" if error is None else f"{error.field} {error.message}"


def _number(data: Mapping[str, Any], name: str, errors: list[FieldError], *, whole: bool) -> Any:
    value = data[name]
    low, high = BOUNDS[name]
    try:
        if isinstance(value, bool):
            raise TypeError
        number = float(value)
        if whole and (not math.isfinite(number) or number != int(number)):
            raise ValueError
        number = int(number) if whole else number
    except (TypeError, ValueError):
        kind = "a whole number" if whole else "a number"
        errors.append(FieldError(name, f"must be {kind}", value=str(value)))
        return value
    if not math.isfinite(number) or not low <= number <= high:
        shown_low, shown_high = (int(low), int(high)) if whole else (low, high)
        errors.append(
            FieldError(name, f"must be between {shown_low} and {shown_high}", value=str(value))
        )
    return number


def judge_config_errors(data: Mapping[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
    """Check the given fields of a configuration (absent fields are not checked: partial
    updates). Returns (the cleaned values, the problems); each problem names its field."""
    errors: list[FieldError] = []
    clean = dict(data)
    for name, limit in MAX_LENGTHS.items():
        if name in data and len(str(data[name] or "")) > limit:
            errors.append(FieldError(name, f"must be at most {limit} characters"))
    if "name" in data and not str(data["name"] or "").strip():
        errors.append(FieldError("name", "must not be empty"))
    if "kind" in data and data["kind"] not in JudgeConfig.Kind.values:
        errors.append(
            FieldError(
                "kind", "must be zero_shot, aggregate or personalized", value=str(data["kind"])
            )
        )
    if "backend" in data and data["backend"] not in JudgeConfig.Backend.values:
        errors.append(FieldError("backend", "must be openai or local", value=str(data["backend"])))
    if "shots" in data:
        raw = data["shots"]
        shots = raw if isinstance(raw, list | tuple) else [raw]
        try:
            ks = [int(k) for k in shots if not isinstance(k, bool)]
            if len(ks) != len(shots) or any(float(k) != int(k) for k in shots):
                raise ValueError
        except (TypeError, ValueError, OverflowError):
            errors.append(FieldError("shots", "must be whole numbers", value=str(raw)))
        else:
            low, high = BOUNDS["shots"]
            if any(not low <= k <= high for k in ks):
                errors.append(
                    FieldError(
                        "shots",
                        f"each k must be between {int(low)} and {int(high)}",
                        value=str(raw),
                    )
                )
            elif len(set(ks)) > MAX_SHOT_VALUES:
                errors.append(
                    FieldError("shots", f"give at most {MAX_SHOT_VALUES} k values", value=str(raw))
                )
            clean["shots"] = sorted(set(ks))
    for name in ("seeds", "confidence_threshold", "min_history", "concurrency"):
        if name in data:
            clean[name] = _number(data, name, errors, whole=True)
    if "temperature" in data:
        clean["temperature"] = _number(data, "temperature", errors, whole=False)
    for name in ("panel_evidence",):
        if name in data and not isinstance(data[name], bool):
            errors.append(FieldError(name, "must be true or false", value=str(data[name])))
    if "base_url" in data:
        problem = base_url_error(str(data["base_url"] or ""))
        if problem:
            errors.append(FieldError("base_url", problem, value=str(data["base_url"])))
    return clean, errors


def judge_config_clean(data: Mapping[str, Any]) -> dict[str, Any]:
    """`judge_config_errors`, raising the application error when anything is wrong."""
    clean, errors = judge_config_errors(data)
    if errors:
        raise ApplicationError("The judge configuration was not saved.", errors=errors)
    return clean


def config_snapshot(config: JudgeConfig) -> dict[str, Any]:
    return {f: getattr(config, f) for f in CONFIG_FIELDS}


@transaction.atomic
def judge_config_create(*, by: User | None, **data: Any) -> JudgeConfig:
    data = judge_config_clean(data)
    cannot_run = config_run_error(
        backend=data.get("backend", default_backend()), base_url=data.get("base_url", "")
    )
    if cannot_run is not None:
        raise ApplicationError("The judge configuration was not saved.", errors=[cannot_run])
    if JudgeConfig.objects.filter(name=data.get("name", "")).exists():
        raise ApplicationError(
            "The judge configuration was not saved.",
            errors=[FieldError("name", "already in use", value=data.get("name"))],
        )
    if "confidence_threshold" not in data:
        data["confidence_threshold"] = default_threshold(data.get("backend", default_backend()))
    config = JudgeConfig.objects.create(**data)
    JudgeHistory.objects.create(
        event=JudgeHistory.Event.CONFIG_CREATED,
        config=config,
        changed_by=by,
        new_value=config_snapshot(config),
    )
    return config


@transaction.atomic
def judge_config_update(*, config: JudgeConfig, by: User | None, **data: Any) -> JudgeConfig:
    data = judge_config_clean(data)
    config = JudgeConfig.objects.select_for_update().get(pk=config.pk)
    # Only a change of endpoint is checked: a configuration the settings left behind can still
    # be renamed or deactivated.
    cannot_run = (
        config_run_error(
            backend=data.get("backend", config.backend),
            base_url=data.get("base_url", config.base_url),
        )
        if "backend" in data or "base_url" in data
        else None
    )
    if cannot_run is not None:
        raise ApplicationError("The judge configuration was not saved.", errors=[cannot_run])
    if (
        "name" in data
        and JudgeConfig.objects.filter(name=data["name"]).exclude(pk=config.pk).exists()
    ):
        raise ApplicationError(
            "The judge configuration was not saved.",
            errors=[FieldError("name", "already in use", value=data["name"])],
        )
    old = config_snapshot(config)
    for name, value in data.items():
        if name in CONFIG_FIELDS:
            setattr(config, name, value)
    new = config_snapshot(config)
    if new != old:
        config.save()
        changed = [f for f in CONFIG_FIELDS if old[f] != new[f]]
        JudgeHistory.objects.create(
            event=JudgeHistory.Event.CONFIG_CHANGED,
            config=config,
            changed_by=by,
            old_value={f: old[f] for f in changed},
            new_value={f: new[f] for f in changed},
        )
    return config


@transaction.atomic
def judge_config_delete(*, config: JudgeConfig, by: User | None) -> None:
    """Deactivating keeps old predictions readable; deleting is refused once runs used it."""
    if config.runs.exists():
        raise ApplicationError(
            f"Configuration {config.name!r} was used by judge runs; "
            "deactivate it instead (is_active=false)."
        )
    JudgeHistory.objects.create(
        event=JudgeHistory.Event.CONFIG_DELETED,
        config=config,
        changed_by=by,
        old_value=config_snapshot(config),
    )
    config.delete()


def judge_configs_ensure_defaults() -> None:
    """Create the three paper configurations once, on the default backend, if none exist."""
    if JudgeConfig.objects.exists():
        return
    backend = default_backend()
    for kind, shots in (
        ("zero_shot", [0]),
        ("aggregate", AUTO_SHOTS),
        ("personalized", AUTO_SHOTS),
    ):
        try:
            with transaction.atomic():
                config, created = JudgeConfig.objects.get_or_create(
                    name=f"{kind.replace('_', '-')} (default)",
                    defaults={
                        "kind": kind,
                        "backend": backend,
                        "shots": shots,
                        "confidence_threshold": default_threshold(backend),
                    },
                )
                if created:
                    JudgeHistory.objects.create(
                        event=JudgeHistory.Event.CONFIG_CREATED,
                        config=config,
                        new_value=config_snapshot(config),
                        note="default",
                    )
        except IntegrityError:  # created concurrently by another process
            pass
