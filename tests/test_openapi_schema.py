"""The OpenAPI schema of the whole project: generated without a single warning or error, valid
OpenAPI 3, documenting every app's main endpoints, and browsable at /api/docs/ without a CDN."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator

# One or more endpoints per app; a missing one means a view fell out of the schema.
MAIN_PATHS = {
    # catalog
    "/api/domains/",
    "/api/patents/",
    "/api/ideas/",
    "/api/ideas/{id}/",
    "/api/imports/{kind}/",
    "/api/imports/jobs/",
    "/api/imports/jobs/{id}/",
    # screening
    "/api/rubrics/",
    "/api/ratings/",
    "/api/ratings/{id}/history/",
    "/api/ideas/{id}/my-rating/",
    "/api/ideas/{id}/decline/",
    "/api/assignments/",
    "/api/my/assignments/",
    # core
    "/api/auth/token/",
    # disagreement
    "/api/metrics/",
    "/api/metrics/recompute/",
    "/api/metrics/recompute/{snapshot_id}/",
    # judges
    "/api/judges/configs/",
    "/api/judges/configs/{config_id}/",
    "/api/judges/runs/",
    "/api/judges/runs/{run_id}/",
    "/api/judges/studies/",
    "/api/judges/predictions/",
    "/api/judges/alignment/",
    "/api/judges/me/alignment/",
}


@pytest.fixture
def fresh_stats():
    """The generator's warning counters are process-wide; start from zero so an earlier test's
    schema generation can neither hide nor invent a problem here."""
    GENERATOR_STATS.reset()
    yield GENERATOR_STATS
    GENERATOR_STATS.reset()


def test_the_whole_project_schema_is_generated_without_warnings_or_errors(db, fresh_stats):
    GENERATOR_STATS.enable_trace_lineno()
    schema = SchemaGenerator().get_schema(request=None, public=True)
    messages = [*fresh_stats._warn_cache, *fresh_stats._error_cache]
    assert messages == []
    assert MAIN_PATHS <= set(schema["paths"]), sorted(MAIN_PATHS - set(schema["paths"]))


def test_the_spectacular_command_validates_and_fails_on_no_warning(db, fresh_stats, tmp_path):
    target = tmp_path / "schema.yaml"
    # Raises SchemaGenerationError on any warning, and a validation error on invalid OpenAPI.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    schema = yaml.safe_load(Path(target).read_text())
    assert schema["openapi"].startswith("3.")
    assert MAIN_PATHS <= set(schema["paths"])


def test_every_operation_has_a_unique_id_and_documented_responses(db, fresh_stats):
    schema = SchemaGenerator().get_schema(request=None, public=True)
    ids = []
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            ids.append(operation["operationId"])
            assert operation.get("responses"), f"{method.upper()} {path} documents no response"
    assert len(ids) == len(set(ids))


def test_nested_serializers_get_distinct_component_names(db, fresh_stats):
    components = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    # The import upload and the metrics recompute bodies were both called "InputRequest".
    assert "InputRequest" not in components
    assert {"ImportUploadRequest", "MetricsRecomputeRequest"} <= set(components)
    assert "file" in components["ImportUploadRequest"]["properties"]
    assert "level" in components["MetricsRecomputeRequest"]["properties"]


def test_the_judges_endpoints_describe_their_bodies(db, fresh_stats):
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    predictions = paths["/api/judges/predictions/"]["get"]
    assert {p["name"] for p in predictions["parameters"]} >= {"reviewer", "domain", "dimension"}
    assert {p["name"] for p in predictions["parameters"]} >= {"limit", "offset"}
    body = predictions["responses"]["200"]["content"]["application/json"]["schema"]
    assert body["$ref"].endswith("/PaginatedPredictionList")
    assert "delete" in paths["/api/judges/configs/{config_id}/"]
    assert "204" in paths["/api/judges/configs/{config_id}/"]["delete"]["responses"]


def test_the_api_docs_page_loads_only_local_static_files(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html.lower()
    assert re.findall(r"https?://", html) == []
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
