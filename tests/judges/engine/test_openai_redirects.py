"""SSRF through redirects: an allowed endpoint that answers 307 must not send the prompts (or the
API key) anywhere else. Real HTTP servers: one redirects every request to the other, which counts
what reaches it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from apps.judges.backends import PermanentBackendError, get_backend
from apps.judges.backends.openai import embed_texts_remote
from tests.fake_llm import FakeLLM
from tests.judges.engine.conftest import make_request


class Redirector:
    """Answers every request with `status` and `Location: <target><path>`; counts them."""

    def __init__(self, target: str, status: int = 307) -> None:
        self.hits = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _redirect(self) -> None:
                outer.hits += 1
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                self.send_response(status)
                self.send_header("Location", target + self.path)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = _redirect  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def target() -> Iterator[FakeLLM]:
    """The address a redirect points at: not allowed, it must never be reached."""
    with FakeLLM() as fake:
        yield fake


@pytest.fixture(params=[307, 302, 308])
def redirector(request, target) -> Iterator[Redirector]:
    server = Redirector(target.base_url.removesuffix("/v1"), status=request.param)
    yield server
    server.stop()


def test_a_judge_call_to_an_endpoint_that_redirects_fails_without_following_it(redirector, target):
    backend = get_backend(
        "openai", base_url=redirector.base_url, api_key="k", model="m", timeout=2.0, max_retries=2
    )
    with pytest.raises(PermanentBackendError, match="redirects are not followed"):
        backend.judge(make_request())
    assert target.requests == [], "nothing reached the address the redirect named"
    assert redirector.hits >= 1


def test_an_embeddings_call_to_an_endpoint_that_redirects_fails_without_following_it(
    redirector, target
):
    with pytest.raises(PermanentBackendError, match="redirects are not followed"):
        embed_texts_remote(["an idea"], base_url=redirector.base_url, api_key="k", model="e")
    assert target.requests == []
