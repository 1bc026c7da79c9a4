"""Index screening_rating.created_at for the dashboards' date filter (by when a rating was made).

Raw SQL with no model state, as 0002 does for updated_at (only the analytics filter by it).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("disagreement", "0003_snapshot_categories_and_board")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS disagreement_rating_created_at_idx "
            "ON screening_rating (created_at)",
            "DROP INDEX IF EXISTS disagreement_rating_created_at_idx",
        )
    ]
