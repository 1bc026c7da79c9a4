"""Issue 29: a file of the wrong shape is refused before it is parsed, and the inputs that used
to answer 500 are a 400 naming the field, the same through the API, the import page and the
Django admin (all three call apps.dataio.services.imports.import_upload)."""

from __future__ import annotations

import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from apps.accounts.models import ReviewerProfile
from apps.screening.models import Dimension, Rating, Rubric
from tests.factories import DomainFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(admin) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin)
    return client


def _upload(api, kind: str, name: str, content: bytes):
    return api.post(
        f"/api/imports/{kind}/", {"file": SimpleUploadedFile(name, content)}, format="multipart"
    )


def _errors(response) -> list[dict]:
    return response.json()["errors"]


def _wide_header(columns: int) -> bytes:
    header = ",".join(f"c{i}" for i in range(columns))
    return f"{header}\n{','.join('1' for _ in range(columns))}\n".encode()


def test_a_ten_thousand_column_header_is_refused_within_a_second(api):
    content = _wide_header(10_000)
    _upload(api, "ratings", "warm.csv", b"x\n")  # the first request loads the views' modules
    started = time.monotonic()
    response = _upload(api, "ratings", "wide.csv", content)
    elapsed = time.monotonic() - started
    assert response.status_code == 400, response.content[:300]
    [error] = _errors(response)
    assert (error["field"], error["row"]) == ("file", 1)
    assert "IMPORT_MAX_COLUMNS" in error["message"]
    assert elapsed < 1.0, elapsed


def test_a_million_column_header_is_refused_as_fast(api):
    content = _wide_header(1_000_000)  # about 9.9 MB
    assert len(content) > 9_000_000
    started = time.monotonic()
    response = _upload(api, "ratings", "wide.csv", content)
    assert response.status_code == 400
    assert "more than 64 columns" in _errors(response)[0]["message"]
    assert time.monotonic() - started < 3.0


@pytest.mark.parametrize("kind", ["patents", "ideas", "reviewers", "ratings"])
def test_every_csv_importer_refuses_a_wide_header(api, kind):
    response = _upload(api, kind, f"{kind}.csv", _wide_header(65))
    assert response.status_code == 400
    assert _errors(response)[0]["field"] == "file"


def test_the_column_limit_is_a_setting(api, settings):
    settings.IMPORT_MAX_COLUMNS = 3
    response = _upload(api, "reviewers", "r.csv", b"username,email,name,domains\nbo,,,\n")
    assert response.status_code == 400
    assert "more than 3 columns" in _errors(response)[0]["message"]


def test_a_long_column_name_is_refused(api):
    response = _upload(api, "reviewers", "r.csv", b"username," + b"x" * 101 + b"\nbo,1\n")
    assert response.status_code == 400
    assert "IMPORT_MAX_COLUMN_CHARS" in _errors(response)[0]["message"]


def test_a_line_past_the_line_limit_is_refused_naming_it(api, settings):
    settings.IMPORT_MAX_LINE_BYTES = 1000
    content = b"username,name\nbo,Bo\n" + b"al," + b"a" * 2000 + b"\ncy,Cy\n"
    response = _upload(api, "reviewers", "r.csv", content)
    assert response.status_code == 400
    [error] = _errors(response)
    assert (error["field"], error["row"]) == ("file", 3)
    assert "IMPORT_MAX_LINE_BYTES" in error["message"]
    assert not ReviewerProfile.objects.exists()


def test_a_file_without_line_breaks_past_the_limit_is_refused(api, settings):
    settings.IMPORT_MAX_LINE_BYTES = 1000
    response = _upload(api, "patents", "p.jsonl", b'{"external_id": "' + b"x" * 5000 + b'"}')
    assert response.status_code == 400
    assert _errors(response)[0]["row"] == 1


def test_json_lines_with_too_many_keys_are_refused(api):
    record = {f"k{i}": 1 for i in range(100)}
    response = _upload(api, "patents", "p.jsonl", (json.dumps(record) + "\n").encode())
    assert response.status_code == 400
    assert "IMPORT_MAX_COLUMNS" in _errors(response)[0]["message"]


def test_a_header_with_a_quoted_comma_counts_one_column(api, settings):
    settings.IMPORT_MAX_COLUMNS = 2
    response = _upload(api, "reviewers", "r.csv", b'username,"na,me"\nbo,Bo\n')
    # Two columns: past the shape check; the importer then names the unknown column.
    assert response.status_code == 400
    assert _errors(response)[0]["field"] == "na,me"


# ---- the 500s of issue 29, through every way in ----------------------------------------------

