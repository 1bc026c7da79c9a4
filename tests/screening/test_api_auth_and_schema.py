"""Token and session authentication, the OpenAPI schema, and the shared error body."""

import pytest
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from apps.core.api import exception_handler
from apps.core.errors import ApplicationError, FieldError, NotFound, PermissionDenied

MY_PATHS = {
    "/api/auth/token/",
    "/api/domains/",
    "/api/domains/{id}/",
    "/api/patents/",
    "/api/patents/{id}/",
    "/api/ideas/",
    "/api/ideas/{id}/",
    "/api/rubrics/",
    "/api/rubrics/{id}/",
    "/api/ratings/",
    "/api/ratings/{id}/",
    "/api/ratings/{id}/history/",
    "/api/ideas/{id}/my-rating/",
    "/api/ideas/{id}/decline/",
    "/api/assignments/",
    "/api/assignments/{id}/",
    "/api/assignments/bulk-balanced/",
    "/api/assignments/load/",
    "/api/my/assignments/",
}


def test_a_reviewer_gets_a_token_and_rates_with_it(reviewer, idea, password):
    anonymous = APIClient()
    response = anonymous.post(
        "/api/auth/token/", {"username": "rita", "password": password}, format="json"
    )
    assert response.status_code == 200
    token = response.json()["token"]
    # The same token comes back on a second request.
    assert (
        anonymous.post("/api/auth/token/", {"username": "rita", "password": password}).json()[
            "token"
        ]
        == token
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    put = client.put(
        f"/api/ideas/{idea.pk}/my-rating/", {"scores": {"specificity": 2}}, format="json"
    )
    assert put.status_code == 200
    assert client.get("/api/my/assignments/").json()["results"][0]["status"] == "completed"


def test_a_wrong_password_gets_no_token(reviewer):
    response = APIClient().post(
        "/api/auth/token/", {"username": "rita", "password": "nope"}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "non_field_errors"


def test_a_bad_token_is_refused(idea):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token 0000000000000000000000000000000000000000")
    response = client.get("/api/ideas/")
    # 401 with a challenge: token authentication comes first in settings (docs/api.md).
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {"detail": "Invalid token.", "errors": []}


def test_session_authentication_works_for_the_same_endpoints(client, manager, reviewer, idea):
    client.force_login(manager)
    assert client.get("/api/ratings/").status_code == 200
    assert client.get(f"/api/ideas/{idea.pk}/").status_code == 200


def test_session_writes_need_the_csrf_token(reviewer, idea, password):
    client = APIClient(enforce_csrf_checks=True)
    client.login(username="rita", password=password)
    response = client.put(
        f"/api/ideas/{idea.pk}/my-rating/", {"scores": {"specificity": 2}}, format="json"
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


@pytest.mark.parametrize(
    "exc,status",
    [
        (
            ApplicationError("Bad.", errors=[FieldError(field="x", message="is wrong", value="1")]),
            400,
        ),
        (PermissionDenied("No."), 403),
        (NotFound("Gone."), 404),
    ],
)
def test_application_errors_become_the_shared_error_body(exc, status):
    response = exception_handler(exc, {})
    assert response.status_code == status
    assert response.data == exc.as_dict()


def test_the_schema_has_every_endpoint_and_no_warnings_from_them(db):
    GENERATOR_STATS.reset()
    GENERATOR_STATS.enable_trace_lineno()
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert MY_PATHS <= set(schema["paths"])
    my_modules = ("catalog/api", "dataio/api", "screening/api", "core/api")
    messages = [*GENERATOR_STATS._warn_cache, *GENERATOR_STATS._error_cache]
    assert [m for m in messages if any(mod in m for mod in my_modules)] == []
    put = schema["paths"]["/api/ideas/{id}/my-rating/"]["put"]
    assert set(put["responses"]) >= {"200", "400", "403", "404"}


def test_swagger_ui_is_served_without_a_cdn(client):
    html = client.get("/api/docs/").content.decode()
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
