"""The one rule for domains named by an import (issue 21.10).

A misspelled domain key in a patents file (or a rubric's `domains:` list) used to create a new
domain silently, and the file's `domain_name` renamed existing domains (importing the documented
example patents renamed the demo's). Now:

- once the installation holds ratings, a file that names a domain it does not have is refused
  unless the admin says so explicitly (`--create-domains`, the "Create new domains" box,
  `create_domains=true` on the API); a new, empty installation creates them freely, so a first
  import needs no flag;
- an import never renames an existing domain: a different `domain_name` is reported in a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from apps.catalog.models import Domain
from apps.core.errors import ApplicationError, FieldError
from apps.screening.models import Rating

HOW_TO_ALLOW = (
    "check the spelling, or allow new domains explicitly (--create-domains on the command, "
    '"Create new domains" on the page, create_domains=true on the API)'
)


def check_new_domains(
    new: Sequence[str],
    *,
    allowed: bool,
    field: str = "domain",
    rows: Mapping[str, int | None] | None = None,
) -> None:
    """Refuse domains that do not exist yet, unless `allowed` or nothing is rated yet."""
    if not new or allowed or not Rating.objects.exists():
        return
    known = ", ".join(sorted(Domain.objects.values_list("key", flat=True))) or "none"
    raise ApplicationError(
        "The file names domains this installation does not have; nothing was imported.",
        errors=[
            FieldError(
                field=field,
                message=f"is not a domain here (known: {known}): {HOW_TO_ALLOW}",
                row=(rows or {}).get(key),
                value=key,
            )
            for key in new
        ],
    )


def kept_name_note(key: str, current: str, given: str) -> str:
    return (
        f"Domain {key} keeps its name {current!r}: imports never rename a domain "
        f"(the file says {given!r}; rename it in the Django admin)."
    )
