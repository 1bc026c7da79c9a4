from django.db import models


class TimestampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


# The order in which stored snapshots (metrics, judge alignment) are "newest": by when a worker
# claimed them and read their data (started_at), not by when they finished. Two claimed one after
# the other may finish in the other order, and the dashboard would then show the older data.
SNAPSHOT_NEWEST_FIRST = (models.F("started_at").desc(nulls_last=True), "-id")
