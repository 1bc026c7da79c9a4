"""The panel study's figures: does a panel agree with the real reviewers, and does debate help?

Per dimension, over the ideas the panel scored that people rated too:
- ``alpha_single``, ``alpha_before``, ``alpha_after``: Krippendorff's alpha (interval) between two
  coders, the reviewers' mean score of each idea and the judge's score (the single judge; the
  panel's aggregate before debate; after debate). 1 = the judge reproduces the reviewers' mean,
  0 = no better than chance, NaN/None when undefined (fewer than two ideas, or no variation).
- ``mae_*``: mean absolute difference from the reviewers' mean, on the scale's units.
- ``alpha_reviewers``: the baseline, the reviewers' alpha among themselves (interval).
- ``standin_alpha_before/after`` (personas built from reviewers only): each persona stands in
  for its own reviewer; alpha over the (idea, reviewer) pairs, coders = the person and the
  persona.
- ``switch_to_majority_rate``: of the times a member held a minority score going into a debate
  round (the panel's previous-round scores had one most common value and the member's differed),
  the share that came out of the round on that majority value. Agents copying the majority
  (the failure the literature reports up to 85 %) show as a rate near 1.
- ``debate_effect``: ``toward`` if debate lowered the distance to the reviewers' mean, ``away``
  if it raised it, ``unchanged`` otherwise, with a bootstrap 95 % interval of the change
  (resampling ideas) so a move inside the noise is named as such.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from apps.disagreement.analysis.alpha import alpha_from_long, krippendorff_alpha

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 20


def _clean(value: float | None) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(float(value), 4)


def pair_alpha(a: np.ndarray, b: np.ndarray) -> float | None:
    """Interval alpha of two coders over the same units (NaN = missing)."""
    data = np.vstack([np.asarray(a, float), np.asarray(b, float)])
    if data.shape[1] < 2:
        return None
    return _clean(krippendorff_alpha(data, level="interval"))


def majority_value(scores: dict[int, int]) -> int | None:
    """The single most common score, or None when there is a tie for most common."""
    if not scores:
        return None
    counts = Counter(scores.values()).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def switch_counts(rounds: list[dict[int, int]]) -> tuple[int, int]:
    """(switches to the majority, minority positions) over one debate's rounds."""
    switches = opportunities = 0
    for before, after in zip(rounds, rounds[1:], strict=False):
        majority = majority_value(before)
        if majority is None:
            continue
        for member, score in before.items():
            if score != majority and member in after:
                opportunities += 1
                switches += int(after[member] == majority)
    return switches, opportunities


def _bootstrap_change(before: np.ndarray, after: np.ndarray) -> tuple[float, float] | None:
    """95 % interval of mean(after) - mean(before), resampling ideas."""
    n = len(before)
    if n < 2:
        return None
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    idx = rng.integers(0, n, size=(BOOTSTRAP_SAMPLES, n))
    diffs = after[idx].mean(axis=1) - before[idx].mean(axis=1)
    return float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))


def debate_effect(mae_before: float | None, mae_after: float | None, ci: Any) -> dict[str, Any]:
    if mae_before is None or mae_after is None:
        return {"direction": "undefined", "sentence": "Too few ideas rated by people to tell."}
    change = mae_after - mae_before
    direction = "toward" if change < 0 else "away" if change > 0 else "unchanged"
    noise = ci is not None and ci[0] <= 0 <= ci[1]
    if direction == "unchanged":
        sentence = "Debate did not change the panel's distance to the reviewers."
    else:
        sentence = (
            f"Debate moved the panel {direction} {'from ' if direction == 'away' else ''}"
            f"the reviewers: its distance to their mean went from {mae_before:.2f} to "
            f"{mae_after:.2f}"
        )
        if ci is not None:
            sentence += f" (95 % interval of the change {ci[0]:+.2f} to {ci[1]:+.2f}"
            sentence += ", within the noise)." if noise else ")."
        else:
            sentence += "."
    return {
        "direction": direction,
        "change": round(change, 4),
        "ci95": [round(ci[0], 4), round(ci[1], 4)] if ci is not None else None,
        "within_noise": bool(noise) if ci is not None else None,
        "sentence": sentence,
    }


