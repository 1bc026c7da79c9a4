"""Judge alignment metrics: pure functions over pandas frames, importable without Django.

Input frame ("finals"), one row per judge final prediction whose target reviewer scored the item:
  reviewer_id, idea_id, domain, dimension, kind, k, pred (float, NaN when nothing kept),
  truth (float, the reviewer's own score), kept, discarded, failed (ints); and reason (str)
  for reasoning_structure, which needs it only on its reasoned_rows.

Definitions follow SPEC "Metrics" and paper 001 section 5:
- alignment: Krippendorff's alpha between the judge's final predictions and the target reviewer's
  scores, units = (reviewer, idea), two coders (reviewer, judge), per configuration, k, dimension:
  the *pooled* alpha (paper 001's figure), next to the *per-reviewer* alpha, the level-only
  baseline and the judge's lift over it (engine.level, where they are defined);
- coarse alignment at the largest k, defined under ties (top_half_membership): each item's
  membership of a series' top half is 1 above the median, 0 below, and the items tied at the
  median share the rest of n / 2; Jaccard = sum of min / sum of max of the two memberships,
  top-half overlap = sum of min / the reviewer's n / 2. Unrelated series sit at chance (about
  0.33 and 0.5), never at 100 % for a tie block. Averaged over reviewers;
  a reviewer whose judge predictions (or own scores) are constant or nearly so (one value on
  >= 90 % of the items) has no such sets: their coarse metrics are undefined, with the reason;
- coverage: targets where the judge kept a prediction over all targets (alpha is over those);
- verdict: "well" / "partly" / "not_yet" from alpha, its bootstrap interval, n and coverage
  (thresholds below, documented in docs/judges.md);
- coverage-accuracy: as the confidence threshold moves, the share of predictions kept and the
  share of those exactly right;
- discard rate: predictions discarded for low confidence over predictions that returned a score;
- reasoning structure: per reviewer pair with shared items, agreement (mean alpha over shared
  dimensions) against the cosine similarity of their judges' reasons on the same items.

One module per metric family: figures (alpha, the level baseline and lift), coarse, verdicts,
coverage (coverage-accuracy, discards, case ideas), reasoning. Callers import the package
(`from apps.judges.engine import alignment`), which re-exports the public names.
"""

from apps.judges.engine.alignment.coarse import (
    NEAR_CONSTANT_SHARE,
    coarse_alignment,
    coarse_pair,
    constant_reason,
    jaccard,
    top_half_membership,
)
from apps.judges.engine.alignment.coverage import (
    COVERAGE_THRESHOLDS,
    case_idea_ids,
    coverage_accuracy,
    discard_rates,
)
from apps.judges.engine.alignment.figures import (
    KIND_ORDER,
    alignment_curve,
    alpha,
    frame_groups,
    judge_vs_truth_alpha,
)
from apps.judges.engine.alignment.reasoning import (
    pearson,
    reasoned_rows,
    reasoning_structure,
    sample_points,
)
from apps.judges.engine.alignment.verdicts import (
    VERDICT_LABELS,
    VERDICT_MIN_COVERAGE,
    VERDICT_MIN_N,
    VERDICT_PARTLY_ALPHA,
    VERDICT_RULE,
    VERDICT_WELL_ALPHA,
    VERDICT_WELL_LOWER,
    reviewer_verdicts,
    verdict,
    verdict_again,
)

__all__ = [
    "COVERAGE_THRESHOLDS",
    "KIND_ORDER",
    "NEAR_CONSTANT_SHARE",
    "VERDICT_LABELS",
    "VERDICT_MIN_COVERAGE",
    "VERDICT_MIN_N",
    "VERDICT_PARTLY_ALPHA",
    "VERDICT_RULE",
    "VERDICT_WELL_ALPHA",
    "VERDICT_WELL_LOWER",
    "alignment_curve",
    "alpha",
    "case_idea_ids",
    "coarse_alignment",
    "coarse_pair",
    "constant_reason",
    "coverage_accuracy",
    "discard_rates",
    "jaccard",
    "frame_groups",
    "judge_vs_truth_alpha",
    "pearson",
    "reasoned_rows",
    "reasoning_structure",
    "reviewer_verdicts",
    "sample_points",
    "top_half_membership",
    "verdict",
    "verdict_again",
]
