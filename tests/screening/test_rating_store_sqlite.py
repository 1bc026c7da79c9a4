"""The one rating storage path runs unchanged on SQLite (the local demo setup): form submissions,
imports, history rules and the archive, in a separate process on the local settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
import apps.dataio.importers.ratings as importer
import apps.screening.services.ratings as services
from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.dataio.services.archive import installation_export
from apps.dataio.services.imports import import_file
from apps.screening.models import Assignment, Dimension, Rating, RatingHistory

# Other apps' after-commit reactions are not what this checks.
services.ratings_changed = importer.ratings_changed = lambda *, reviewer_ids: None
examples = "docs/examples/"
for kind in ("patents", "ideas", "reviewers", "ratings", "ratings"):
    result = import_file(kind=kind, content=open(examples + kind + ".csv", "rb").read(),
                         filename=kind + ".csv")
assert (result.created, result.updated, result.unchanged) == (0, 0, 42), result.summary()
alice, idea = User.objects.get(username="alice"), Idea.objects.get(external_id="idea-004")
Assignment.objects.get_or_create(reviewer=alice, idea=idea)
Dimension.objects.filter(key="innovativeness").update(optional=True)
answers = {"competitive_advantage": {"hard_to_imitate": True, "technology_essential": False}}
scores = {"specificity": 4, "technical_validity": 3, "need_validity": 2, "market_size": 1}
services.rating_submit(reviewer=alice, idea=idea, scores=scores, answers=answers)
def state():
    return {r.dimension.key: (r.status, r.score, r.answers)
            for r in Rating.objects.filter(reviewer=alice, idea=idea).select_related("dimension")}
assert state()["innovativeness"] == ("unanswered", None, None), state()
before = RatingHistory.objects.count()
services.rating_submit(reviewer=alice, idea=idea, scores=scores, answers=answers)
assert RatingHistory.objects.count() == before
services.rating_submit(reviewer=alice, idea=idea,
                       scores={**scores, "innovativeness": 3, "competitive_advantage": 3})
assert state()["innovativeness"] == ("scored", 3, None)
assert state()["competitive_advantage"] == ("scored", 3, answers["competitive_advantage"])
assert RatingHistory.objects.count() == before + 1
services.rating_decline(reviewer=alice, idea=idea)
assert {s for s, _, _ in state().values()} == {"declined"}
assert installation_export()[:2] == b"PK"
print("SQLITE-OK")
"""


def test_the_rating_store_and_its_history_rules_run_on_sqlite(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(PLURALIST_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="config.settings.local")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "SQLITE-OK" in done.stdout
