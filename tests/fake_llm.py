"""A stand-in for a paid LLM service: a real HTTP server speaking the OpenAI wire format.

    with FakeLLM(latency=0.3) as fake:
        client = OpenAI(base_url=fake.base_url, api_key="test")
        fake.push_status(429, retry_after=1)   # next chat request gets a 429
        fake.push_reply('```json\\n{"score": 3, ...}\\n```')

Endpoints: POST /v1/chat/completions and POST /v1/embeddings (GET /v1/models for good measure).
- Default chat reply: valid JSON derived from a sha256 of the request's messages (score 1-3, which
  lies on every PBIG scale; confidence 80-99), or ``default_reply(body) -> str`` if given.
- Scripted behaviours for chat requests, consumed in arrival order: push_status (429 with
  Retry-After, 500, 503, 401, 404 ...), push_hang (sleep past the client's timeout), push_reply
  (any text: fenced, prose-wrapped, off-scale, never parsable), push_json.
- usage: prompt_tokens ~ chars/4 of the concatenated messages; prompt_tokens_details.cached_tokens
  = tokens of the longest prefix shared with any EARLIER request (a crude model of provider
  prefix caching).
- ``refuse_formats``: response_format types this server refuses the way llama-cpp-python
  does (HTTP 500 naming response_format), e.g. {"json_schema"}; ``single_slot``: chat requests
  are served one at a time, like a one-slot llama.cpp server (a hung request holds the slot).
- ``stop`` sequences cut the reply like a real server (the stop string is not returned).
- ``requests``: a log of every request (path, model, messages, temperature, seed,
  response_format, max_tokens, stop, retry count header, time), in arrival order.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHARS_PER_TOKEN = 4
EMBEDDING_DIM = 64


def tokens(chars: int) -> int:
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def prompt_string(messages: list[dict[str, Any]]) -> str:
    return "".join(f"<{m.get('role')}>{m.get('content') or ''}" for m in messages)


def _common_prefix_len(a: str, b: str) -> int:
    """Length of the common prefix, by binary search over slice comparisons (C speed)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def default_judge_reply(body: dict[str, Any]) -> str:
    digest = hashlib.sha256(prompt_string(body.get("messages", [])).encode()).digest()
    score = 1 + digest[0] % 3
    confidence = 80 + digest[1] % 20
    return json.dumps(
        {
            "score": score,
            "reason": f"Fake judge, digest {digest[:4].hex()}.",
            "confidence": confidence,
        }
    )


@dataclass
class Behaviour:
    kind: str  # "status" | "hang" | "reply"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    seconds: float = 0.0
    text: str = ""


