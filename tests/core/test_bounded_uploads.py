"""Uploads and fields have bounds, and hostile input is a 400 naming the field, never a 500:
YAML aliases ("billion laughs"), deep nesting, zip bombs, a manifest of the wrong shape, huge
scales and keys, NUL characters in references, a 20 MB description; the commands print one
clear line instead of a traceback."""

from __future__ import annotations

import io
import json
import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from apps.core.errors import ApplicationError
from apps.dataio.services.archive import installation_import
from apps.screening.models import Dimension, Rubric
from tests.factories import DomainFactory, IdeaFactory, PatentFactory

pytestmark = pytest.mark.django_db

BILLION_LAUGHS = """key: laughs
name: Laughs
a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
dimensions: [*g]
"""


@pytest.fixture
def api(admin) -> APIClient:
    client = APIClient()
    client.force_authenticate(admin)
    return client


def _upload(api, kind: str, name: str, content: bytes):
    return api.post(
        f"/api/imports/{kind}/",
        {"file": SimpleUploadedFile(name, content)},
        format="multipart",
    )


def _rubric(**dimension) -> bytes:
    dim = {"key": "novelty", "name": "Novelty", "scale": {"min": 1, "max": 4}, **dimension}
    return json.dumps({"key": "r1", "name": "R1", "dimensions": [dim]}).encode()


def _fields(response) -> set[str]:
    return {e["field"] for e in response.json()["errors"]}


def test_a_yaml_rubric_with_aliases_is_refused_at_once(api):
    started = time.monotonic()
    response = _upload(api, "rubric", "laughs.yaml", BILLION_LAUGHS.encode())
    assert time.monotonic() - started < 5
    assert response.status_code == 400
    assert "aliases" in json.dumps(response.json())
    assert not Rubric.objects.filter(key="laughs").exists()


@pytest.mark.parametrize(
    "kind,name,content",
    [
        ("rubric", "deep.json", b"[" * 100_000 + b"]" * 100_000),
        ("rubric", "deep.yaml", b"[" * 20_000 + b"]" * 20_000),
        ("patents", "deep.jsonl", b'{"external_id": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"),
    ],
    ids=["rubric-json", "rubric-yaml", "jsonl"],
)
def test_deeply_nested_documents_are_a_400_naming_the_file(api, kind, name, content):
    response = _upload(api, kind, name, content)
    assert response.status_code == 400, response.content[:300]
    assert "nested deeper" in json.dumps(response.json())
    assert "file" in _fields(response)


@pytest.mark.parametrize(
    "dimension,field",
    [
        ({"scale": {"min": 1, "max": 99999999999}}, "dimensions[0].scale"),
        ({"pass_above": 99999999999}, "dimensions[0].pass_above"),
        ({"key": "k" * 10_000}, "dimensions[0].key"),
        ({"name": "N" * 10_000}, "dimensions[0].name"),
        ({"description": "a\x00b"}, "dimensions[0].description"),
    ],
    ids=["scale", "pass_above", "key", "name", "nul"],
)
def test_rubric_values_past_their_columns_are_a_400_naming_the_field(api, dimension, field):
    response = _upload(api, "rubric", "r1.json", _rubric(**dimension))
    assert response.status_code == 400, response.content[:300]
    assert field in _fields(response)
    assert not Dimension.objects.filter(rubric__key="r1").exists()


def test_the_rubric_command_prints_one_line_not_a_traceback(tmp_path):
    path = tmp_path / "deep.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    with pytest.raises(CommandError, match="nested deeper|cannot be read"):
        call_command("import_rubric", str(path))


def test_an_upload_past_the_size_limit_is_refused_before_it_is_read(api, settings):
    settings.IMPORT_MAX_BYTES = 1000
    response = _upload(api, "patents", "patents.csv", b"external_id,domain,title\n" + b"x" * 2000)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["field"] == "file" and "IMPORT_MAX_BYTES" in error["message"]


def test_an_import_cell_longer_than_the_text_limit_is_named_by_row(api, settings):
    settings.TEXT_MAX_CHARS = 50
    DomainFactory(key="nlp")
    content = f"external_id,domain,title,abstract\nUS-1,nlp,T,{'a' * 51}\n".encode()
    response = _upload(api, "patents", "patents.csv", content)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert (error["field"], error["row"]) == ("abstract", 2)


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


MANIFEST = {
    "format": "pluralist-archive",
    "version": 1,
    "load_order": ["patents.csv"],
    "restored": ["rating_history.csv"],
}


def test_an_archive_member_that_unpacks_too_far_is_refused_before_it_is_read(admin, settings):
    settings.IMPORT_MAX_BYTES = 10 * 1024 * 1024
    bomb = _zip({"manifest.json": json.dumps(MANIFEST).encode(), "patents.csv": b"\0" * 20_000_000})
    assert len(bomb) < 100_000
    with pytest.raises(ApplicationError) as refused:
        installation_import(content=bomb, actor=admin)
    assert refused.value.errors[0].field == "patents.csv"
    assert "IMPORT_MAX_BYTES" in refused.value.errors[0].message


def test_an_archive_member_compressed_like_a_bomb_is_refused(admin):
    bomb = _zip({"manifest.json": json.dumps(MANIFEST).encode(), "patents.csv": b"\0" * 5_000_000})
    with pytest.raises(ApplicationError) as refused:
        installation_import(content=bomb, actor=admin)
    assert "zip bomb" in refused.value.errors[0].message


@pytest.mark.parametrize("load_order", [5, "patents.csv", [1, 2], None])
def test_a_manifest_of_the_wrong_shape_is_named(admin, load_order):
    manifest = {**MANIFEST, "load_order": load_order}
    content = _zip({"manifest.json": json.dumps(manifest).encode()})
    with pytest.raises(ApplicationError) as refused:
        installation_import(content=content, actor=admin)
    assert refused.value.errors[0].field == "manifest.json: load_order"


def test_the_archive_command_prints_one_line_for_a_bad_manifest(tmp_path):
    path = tmp_path / "bad.zip"
    path.write_bytes(_zip({"manifest.json": json.dumps({**MANIFEST, "load_order": 5}).encode()}))
    with pytest.raises(CommandError, match="bad.zip: The archive cannot be read"):
        call_command("import_installation", str(path))


NUL = "a\x00b"


def test_a_nul_character_in_a_reference_is_a_400_naming_the_field(api):
    domain = DomainFactory(key="nlp")
    patent = PatentFactory(domain=domain, external_id="US-1")
    idea = IdeaFactory(patent=patent)
    cases = [
        ("post", "/api/patents/", {"external_id": "US-2", "domain": NUL, "title": "T"}, "domain"),
        (
            "post",
            "/api/ideas/",
            {"external_id": "I-2", "patent": NUL, "description": "d"},
            "patent",
        ),
        ("patch", f"/api/ideas/{idea.id}/", {"patent": NUL}, "patent"),
        ("post", "/api/domains/", {"key": "chem", "name": "Chem", "rubric": NUL}, "rubric"),
    ]
    for method, path, body, field in cases:
        response = getattr(api, method)(path, body, format="json")
        assert response.status_code == 400, (path, response.content[:300])
        assert field in _fields(response), (path, response.json())


def test_a_20_mb_description_is_refused_naming_the_field(api):
    domain = DomainFactory(key="nlp")
    PatentFactory(domain=domain, external_id="US-1")
    body = {"external_id": "I-2", "patent": "US-1", "description": "x" * 20_000_000}
    response = api.post("/api/ideas/", body, format="json")
    assert response.status_code == 400
    assert "description" in _fields(response)
