"""Bulk upsert of rows identified by a natural key (external id, username).

The incoming frame is compared with what the database holds, in pandas, so that re-importing the
same file writes nothing: unchanged rows are counted, changed rows are rewritten with one
INSERT ... ON CONFLICT DO UPDATE per batch, new rows are bulk-inserted. Columns the file does not
carry keep their stored values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from django.db import models

from apps.dataio.importers.common import chunked

BATCH = 2000


@dataclass
class UpsertCounts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0


def existing_frame(
    model: type[models.Model], key: str, keys: Sequence[str], fields: Sequence[str]
) -> pd.DataFrame:
    rows: list[tuple] = []
    for part in chunked(list(keys), 5000):
        rows.extend(
            model._default_manager.filter(**{f"{key}__in": part}).values_list(key, "id", *fields)
        )
    return pd.DataFrame(rows, columns=[key, "id", *fields], dtype=object)


def upsert(
    model: type[models.Model],
    *,
    key: str,
    frame: pd.DataFrame,
    fields: Sequence[str],
    all_fields: Sequence[str],
    defaults: dict[str, object] | None = None,
) -> tuple[UpsertCounts, dict[str, int]]:
    """Upsert `frame` (one row per key; columns key + `fields`) into `model`.

    `all_fields` are every writable field, so an ON CONFLICT row can be built for a changed record
    even when the file omits some columns (they keep their stored values). Returns the counts and
    the id of every key.
    """
    defaults = defaults or {}
    frame = frame.reset_index(drop=True)
    old = existing_frame(model, key, frame[key].tolist(), all_fields)
    merged = frame.merge(old, on=key, how="left", suffixes=("", "_old"), indicator=True)
    is_new = merged["_merge"] == "left_only"
    counts = UpsertCounts(created=int(is_new.sum()))

    exists = merged.loc[~is_new]
    if not exists.empty:
        changed = pd.Series(False, index=exists.index)
        for f in fields:
            old_col = f + "_old" if f + "_old" in exists.columns else f
            changed |= exists[f].astype(object).map(_norm) != exists[old_col].astype(object).map(
                _norm
            )
        counts.updated = int(changed.sum())
        counts.unchanged = int(len(exists) - counts.updated)
        upd = exists.loc[changed]
        if not upd.empty:
            objs = []
            for rec in upd.to_dict("records"):
                values = {}
                for f in all_fields:
                    values[f] = rec[f] if f in fields else rec.get(f + "_old", rec.get(f))
                objs.append(model(**{key: rec[key]}, **values))
            for part in chunked(objs, BATCH):
                model._default_manager.bulk_create(
                    part,
                    update_conflicts=True,
                    unique_fields=[key],
                    update_fields=[*fields, "updated_at"]
                    if _has(model, "updated_at")
                    else list(fields),
                )

    new = merged.loc[is_new]
    if not new.empty:
        objs = []
        for rec in new[[key, *fields]].to_dict("records"):
            values = {**defaults, **{f: rec[f] for f in fields}}
            objs.append(model(**{key: rec[key]}, **values))
        for part in chunked(objs, BATCH):
            model._default_manager.bulk_create(part, batch_size=BATCH)

    ids = dict(
        existing_frame(model, key, frame[key].tolist(), [])[[key, "id"]].itertuples(
            index=False, name=None
        )
    )
    return counts, ids


def _has(model: type[models.Model], name: str) -> bool:
    return any(f.name == name for f in model._meta.concrete_fields)


def _norm(value: object) -> object:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
