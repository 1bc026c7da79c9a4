"""The real local LLM server fixture, shared with the judges' llm tests (started once a session)."""

from tests.judges.llm.conftest import _forget_response_formats, llm_server

__all__ = ["_forget_response_formats", "llm_server"]
