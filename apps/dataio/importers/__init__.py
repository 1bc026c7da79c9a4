"""One module per import kind; apps.dataio.services.imports.import_file dispatches to them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class ImportResult:
    """What an import did (or, for a dry run, would do). Counts are of stored records."""

    kind: str
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    dry_run: bool = False
    rows: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    def summary(self) -> str:
        counts = f"{self.created} created, {self.updated} updated, {self.unchanged} unchanged"
        if self.dry_run:
            return (
                f"Dry run of {self.kind} ({self.rows} rows read), nothing saved: would be {counts}."
            )
        return f"Imported {self.kind} ({self.rows} rows read): {counts}."

    def as_dict(self) -> dict[str, object]:
        return asdict(self)
