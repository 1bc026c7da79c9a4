def metrics_mark_stale() -> None:
    """Called after commit whenever ratings change. Schedules a debounced metrics recompute."""
