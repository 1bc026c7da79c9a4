from collections.abc import Iterable


def judge_ratings_changed(*, reviewer_ids: Iterable[int]) -> None:
    """Called after commit whenever these reviewers' ratings change. Schedules judge work."""
