"""Index screening_rating.updated_at for the dashboards' freshness line.

"12 new ratings since" counts ratings changed after the snapshot's newest change; without this
index that count scans the whole table (80 ms at a million ratings, on every dashboard page).
The index belongs to the ratings table, but only the analytics read by this column, so it lives
here as raw SQL with no model state; if screening.Rating ever declares it in Meta.indexes, drop
this migration's effect with a follow-up.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("disagreement", "0001_initial"), ("screening", "0001_initial")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS disagreement_rating_updated_at_idx "
            "ON screening_rating (updated_at)",
            "DROP INDEX IF EXISTS disagreement_rating_updated_at_idx",
        )
    ]
