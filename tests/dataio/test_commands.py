"""The import_<kind> management commands: summary on success, every error and exit 1 on failure."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.catalog.models import Patent
from apps.screening.models import Rubric
from tests.dataio.conftest import EXAMPLES, table_counts

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def test_each_command_imports_its_example_file():
    out = StringIO()
    call_command("import_rubric", str(EXAMPLES / "rubric.yaml"), stdout=out)
    for kind in ["patents", "ideas", "reviewers", "ratings"]:
        call_command(f"import_{kind}", str(EXAMPLES / f"{kind}.csv"), stdout=out)
    text = out.getvalue()
    assert "Imported patents (4 rows read): 4 created, 0 updated, 0 unchanged." in text
    assert "Imported ratings (37 rows read): 42 created" in text


def test_dry_run_validates_and_saves_nothing():
    before = table_counts()
    out = StringIO()
    call_command("import_patents", str(EXAMPLES / "patents.csv"), "--dry-run", stdout=out)
    assert "Dry run of patents (4 rows read), nothing saved: would be 4 created" in out.getvalue()
    assert table_counts() == before


def test_import_rubric_default_makes_it_the_default():
    call_command("import_rubric", str(EXAMPLES / "rubric.json"), "--default", stdout=StringIO())
    assert Rubric.objects.get(is_default=True).key == "desk-check"


def test_a_bad_file_prints_every_error_and_raises(tmp_path):
    bad = tmp_path / "patents.csv"
    bad.write_text("external_id,domain,title\nUS1,nlp,\nUS2,,Two\n", encoding="utf-8")
    err = StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_patents", str(bad), stdout=StringIO(), stderr=err)
    assert "row 2, title: is required" in err.getvalue()
    assert "row 3, domain: is required" in err.getvalue()
    assert Patent.objects.count() == 0


def test_a_missing_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_ideas", str(tmp_path / "nope.csv"))


@pytest.mark.django_db(transaction=True)
def test_the_command_exits_non_zero_on_errors(tmp_path, django_db_setup):
    """A real process: the exit status is what scripts and CI see."""
    from django.db import connection

    bad = tmp_path / "ideas.csv"
    bad.write_text("external_id,patent,title\nidea-1,US-NONE,Title\n", encoding="utf-8")
    env = {"DJANGO_SETTINGS_MODULE": "config.settings.test", "PATH": "/usr/bin:/bin"}
    db = connection.settings_dict
    env["DATABASE_URL"] = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env["CELERY_BROKER_URL"] = settings.CELERY_BROKER_URL
    proc = subprocess.run(
        [sys.executable, "manage.py", "import_ideas", str(bad)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "row 2, patent: is not the external_id of a stored patent" in proc.stderr
    ok = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "import_patents",
            str(EXAMPLES / "patents.jsonl"),
            "--dry-run",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert "Dry run of patents" in ok.stdout
