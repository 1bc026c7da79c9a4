"""The llm tests' per-test reset; the local LLM server is `llm_server` in tests/conftest.py."""

from tests.judges.llm.conftest import _forget_response_formats

__all__ = ["_forget_response_formats"]
