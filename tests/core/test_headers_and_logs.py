"""Headers and logs (issue 21.9): a strict Content-Security-Policy on every page, a 403 logged
in one line, and the API's documented refusals in the OpenAPI schema."""

from __future__ import annotations

import logging

import pytest
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db


def test_every_page_carries_a_strict_content_security_policy(client, reviewer):
    client.force_login(reviewer)
    for url in ["/accounts/login/", "/screening/", "/api/docs/"]:
        policy = client.get(url)["Content-Security-Policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["script-src"] == "'self'", url
        assert directives["style-src"] == "'self'", url
        assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
        assert "unsafe-eval" not in policy


def test_no_page_template_holds_an_inline_script_or_style_element(settings):
    import re
    from pathlib import Path

    root = Path(settings.BASE_DIR) / "templates"
    inline = re.compile(
        r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>|<style[\s>]|\son\w+="
    )
    # The director's memo is a document the manager downloads and keeps: it must read alone,
    # from a disk or a mail, so its stylesheet is inside it (it is never served as a page).
    exported_documents = {"decisions/memo.html"}
    offenders = [
        str(p.relative_to(root))
        for p in root.rglob("*.html")
        if inline.search(p.read_text()) and str(p.relative_to(root)) not in exported_documents
    ]
    assert offenders == []


def test_a_403_is_logged_in_one_line_without_a_traceback(client, reviewer, caplog):
    client.force_login(reviewer)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = client.get("/disagreement/")
    assert response.status_code == 403
    records = [r for r in caplog.records if r.name == "django.request"]
    assert len(records) == 1
    formatted = logging.Formatter().format(records[0])
    assert "Forbidden" in formatted and "/disagreement/" in formatted
    assert "Traceback" not in formatted and "\n" not in formatted


def test_the_api_refusals_on_config_delete_and_run_cancel_are_in_the_schema(db):
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    delete = paths["/api/judges/configs/{config_id}/"]["delete"]["responses"]
    assert "400" in delete and "deactivate" in delete["400"]["description"]
    cancel = paths["/api/judges/runs/{run_id}/cancel/"]["post"]["responses"]
    assert "400" in cancel and "only queued or running" in cancel["400"]["description"]
