"""OpenAPI post-processing: document the errors every endpoint can answer, so the schema tells
the truth about status codes (tests/test_api_fuzz.py checks every response against it).

drf-spectacular documents what each view declares; the errors that come from the framework
around the view are added here, once, for every operation:
- 401 on every operation that needs credentials (none, a wrong or an expired token);
- 403 on every such operation (signed in, but the role may not do this, or a missing CSRF token);
- 404 on every operation with a path parameter (no such row, or not visible to you);
- 400 on every operation that takes query parameters or a body (a value breaks a rule);
- 503 on every operation: the database or the broker is unreachable (apps/core/health.py).
"""

from __future__ import annotations

from typing import Any

ERROR_REF = {"$ref": "#/components/schemas/Error"}
METHODS = {"get", "post", "put", "patch", "delete"}
DESCRIPTIONS = {
    "400": "The input breaks a rule; every problem is named.",
    "401": "No valid credentials: none, a wrong token or an expired one.",
    "403": "Signed in, but your role may not do this.",
    "404": "Not there, or not visible to you.",
    "503": "The database or the task queue is unreachable (named in `errors`); try again after "
    "the Retry-After header's seconds.",
}


def _needs_credentials(operation: dict[str, Any]) -> bool:
    security: list[dict[str, Any]] = operation.get("security") or []
    # An operation open to anonymous callers lists the empty requirement {} (or none at all).
    return bool(security) and {} not in security


def _error_response(code: str) -> dict[str, Any]:
    return {
        "description": DESCRIPTIONS[code],
        "content": {"application/json": {"schema": ERROR_REF}},
    }


def add_error_responses(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    for item in result.get("paths", {}).values():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            responses = operation.setdefault("responses", {})
            parameters = operation.get("parameters", [])
            codes = []
            if _needs_credentials(operation):
                codes += ["401", "403"]
            if any(p.get("in") == "path" for p in parameters):
                codes.append("404")
            if "requestBody" in operation or any(p.get("in") == "query" for p in parameters):
                codes.append("400")
            codes.append("503")
            for code in codes:
                responses.setdefault(code, _error_response(code))
    return result
