"""The local LLM server's tooling, without the server: what runs where the llm extra is absent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from apps.llm_server.server import GEMMA3_TOKENIZER_CONFIG, chat_template_path, server_command
from tests.workers import ROOT


def test_the_server_command_gives_gemmas_template_the_threads_and_a_bounded_context():
    command = server_command(port=9999, model=Path("/models/gemma.gguf"), n_threads=1)
    option = {command[i]: command[i + 1] for i in range(3, len(command) - 1, 2)}
    assert command[1:3] == ["-m", "apps.llm_server.process"]
    assert option["--model"] == "/models/gemma.gguf" and option["--port"] == "9999"
    assert option["--chat_format"] == "hf-tokenizer-config"
    assert Path(option["--hf_tokenizer_config_path"]) == chat_template_path()
    assert option["--n_threads"] == option["--n_threads_batch"] == "1"
    assert option["--n_ctx"] == "8192"
    assert option["--logits_all"] == "false"  # no logits kept for every prompt token
    assert "<start_of_turn>" in GEMMA3_TOKENIZER_CONFIG["chat_template"]


def _pytest_without_llama(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    stub = tmp_path / "llama_cpp"
    stub.mkdir()
    (stub / "__init__.py").write_text('raise ImportError("no llama.cpp build here")\n')
    environment = {k: v for k, v in os.environ.items() if k not in ("CI", "PLURALIST_LLM_TESTS")}
    environment.update(PYTHONPATH=str(tmp_path), **env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/judges/llm/test_local_llm.py",
            "-k",
            "zero",
        ],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_missing_llm_build_fails_the_llm_tests_under_bin_test_and_ci(tmp_path):
    result = _pytest_without_llama(tmp_path, PLURALIST_LLM_TESTS="require")
    assert result.returncode != 0
    assert "llm tests are required here but cannot run" in result.stdout
    assert "pip install -e '.[llm]'" in result.stdout


def test_a_missing_llm_build_skips_the_llm_tests_elsewhere_saying_how_to_install_it(tmp_path):
    result = _pytest_without_llama(tmp_path)
    assert result.returncode == 0
    assert "1 skipped" in result.stdout and "pip install -e '.[llm]'" in result.stdout