class FakeLLM:
    def __init__(
        self,
        *,
        latency: float = 0.0,
        default_reply: Callable[[dict[str, Any]], str] | None = None,
        model_name: str | None = None,
        refuse_formats: set[str] | None = None,
        single_slot: bool = False,
    ) -> None:
        self.latency = latency
        self.refuse_formats = set(refuse_formats or ())
        self.single_slot = single_slot
        self._slot = threading.Lock()
        self.default_reply = default_reply or default_judge_reply
        self.model_name = model_name  # echo this instead of the requested model, if set
        self.requests: list[dict[str, Any]] = []
        self._script: deque[Behaviour] = deque()
        self._seen_prompts: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> FakeLLM:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes hanging handlers
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "FakeLLM not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ------------------------------------------------------------------------
    def push_status(
        self,
        status: int,
        *,
        retry_after: float | None = None,
        retry_after_ms: int | None = None,
        message: str = "",
    ) -> None:
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        if retry_after_ms is not None:
            headers["retry-after-ms"] = str(retry_after_ms)
        kinds = {
            400: "invalid_request_error",
            401: "authentication_error",
            404: "not_found_error",
            429: "rate_limit_exceeded",
        }
        body = {
            "error": {
                "message": message or f"fake error {status}",
                "type": kinds.get(status, "server_error"),
                "param": None,
                "code": kinds.get(status, "server_error"),
            }
        }
        self._script.append(Behaviour("status", status=status, headers=headers, body=body))

    def push_hang(self, seconds: float) -> None:
        self._script.append(Behaviour("hang", seconds=seconds))

    def push_reply(self, text: str) -> None:
        self._script.append(Behaviour("reply", text=text))

    def push_json(self, *, score: Any, reason: str = "scripted", confidence: Any = 90) -> None:
        self.push_reply(json.dumps({"score": score, "reason": reason, "confidence": confidence}))

    def push_messy(self, *, score: int = 3, confidence: int = 88) -> None:
        """Valid content wrapped the way chatty models wrap it: prose, a fence, single quotes,
        a numeric string and a trailing comma."""
        self.push_reply(
            "Sure, here is my evaluation.\n```json\n"
            f"{{'score': '{score}', 'reason': 'Looks concrete.', 'confidence': {confidence},}}\n"
            "```\nLet me know if you need more."
        )

    def push_off_scale(self, *, score: int = 99) -> None:
        self.push_json(score=score, reason="off the scale on purpose", confidence=95)

    def push_unparsable(self, times: int = 1) -> None:
        for _ in range(times):
            self.push_reply("I am not able to give a score for this idea.")

    def reset_cache(self) -> None:
        with self._lock:
            self._seen_prompts.clear()

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    # -- internals ------------------------------------------------------------------------
    def _next_behaviour(self) -> Behaviour | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    def _cached_chars(self, prompt: str) -> int:
        """Longest prefix shared with an earlier prompt; registers this prompt."""
        with self._lock:
            best = max((_common_prefix_len(prompt, p) for p in self._seen_prompts), default=0)
            self._seen_prompts.append(prompt)
            return best

    def _next_id(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter


def _make_handler(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes; without TCP_NODELAY, Nagle plus delayed
            # ACKs add ~40 ms per response, which would swamp the configured latency.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def _send(
            self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                self.close_connection = True

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/").endswith("/models"):
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {
                                "id": fake.model_name or "fake-model",
                                "object": "model",
                                "created": 0,
                                "owned_by": "fake",
                            }
                        ],
                    },
                )
            else:
                self._send(404, {"error": {"message": "not found", "type": "not_found_error"}})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(
                    400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}}
                )
                return
            entry = {
                "path": self.path,
                "time": time.monotonic(),
                "model": body.get("model"),
                "messages": body.get("messages"),
                "temperature": body.get("temperature"),
                "seed": body.get("seed"),
                "response_format": body.get("response_format"),
                "max_tokens": body.get("max_tokens"),
                "stop": body.get("stop"),
                "retry_count": self.headers.get("x-stainless-retry-count"),
                "input": body.get("input"),
                "authorization": self.headers.get("Authorization"),
            }
            with fake._lock:
                fake.requests.append(entry)
            if self.path.rstrip("/").endswith("/chat/completions"):
                self._chat(body)
            elif self.path.rstrip("/").endswith("/embeddings"):
                self._embeddings(body)
            else:
                self._send(
                    404, {"error": {"message": f"no route {self.path}", "type": "not_found_error"}}
                )

        def _chat(self, body: dict[str, Any]) -> None:
            kind = (body.get("response_format") or {}).get("type")
            if kind in fake.refuse_formats:
                # What llama-cpp-python answers for a response_format it does not know.
                self._send(
                    500,
                    {
                        "error": {
                            "message": "[{'type': 'literal_error', "
                            "'loc': ('body', 'response_format', 'type'), "
                            "'msg': \"Input should be 'text' or 'json_object'\", "
                            f"'input': '{kind}'}}]",
                            "type": "internal_server_error",
                            "param": None,
                            "code": None,
                        }
                    },
                )
                return
            if fake.single_slot:
                with fake._slot:
                    self._chat_in_slot(body)
            else:
                self._chat_in_slot(body)

        def _chat_in_slot(self, body: dict[str, Any]) -> None:
            behaviour = fake._next_behaviour()
            if fake.latency:
                time.sleep(fake.latency)
            if behaviour is not None and behaviour.kind == "hang":
                fake._stopping.wait(behaviour.seconds)
                self.close_connection = True
                return
            if behaviour is not None and behaviour.kind == "status":
                self._send(behaviour.status, behaviour.body or {}, behaviour.headers)
                return
            text = behaviour.text if behaviour is not None else fake.default_reply(body)
            stops = body.get("stop") or []
            for stop in [stops] if isinstance(stops, str) else stops:
                if stop and stop in text:
                    text = text[: text.index(stop)]
            prompt = prompt_string(body.get("messages") or [])
            prompt_tokens = tokens(len(prompt))
            cached = min(prompt_tokens, fake._cached_chars(prompt) // CHARS_PER_TOKEN)
            completion_tokens = tokens(len(text))
            self._send(
                200,
                {
                    "id": f"chatcmpl-fake-{fake._next_id()}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": fake.model_name or body.get("model") or "fake-model",
                    "system_fingerprint": "fp_fake",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text, "refusal": None},
                            "logprobs": None,
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                        "prompt_tokens_details": {"cached_tokens": cached},
                        "completion_tokens_details": {"reasoning_tokens": 0},
                    },
                },
            )

        def _embeddings(self, body: dict[str, Any]) -> None:
            if fake.latency:
                time.sleep(fake.latency)
            raw_input = body.get("input")
            inputs = [raw_input] if isinstance(raw_input, str) else list(raw_input or [])
            data = []
            for i, text in enumerate(inputs):
                vector = fake_embedding(str(text))
                if body.get("encoding_format") == "base64":
                    packed = struct.pack(f"<{len(vector)}f", *vector)
                    embedding: Any = base64.b64encode(packed).decode()
                else:
                    embedding = vector
                data.append({"object": "embedding", "index": i, "embedding": embedding})
            used = sum(tokens(len(str(t))) for t in inputs)
            self._send(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model") or "fake-embedding",
                    "usage": {"prompt_tokens": used, "total_tokens": used},
                },
            )

    return Handler


def fake_embedding(text: str) -> list[float]:
    """Bag of words hashed into EMBEDDING_DIM buckets: texts sharing words get close vectors."""
    vector = [0.0] * EMBEDDING_DIM
    for word in text.lower().split():
        bucket = int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "big") % EMBEDDING_DIM
        vector[bucket] += 1.0
    return vector
