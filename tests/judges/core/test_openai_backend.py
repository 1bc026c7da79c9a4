"""The openai backend against a real HTTP server speaking the OpenAI wire format."""

import time

import pytest

from apps.judges.backends import PermanentBackendError, TransientBackendError, judge_many
from apps.judges.prompting import build_messages, prompt_fingerprint
from tests.judges.core.conftest import make_request

MESSY = (
    "Sure! Here is my assessment:\n```json\n"
    '{"score": "3", "reason": \'ok\', "confidence": 88,}\n```'
)


def test_it_sends_the_model_the_prompt_and_the_sampling_settings(fake_llm, llm_backend):
    request = make_request(model="judge-model", temperature=0.2, seed=5)
    reply = llm_backend().judge(request)
    [sent] = fake_llm.chat_requests
    assert sent["model"] == "judge-model"
    assert sent["temperature"] == 0.2 and sent["seed"] == 5
    assert sent["messages"] == build_messages(request)
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert '{"score"' in sent["messages"][0]["content"]
    assert sent["response_format"] is None  # json mode is off unless configured
    assert sent["authorization"] == "Bearer test-key"
    assert reply.error == "" and reply.score in (1, 2, 3) and reply.attempts == 1
    assert reply.prompt_fingerprint == prompt_fingerprint(sent["messages"])
    assert reply.model == "judge-model"
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0


def test_it_uses_the_configured_model_and_json_mode_when_asked(fake_llm, llm_backend):
    llm_backend(model="configured", json_mode=True).judge(make_request(model=""))
    [sent] = fake_llm.chat_requests
    assert sent["model"] == "configured"
    assert sent["response_format"] == {"type": "json_object"}


def test_it_reads_a_messy_reply_without_asking_again(fake_llm, llm_backend):
    fake_llm.push_reply(MESSY)
    reply = llm_backend().judge(make_request())
    assert (reply.score, reply.reason, reply.confidence) == (3, "ok", 88)
    assert reply.raw == MESSY and reply.attempts == 1
    assert len(fake_llm.chat_requests) == 1


def test_it_asks_again_after_an_off_scale_score_showing_the_bad_reply(fake_llm, llm_backend):
    fake_llm.push_json(score=9, confidence=95)
    fake_llm.push_json(score=4, reason="fixed", confidence=91)
    reply = llm_backend().judge(make_request())
    assert (reply.score, reply.reason, reply.attempts, reply.error) == (4, "fixed", 2, "")
    first, second = fake_llm.chat_requests
    assert second["messages"][:2] == first["messages"]  # same prefix, still cacheable
    assert second["messages"][2]["role"] == "assistant"
    assert '"score": 9' in second["messages"][2]["content"]
    assert second["messages"][3]["role"] == "user"
    assert "off the scale 1-4" in second["messages"][3]["content"]


def test_it_gives_up_after_four_reasks_and_records_the_error(fake_llm, llm_backend):
    fake_llm.push_unparsable(times=5)
    fake_llm.push_json(score=2)  # would be valid, but must never be requested
    reply = llm_backend().judge(make_request())
    assert reply.score is None and reply.confidence is None
    assert reply.attempts == 5 and len(fake_llm.chat_requests) == 5
    assert "after 5 attempts" in reply.error and "no JSON object" in reply.error
    assert reply.raw == "I am not able to give a score for this idea."
    assert reply.prompt_tokens > 0  # every attempt is paid for and counted


def test_the_fake_servers_messy_and_off_scale_replies_are_handled(fake_llm, llm_backend):
    fake_llm.push_off_scale()
    fake_llm.push_messy(score=2, confidence=81)
    reply = llm_backend().judge(make_request())
    assert (reply.score, reply.confidence, reply.attempts) == (2, 81, 2)


def test_max_reasks_is_configurable(fake_llm, llm_backend):
    for _ in range(3):
        fake_llm.push_reply("nope")
    reply = llm_backend(max_reasks=1).judge(make_request())
    assert reply.attempts == 2 and reply.score is None and len(fake_llm.chat_requests) == 2


def test_it_retries_rate_limits_and_server_errors_then_succeeds(fake_llm, llm_backend):
    fake_llm.push_status(429)
    fake_llm.push_status(500)
    fake_llm.push_status(503)
    fake_llm.push_json(score=2, confidence=90)
    reply = llm_backend(max_retries=3).judge(make_request())
    assert (reply.score, reply.attempts, reply.retries, reply.error) == (2, 1, 3, "")
    assert len(fake_llm.chat_requests) == 4


def test_it_waits_at_least_the_retry_after_of_a_429(fake_llm, llm_backend):
    fake_llm.push_status(429, retry_after=0.4)
    llm_backend().judge(make_request())
    first, second = fake_llm.chat_requests
    assert second["time"] - first["time"] >= 0.4


def test_it_retries_a_request_that_hangs_past_the_timeout(fake_llm, llm_backend):
    fake_llm.push_hang(5)
    started = time.monotonic()
    reply = llm_backend(timeout=0.5).judge(make_request())
    assert reply.score is not None and reply.retries == 1
    assert time.monotonic() - started < 4
    assert len(fake_llm.chat_requests) == 2


def test_it_raises_a_transient_error_once_retries_are_exhausted(fake_llm, llm_backend):
    for _ in range(3):
        fake_llm.push_status(503)
    with pytest.raises(TransientBackendError, match="503"):
        llm_backend(max_retries=2).judge(make_request())
    assert len(fake_llm.chat_requests) == 3


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_it_does_not_retry_permanent_errors(fake_llm, llm_backend, status):
    fake_llm.push_status(status)
    with pytest.raises(PermanentBackendError, match=str(status)):
        llm_backend().judge(make_request())
    assert len(fake_llm.chat_requests) == 1


def test_an_unreachable_endpoint_is_transient(llm_backend):
    backend = llm_backend(base_url="http://127.0.0.1:9/v1", max_retries=1)
    with pytest.raises(TransientBackendError, match="connection"):
        backend.judge(make_request())


def test_cached_tokens_count_the_prefix_shared_with_earlier_prompts(fake_llm, llm_backend):
    backend = llm_backend()
    first = backend.judge(make_request(patent_text="First patent", idea_text="First idea"))
    second = backend.judge(make_request(patent_text="Second patent", idea_text="Second idea"))
    assert first.cached_prompt_tokens == 0
    assert 0 < second.cached_prompt_tokens < second.prompt_tokens
    assert second.cached_prompt_tokens >= 0.6 * second.prompt_tokens


def test_judge_many_keeps_order_and_limits_calls_in_flight(fake_llm, llm_backend):
    fake_llm.latency = 0.2
    requests = [make_request(idea_text=f"Idea number {i}") for i in range(8)]
    started = time.monotonic()
    replies = judge_many(llm_backend(), requests, concurrency=4)
    elapsed = time.monotonic() - started
    assert [r.prompt_fingerprint for r in replies] == [
        prompt_fingerprint(build_messages(r)) for r in requests]
    assert all(r.error == "" for r in replies)
    assert 0.4 <= elapsed < 1.5  # two waves of four, not eight in a row nor all at once


def test_judge_many_propagates_a_permanent_error(fake_llm, llm_backend):
    fake_llm.push_status(401)
    with pytest.raises(PermanentBackendError):
        judge_many(llm_backend(), [make_request()] * 3, concurrency=1)
