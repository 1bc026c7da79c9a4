"""HTML views of the screening app: the reviewer's queue and rating pages, the managers' table."""

from apps.screening.views.queue import queue
from apps.screening.views.rate import idea_decline, idea_decline_undo, idea_rate
from apps.screening.views.ratings import ratings

__all__ = ["idea_decline", "idea_decline_undo", "idea_rate", "queue", "ratings"]