def study_figures(
    *,
    humans: pd.DataFrame,
    debates: pd.DataFrame,
    members: pd.DataFrame,
    persona_reviewer: dict[int, int],
    rounds: dict[Any, list[dict[int, int]]],
) -> dict[str, dict[str, Any]]:
    """Figures per dimension key.

    humans: idea, dimension, reviewer, score (scored ratings only).
    debates: debate, idea, dimension, single, before, after (panel aggregates; NaN = none).
    members: debate, idea, dimension, member, before, after (each member's first and last score).
    persona_reviewer: member key -> the reviewer it was built from (reviewer personas only).
    rounds: debate -> its rounds of member scores (for the switch rate).
    """
    out: dict[str, dict[str, Any]] = {}
    for dim in sorted(set(debates["dimension"])) if len(debates) else []:
        d = debates[debates["dimension"] == dim]
        h = humans[humans["dimension"] == dim]
        people = h.groupby("idea")["score"].mean()
        rated = d[d["idea"].isin(people.index)]
        ref = people.reindex(rated["idea"]).to_numpy(float)
        fig: dict[str, Any] = {
            "ideas": int(len(d)),
            "ideas_rated_by_people": int(len(rated)),
            "alpha_reviewers": _clean(
                alpha_from_long(h, "idea", "reviewer", "score", level="interval")
            )
            if len(h)
            else None,
        }
        maes: dict[str, float | None] = {}
        for stage in ("single", "before", "after"):
            values = rated[stage].to_numpy(float)
            fig[f"alpha_{stage}"] = pair_alpha(ref, values) if len(rated) else None
            ok = ~np.isnan(values) & ~np.isnan(ref)
            maes[stage] = float(np.abs(values[ok] - ref[ok]).mean()) if ok.any() else None
            fig[f"mae_{stage}"] = _clean(maes[stage])
        m = members[members["dimension"] == dim]
        if persona_reviewer and len(m):
            m = m.assign(reviewer=m["member"].map(persona_reviewer)).dropna(subset=["reviewer"])
            joined = m.merge(
                h.rename(columns={"score": "person"}), on=["idea", "reviewer"], how="inner"
            )
            for stage in ("before", "after"):
                fig[f"standin_alpha_{stage}"] = (
                    pair_alpha(joined["person"].to_numpy(float), joined[stage].to_numpy(float))
                    if len(joined)
                    else None
                )
            fig["standin_pairs"] = int(len(joined))
        switches = opportunities = 0
        for debate_id in d["debate"]:
            s, o = switch_counts(rounds.get(debate_id, []))
            switches += s
            opportunities += o
        fig["switches"] = switches
        fig["minority_positions"] = opportunities
        fig["switch_to_majority_rate"] = (
            round(switches / opportunities, 4) if opportunities else None
        )
        ok = ~np.isnan(rated["before"].to_numpy(float)) & ~np.isnan(rated["after"].to_numpy(float))
        ok &= ~np.isnan(ref)
        ci = _bootstrap_change(
            np.abs(rated["before"].to_numpy(float)[ok] - ref[ok]),
            np.abs(rated["after"].to_numpy(float)[ok] - ref[ok]),
        )
        fig["debate_effect"] = debate_effect(maes["before"], maes["after"], ci)
        out[str(dim)] = fig
    return out


def overall_switch_rate(rounds: dict[Any, list[dict[int, int]]]) -> dict[str, Any]:
    switches = opportunities = 0
    for debate_rounds in rounds.values():
        s, o = switch_counts(debate_rounds)
        switches += s
        opportunities += o
    return {
        "switches": switches,
        "minority_positions": opportunities,
        "switch_to_majority_rate": round(switches / opportunities, 4) if opportunities else None,
    }
