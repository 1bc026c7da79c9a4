"""The one entry point for admin data imports (files from the admin page, the API, the CLI)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol, cast

from django.conf import settings
from django.db import transaction

from apps.accounts.models import User
from apps.catalog.models import Idea, ImportJob, Patent
from apps.core import table_statistics
from apps.core.errors import ApplicationError, FieldError, PermissionDenied
from apps.dataio.importers import ImportResult
from apps.dataio.importers.ideas import import_ideas
from apps.dataio.importers.patents import import_patents
from apps.dataio.importers.ratings import import_ratings
from apps.dataio.importers.reviewers import import_reviewers
from apps.dataio.importers.rubric import import_rubric
from apps.dataio.importers.streams import ImportContent, is_empty
from apps.screening.models import Rating

__all__ = ["IMPORT_KINDS", "ImportResult", "UploadOutcome", "import_file", "import_upload"]

logger = logging.getLogger(__name__)

# In the order a new installation loads them: each kind refers to the ones before it.
IMPORT_KINDS = ("rubric", "patents", "ideas", "reviewers", "ratings")
# The tables an import grows by thousands of rows at once; their statistics are refreshed
# after its commit (apps.core.table_statistics), before the judge runs it triggers plan on them.
BULK_IMPORTED = (Patent, Idea, User, Rating)


def import_file(
    *,
    kind: str,
    content: ImportContent,
    filename: str,
    dry_run: bool = False,
    actor: Any = None,
    make_default: bool = False,
    domains: Sequence[str] = (),
    create_domains: bool = False,
    restore: bool = False,
) -> ImportResult:
    """Validate a whole file and, unless `dry_run`, store it; all or nothing.

    `content` is the file's bytes or a binary file object (an upload, an open file): CSV and
    JSON Lines are read from it as a stream, never held whole (apps.dataio.importers.streams).

    Every problem in the file is reported at once as an ApplicationError whose FieldErrors name
    the row, the field and the value. Records are upserted by their natural key (external id,
    username, (idea, reviewer, dimension)), so importing the same file twice changes nothing the
    second time. A dry run performs the writes inside the transaction and rolls them back, so its
    counts are exactly what a real import would do. `actor=None` is the system (CLI, demo).
    `make_default` and `domains` apply to rubrics: the default rubric, and domains to attach.
    `create_domains` lets a patents or rubric file create domains once ratings exist
    (apps.dataio.importers.domains). `restore` is the installation archive's restore: it
    accepts what the product stored before a rule was enforced everywhere (an idea without a
    title or a description), with a note.
    """
    if kind not in IMPORT_KINDS:
        raise ApplicationError(
            "Unknown import kind.",
            errors=[
                FieldError(
                    field="kind", message="must be one of: " + ", ".join(IMPORT_KINDS), value=kind
                )
            ],
        )
    if actor is not None and not getattr(actor, "is_admin", False):
        raise PermissionDenied("Only admins import data.")
    if is_empty(content):
        raise ApplicationError(
            "The file is empty.",
            errors=[FieldError(field="file", message="is empty", value=filename)],
        )

    with transaction.atomic():
        if kind == "rubric":
            result = import_rubric(
                content=content,
                filename=filename,
                actor=actor,
                make_default=make_default,
                domains=domains,
                create_domains=create_domains,
            )
        elif kind == "patents":
            result = import_patents(
                content=content, filename=filename, actor=actor, create_domains=create_domains
            )
        elif kind == "ideas":
            result = import_ideas(content=content, filename=filename, actor=actor, restore=restore)
        elif kind == "reviewers":
            result = import_reviewers(content=content, filename=filename, actor=actor)
        else:
            result = import_ratings(
                content=content, filename=filename, actor=actor, dry_run=dry_run
            )
        result.dry_run = dry_run
        if dry_run:
            transaction.set_rollback(True)
        else:
            transaction.on_commit(lambda: table_statistics.analyze_stale(BULK_IMPORTED))
    logger.info("import %s from %s: %s", kind, filename, result.summary())
    return result


class UploadedFile(Protocol):
    name: str | None

    def read(self, size: int = -1, /) -> bytes: ...

    def seek(self, offset: int, whence: int = 0, /) -> int: ...


@dataclass
class UploadOutcome:
    """What one uploaded file did, as the admin page, the Django admin and the API show it."""

    ok: bool
    filename: str
    result: ImportResult | None = None
    message: str = ""
    errors: list[FieldError] = field(default_factory=list)
    # A large upload queued for the worker (apps.dataio.services.import_jobs): no result yet.
    job: ImportJob | None = None
    # Refused because the admin has too many imports waiting (the API answers 429).
    throttled: bool = False

    def error_body(self) -> dict[str, object]:
        return {"detail": self.message, "errors": [e.as_dict() for e in self.errors]}


def import_upload(
    *,
    kind: str,
    upload: UploadedFile,
    actor: Any,
    dry_run: bool = False,
    make_default: bool = False,
    domains: Sequence[str] = (),
    create_domains: bool = False,
) -> UploadOutcome:
    """The one adapter from an uploaded file to `import_file`: every refusal becomes an outcome
    (never an exception), so each caller only renders it."""
    filename = upload.name or ""
    limit = int(settings.IMPORT_MAX_BYTES)
    size = int(getattr(upload, "size", 0) or 0)
    if size > limit:
        # Refused before it is read: its frame in memory is several times its size.
        return UploadOutcome(
            ok=False,
            filename=filename,
            message="The file is too large; nothing was imported.",
            errors=[
                FieldError(
                    field="file",
                    message=f"is {size} bytes; at most {limit} (IMPORT_MAX_BYTES): "
                    "split it into several files",
                    value=filename,
                )
            ],
        )
    try:
        result = import_file(
            kind=kind,
            # The upload itself, read as a stream (Django keeps large uploads on disk; its
            # UploadedFile proxies the file API).
            content=cast(IO[bytes], upload),
            filename=filename,
            dry_run=dry_run,
            actor=actor,
            make_default=make_default,
            domains=domains,
            create_domains=create_domains,
        )
    except ApplicationError as exc:
        return UploadOutcome(ok=False, filename=filename, message=exc.message, errors=exc.errors)
    return UploadOutcome(ok=True, filename=filename, result=result)
