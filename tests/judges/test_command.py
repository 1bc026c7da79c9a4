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
    # 2 reviewers x 12 items x (k = 0 of the three configurations once: the offline judge
    # without examples repeats itself; k = 1 and 2 of aggregate and personalized x 2 seeds)
    assert JudgePrediction.objects.filter(run=run).count() == 24 * (3 + 2 * 4)
    assert result["calls"] == 24 * (3 + 2 * 4)


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


def _write_rated_set(folder, *, key: str, scale: tuple[int, int]) -> None:
    """Six ideas of one domain on a one-dimension rubric ("quality"), four reviewers each."""
    import csv

    lo, hi = scale
    folder.mkdir()
    (folder / "rubric.json").write_text(
        json.dumps(
            {
                "key": f"{key}-rubric",
                "domains": [key],
                "dimensions": [{"key": "quality", "scale": {"min": lo, "max": hi}}],
            }
        )
    )
    tables = {
        "patents.csv": [["external_id", "domain", "title"]]
        + [[f"{key}-p{i}", key, f"Source {i}"] for i in range(6)],
        "ideas.csv": [["external_id", "patent", "title", "description"]]
        + [[f"{key}-i{i}", f"{key}-p{i}", f"Item {i}", f"text {i} " * 5] for i in range(6)],
        "reviewers.csv": [["username", "domains"]] + [[f"{key}-r{r}", key] for r in range(4)],
        "ratings.csv": [["idea", "reviewer", "dimension", "score"]]
        + [
            [f"{key}-i{i}", f"{key}-r{r}", "quality", lo + (i + r) * (hi - lo) // 9]
            for i in range(6)
            for r in range(4)
        ],
    }
    for name, rows in tables.items():
        with open(folder / name, "w", newline="") as f:
            csv.writer(f).writerows(rows)


def test_two_rubrics_sharing_a_dimension_key_on_different_scales_are_studied_apart(tmp_path):
    # A 0-3 "quality" and a 0-100 "quality" in one installation: the study of the second reads
    # its own scale (it used to read the first rubric's and fail on 33 "not in [0..3]") and
    # labels the dimension with its rubric, so the two are never pooled into one alpha.
    for key, scale in (("stories", (0, 3)), ("summaries", (0, 100))):
        folder = tmp_path / key
        _write_rated_set(folder, key=key, scale=scale)
        for kind in ("patents", "rubric", "ideas", "reviewers", "ratings"):
            name = "rubric.json" if kind == "rubric" else f"{kind}.csv"
            extra = ["--create-domains"] if kind in ("patents", "rubric") else []
            call_command(f"import_{kind}", str(folder / name), *extra, stdout=io.StringIO())
    out = io.StringIO()
    call_command(
        "judge_study",
        *("--backend", "local", "--configs", "personalized", "--shots", "2", "--seeds", "1"),
        *("--domain", "summaries", "--dimension", "quality", "--format", "json"),
        stdout=out,
    )
    rows = json.loads(out.getvalue())["alignment"]
    assert {r["dimension"] for r in rows} == {"quality (summaries-rubric)"}
    assert all(r["alpha"] is not None for r in rows)
