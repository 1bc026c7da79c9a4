"""The openai backend and the judge pipeline against a real model: llama-cpp-python's server
with Gemma 3 270M on CPU (see apps/llm_server/server.py). A 270M model is for proving the
plumbing: these tests assert that every judgment ends valid or failed with its reason, never
what the model thinks of an idea."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apps.judges.backends import Example, JudgeRequest, get_backend, judge_many
from apps.judges.engine.prompting import build_messages
from apps.llm_server.server import LocalLLMServer, server_command
from tests.judges.engine.conftest import EXAMPLES, NEED, SPECIFICITY

pytestmark = pytest.mark.llm

OTHER_EXAMPLES = (
    Example(
        item_id=21,
        patent_text="Title: Crop camera\nAbstract: Spots leaf disease.",
        idea_text="Title: Drone scout\nDescription: Flags sick fields for farms.",
        score=4,
    ),
    Example(
        item_id=22,
        patent_text="Title: Invoice matcher\nAbstract: Links documents.",
        idea_text="Title: AP robot\nDescription: Matches invoices to orders.",
        score=3,
    ),
)
TARGET = dict(
    patent_text="Title: Contract parser\nAbstract: Finds obligations and deadlines in text.",
    idea_text="Title: Supplier watch\nDescription: Alerts buyers before contract deadlines.",
)


def backend_for(server, **options):
    return get_backend(
        "openai", base_url=server.base_url, model=server.model, timeout=120, **options
    )


@pytest.mark.parametrize(
    ("configuration", "examples"),
    [("zero-shot", ()), ("aggregate", OTHER_EXAMPLES), ("personalized", EXAMPLES)],
)
def test_it_judges_one_target_per_configuration_with_json_constrained_replies(
    llm_server, configuration, examples
):
    reply = backend_for(llm_server).judge(
        JudgeRequest(dimension=SPECIFICITY, examples=examples, seed=1, **TARGET)
    )
    assert reply.error == "", (configuration, reply.raw)
    assert SPECIFICITY.scale_min <= reply.score <= SPECIFICITY.scale_max
    assert 0 <= reply.confidence <= 100
    # llama-cpp-python refuses json_schema (HTTP 500); json_object with the schema is its best.
    assert reply.response_mode == "json_object"
    assert reply.retries == 0 and reply.prompt_tokens > 0
    assert 0 < reply.completion_tokens <= 200


def test_the_server_formats_prompts_with_gemmas_own_chat_template(llm_server):
    """The GGUF has no chat template (llama-cpp-python would use Llama 2's [INST] format); the
    server is given Gemma 3's, with the system message folded into the first user turn."""
    from llama_cpp.llama_chat_format import hf_tokenizer_config_to_chat_formatter

    command = server_command(port=llm_server.port)
    assert command[command.index("--chat_format") + 1] == "hf-tokenizer-config"
    config_path = Path(command[command.index("--hf_tokenizer_config_path") + 1])
    formatter = hf_tokenizer_config_to_chat_formatter(json.loads(config_path.read_text()))
    messages = build_messages(JudgeRequest(dimension=NEED, examples=(), **TARGET))
    system, user = (m["content"] for m in messages)
    expected = (
        f"<bos><start_of_turn>user\n{system}\n\n{user.strip()}<end_of_turn>\n<start_of_turn>model\n"
    )
    assert formatter(messages=messages).prompt == expected
    # A re-ask: the bad reply is the model's turn, the correction a user turn, then the model's.
    reask = [
        *messages,
        {"role": "assistant", "content": "nope"},
        {"role": "user", "content": "again"},
    ]
    assert formatter(messages=reask).prompt.endswith(
        "<start_of_turn>model\nnope<end_of_turn>\n<start_of_turn>user\nagain<end_of_turn>\n"
        "<start_of_turn>model\n"
    )


def test_a_reply_cut_by_max_tokens_fails_validation_and_is_asked_again(llm_server):
    backend = backend_for(llm_server, max_tokens=6, max_reasks=1)
    reply = backend.judge(JudgeRequest(dimension=SPECIFICITY, examples=EXAMPLES, **TARGET))
    assert reply.attempts == 2 and reply.score is None
    assert reply.error.startswith("no usable reply after 2 attempts")
    assert "cut at max_tokens=6" in reply.error
    assert reply.completion_tokens <= 12


def test_consecutive_targets_of_one_example_set_reuse_the_servers_prefix_cache(llm_server):
    requests = [
        JudgeRequest(
            dimension=SPECIFICITY,
            examples=EXAMPLES,
            seed=0,
            patent_text=f"Title: Patent {i}\nAbstract: A method, variant {i}.",
            idea_text=f"Title: Product {i}\nDescription: A service, variant {i}.",
        )
        for i in range(3)
    ]
    before = llm_server.log().count("prefix-match hit")
    replies = judge_many(backend_for(llm_server), requests, concurrency=1)
    assert all(r.ok for r in replies), [r.error for r in replies]
    assert llm_server.log().count("prefix-match hit") - before >= 2


def test_checking_the_greedy_pick_first_gives_the_replies_of_llama_cpp_pythons_own_sampler(
    llm_server,
):
    """apps/llm_server/process.py checks the best tokens against the JSON grammar before
    filtering the whole vocabulary; that must change the time taken, never the reply.

    Both sides start from a fresh server: the shared one reuses the KV cache of whatever the
    earlier tests asked (prefix matches), which moves the logits by rounding and, on a near
    tie, the greedy reply with them, so the comparison depended on the order of the tests."""
    requests = [
        JudgeRequest(dimension=dimension, examples=examples, seed=0, **TARGET)
        for dimension, examples in ((SPECIFICITY, EXAMPLES), (NEED, OTHER_EXAMPLES), (NEED, ()))
    ]
    with LocalLLMServer(pick_first=True) as picking:
        ours = [backend_for(picking).judge(r) for r in requests]
    with LocalLLMServer(pick_first=False) as stock:
        theirs = [backend_for(stock).judge(r) for r in requests]
    assert [r.raw for r in ours] == [r.raw for r in theirs]
    assert all(r.ok and r.response_mode == "json_object" for r in ours), [r.error for r in ours]


def test_the_server_listens_where_its_command_line_says_whatever_the_environment_holds(
    monkeypatch,
):
    """`PORT=8080 bin/demo --llm`: PORT is the web server's; llama-cpp-python's server would
    have taken it over its own --port."""
    from apps.llm_server.server import free_port

    monkeypatch.setenv("PORT", str(free_port()))
    monkeypatch.setenv("HOST", "0.0.0.0")
    server = LocalLLMServer().start(timeout=60)
    try:
        assert f"Uvicorn running on http://127.0.0.1:{server.port} " in server.log()
    finally:
        server.stop()
