"""The one application error type that services raise; views and APIs translate it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FieldError:
    """One problem with one value. `row` is 1-based (the header is row 1) for file imports."""

    field: str
    message: str
    row: int | None = None
    value: str | None = None

    def __str__(self) -> str:
        where = f"row {self.row}, " if self.row is not None else ""
        shown = f" (got {self.value!r})" if self.value not in (None, "") else ""
        return f"{where}{self.field}: {self.message}{shown}"

    def as_dict(self) -> dict[str, object]:
        return {"row": self.row, "field": self.field, "message": self.message, "value": self.value}


class ApplicationError(Exception):
    def __init__(self, message: str, *, errors: list[FieldError] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors: list[FieldError] = errors or []

    def __str__(self) -> str:
        if not self.errors:
            return self.message
        return self.message + "\n" + "\n".join(f"  {e}" for e in self.errors)

    def as_dict(self) -> dict[str, object]:
        return {"detail": self.message, "errors": [e.as_dict() for e in self.errors]}


class PermissionDenied(ApplicationError):
    pass


class NotFound(ApplicationError):
    pass


class ServiceUnavailable(ApplicationError):
    """A dependency (the database, the broker) cannot be reached: 503, try again later.

    ``errors`` holds one row per unreachable dependency, its name in ``field``."""


@dataclass
class ErrorCollector:
    """Collects every error of a multi-row operation so they can be reported all at once."""

    errors: list[FieldError] = field(default_factory=list)

    def add(
        self, field: str, message: str, *, row: int | None = None, value: object = None
    ) -> None:
        self.errors.append(
            FieldError(
                field=field, message=message, row=row, value=None if value is None else str(value)
            )
        )

    def raise_if_any(self, message: str) -> None:
        if self.errors:
            raise ApplicationError(message, errors=self.errors)
