"""The judge_study management command (runs synchronously in-process, no Celery)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from apps.judges.models import JudgePrediction, JudgeRun

pytestmark = pytest.mark.django_db


def test_it_runs_a_study_in_process_and_prints_json(two_reviewers_history, settings):
    settings.LLM_BASE_URL = ""
    out = io.StringIO()
    call_command(
        "judge_study",
        "--backend",
        "local",
        "--configs",
        "zero_shot,aggregate,personalized",
        "--shots",
        "0,1,2",
        "--seeds",
        "2",
        "--domain",
        "nlp",
        "--dimension",
        "innovativeness",
        "--format",
        "json",
        stdout=out,
    )
    result = json.loads(out.getvalue())
    run = JudgeRun.objects.get(id=result["run"])
    assert run.status == "done" and run.purpose == "study"
    assert result["backend"] == ["Local baseline (not an LLM)"]
    cells = {(r["config"], r["k"], r["dimension"]) for r in result["alignment"]}
    assert cells == {
        ("zero_shot", 0, "innovativeness"),
        ("aggregate", 0, "innovativeness"),
        ("aggregate", 1, "innovativeness"),
        ("aggregate", 2, "innovativeness"),
        ("personalized", 0, "innovativeness"),
        ("personalized", 1, "innovativeness"),
        ("personalized", 2, "innovativeness"),
    }
    for row in result["alignment"]:
        assert set(row) == {
            "config",
            "k",
            "dimension",
            "alpha",
            "per_reviewer_alpha",
            "level_only_alpha",
            "lift",
            "adds_nothing",
            "n",
            "coverage",
            "discard_rate",
        }
    # 2 reviewers x 12 items x 2 seeds x (1 zero-shot + 3 aggregate + 3 personalized)
    assert JudgePrediction.objects.filter(run=run).count() == 24 * 2 * 7
    assert result["calls"] == 24 * 2 * 7


def test_it_prints_a_readable_table_by_default(two_reviewers_history):
    out = io.StringIO()
    call_command(
        "judge_study",
        "--backend",
        "local",
        "--configs",
        "personalized",
        "--shots",
        "2",
        "--seeds",
        "1",
        "--domain",
        "nlp",
        "--dimension",
        "innovativeness",
        stdout=out,
        stderr=io.StringIO(),
    )
    text = out.getvalue()
    assert "Local baseline (not an LLM)" in text and "personalized" in text and "alpha" in text


def test_it_names_the_bad_option(two_reviewers_history):
    with pytest.raises(CommandError, match="--domain"):
        call_command("judge_study", "--domain", "nowhere", "--dimension", "innovativeness")
    with pytest.raises(CommandError, match="--shots"):
        call_command(
            "judge_study", "--domain", "nlp", "--dimension", "innovativeness", "--shots", "a,b"
        )
    with pytest.raises(CommandError, match="novelty"):
        call_command("judge_study", "--domain", "nlp", "--dimension", "novelty")
