"""Empirical confidence calibration (pure; no Django).

Contract used by the run execution:
- fit_calibration(raw_confidence, correct) -> Calibration, fitted on leave-one-out predictions
  (raw 0-100 confidences and whether each prediction was exactly right);
- Calibration.apply(raw_confidence) -> calibrated 0-100 ints (array in, array out);
- Calibration.to_dict() / Calibration.from_dict(d): JSON-safe, for storing the fit;
- cross_fit_confidence(raw_confidence, correct, groups) -> calibrated 0-100 ints, each row
  calibrated by a fit that did not see its own group (e.g. groups = reviewer ids), so the
  confidences of an evaluation are not fitted on themselves.
After calibration, among predictions with confidence >= c, about c % are exactly right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Calibration:
    """Placeholder (identity) until the offline judge lands."""

    def apply(self, raw_confidence: Sequence[float] | np.ndarray) -> np.ndarray:
        return np.clip(np.rint(np.asarray(raw_confidence, dtype=float)), 0, 100).astype(int)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "identity"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        return cls()


def fit_calibration(
    raw_confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray
) -> Calibration:
    return Calibration()


def cross_fit_confidence(
    raw_confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    groups: Sequence[int] | np.ndarray,
) -> np.ndarray:
    return Calibration().apply(raw_confidence)