RUBRIC_YAML = """key: r1
name: {name}
dimensions:
  - key: a
    scale: {{min: 1, max: 4}}
  - key: b
    scale: {{min: {low}, max: 4}}
    requires: {requires}
    questions: {questions}
    question_scores: {question_scores}
"""


def _rubric_yaml(**values: str) -> bytes:
    base = {
        "name": "R1",
        "low": "1",
        "requires": "[a]",
        "questions": "[]",
        "question_scores": "{}",
    }
    return RUBRIC_YAML.format(**{**base, **values}).encode()


BAD_RUBRICS = {
    "requires-nested": (_rubric_yaml(requires="[[a]]"), "dimensions[1].requires[0]"),
    "question-scores-list": (
        _rubric_yaml(questions="[{key: q1, text: Is it new}]", question_scores="[1, 2]"),
        "dimensions[1].question_scores",
    ),
    "superscript-bound": (_rubric_yaml(low='"²"'), "dimensions[1].scale.min"),
    "arabic-digit-bound": (_rubric_yaml(low='"٣"'), "dimensions[1].scale.min"),
    "5000-digit-bound": (_rubric_yaml(low="9" * 5000), "dimensions[1].scale.min"),
    "binary-name": (_rubric_yaml(name="!!binary aGVsbG8="), "file"),
}


def _post_rubric(way: str, client, api, admin, content: bytes):
    upload = SimpleUploadedFile("r1.yaml", content)
    if way == "api":
        return _upload(api, "rubric", "r1.yaml", content)
    client.force_login(admin)
    if way == "page":
        return client.post(reverse("catalog:import_upload", args=["rubric"]), {"file": upload})
    admin.is_staff = admin.is_superuser = True
    admin.save()
    return client.post(
        reverse("admin:screening_rubric_import"), {"kind_choice": "rubric", "file": upload}
    )


@pytest.mark.parametrize("way", ["api", "page", "django-admin"])
@pytest.mark.parametrize("case", list(BAD_RUBRICS), ids=list(BAD_RUBRICS))
def test_a_rubric_of_the_wrong_shape_is_a_400_naming_the_field(client, api, admin, way, case):
    content, field = BAD_RUBRICS[case]
    response = _post_rubric(way, client, api, admin, content)
    assert response.status_code == 400, response.content[:500]
    if way == "api":
        assert field in {e["field"] for e in _errors(response)}, _errors(response)
    else:
        assert field in response.content.decode()
    assert not Rubric.objects.filter(key="r1").exists()


def test_a_binary_rubric_name_is_refused_not_stored_as_text(api):
    response = _upload(api, "rubric", "r1.yaml", BAD_RUBRICS["binary-name"][0])
    assert "!!binary" in json.dumps(response.json())
    assert not Rubric.objects.filter(name="b'hello'").exists()


def test_a_json_rubric_with_a_5000_digit_bound_names_it(api):
    doc = (
        '{"key": "r1", "dimensions": [{"key": "a", "scale": {"min": 1, "max": '
        + "9" * 5000
        + "}}]}"
    )
    response = _upload(api, "rubric", "r1.json", doc.encode())
    assert response.status_code == 400
    assert "dimensions[0].scale.max" in {e["field"] for e in _errors(response)}


def test_a_well_formed_rubric_still_imports(api):
    response = _upload(api, "rubric", "r1.yaml", _rubric_yaml())
    assert response.status_code == 201, response.content[:500]
    assert Dimension.objects.filter(rubric__key="r1").count() == 2


def test_a_5000_digit_years_of_experience_is_a_400_naming_the_field(api):
    DomainFactory(key="nlp")
    content = b"username,years_experience\nbo," + b"9" * 5000 + b"\n"
    response = _upload(api, "reviewers", "r.csv", content)
    assert response.status_code == 400
    assert {(e["field"], e["row"]) for e in _errors(response)} == {("years_experience", 2)}


@pytest.mark.parametrize("years", ["٣", "²", "3.0"])
def test_years_of_experience_must_be_written_in_digits(api, years):
    content = f"username,years_experience\nbo,{years}\n".encode()
    response = _upload(api, "reviewers", "r.csv", content)
    assert response.status_code == 400
    [error] = _errors(response)
    assert error["field"] == "years_experience" and "whole number" in error["message"]


def test_a_score_in_other_digits_is_named_as_not_a_whole_number(api, reviewer_alice):
    content = "idea,reviewer,dimension,score\nidea-002,alice,specificity,٣\n".encode()
    response = _upload(api, "ratings", "r.csv", content)
    assert response.status_code == 400
    messages = [(e["field"], e["message"]) for e in _errors(response)]
    assert messages == [("score", "must be a whole number (or empty when the stage is closed)")], (
        messages
    )
    assert not Rating.objects.filter(idea__external_id="idea-002").exists()
