"""The openai backend against a real HTTP server speaking the OpenAI wire format."""

import contextlib
import time

import pytest

from apps.judges.backends import PermanentBackendError, TransientBackendError, judge_many
from apps.judges.engine.prompting import build_messages, prompt_fingerprint
from tests.fake_llm import FakeLLM
from tests.judges.engine.conftest import make_request

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
    # JSON-constrained by default: the schema allows only the dimension's levels.
    assert sent["response_format"]["type"] == "json_schema"
    schema = sent["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["score"]["enum"] == [1, 2, 3, 4]
    assert schema["properties"]["confidence"] == {"type": "integer", "minimum": 0, "maximum": 100}
    assert sent["max_tokens"] == 200  # bounded output (LLM_MAX_TOKENS)
    assert sent["retry_count"] == "0"
    assert sent["authorization"] == "Bearer test-key"
    assert reply.error == "" and reply.score in (1, 2, 3) and reply.attempts == 1
    assert reply.prompt_fingerprint == prompt_fingerprint(sent["messages"])
    assert reply.model == "judge-model"
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.response_mode == "json_schema" and reply.retries == 0


def test_it_uses_the_configured_model_and_response_format(fake_llm, llm_backend):
    llm_backend(model="configured", response_format="json_object").judge(make_request(model=""))
    llm_backend(model="configured", response_format="text", max_tokens=64).judge(make_request())
    json_object, text = fake_llm.chat_requests
    assert json_object["model"] == "configured"
    assert json_object["response_format"]["type"] == "json_object"
    assert json_object["response_format"]["schema"]["required"] == ["score", "confidence", "reason"]
    assert text["response_format"] is None and text["stop"] == ["}\n"]
    assert text["max_tokens"] == 64


def test_max_tokens_comes_from_the_setting(fake_llm, llm_backend, settings):
    settings.LLM_MAX_TOKENS = 77
    llm_backend().judge(make_request())
    assert fake_llm.chat_requests[0]["max_tokens"] == 77


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
    fake_llm.push_status(429, retry_after_ms=1)
    fake_llm.push_status(500, retry_after_ms=1)
    fake_llm.push_status(503, retry_after_ms=1)
    fake_llm.push_json(score=2, confidence=90)
    reply = llm_backend(max_retries=3).judge(make_request())
    assert (reply.score, reply.attempts, reply.retries, reply.error) == (2, 1, 3, "")
    assert len(fake_llm.chat_requests) == 4
    # A 500 that does not name response_format is an outage, not a refusal: same format.
    assert {r["response_format"]["type"] for r in fake_llm.chat_requests} == {"json_schema"}


def test_the_sdk_retries_and_the_count_comes_from_the_raw_response(fake_llm, llm_backend):
    backend = llm_backend(max_retries=3)
    backend.judge(make_request())  # the format is now known: the SDK retries from here on
    fake_llm.push_status(429, retry_after_ms=1)
    fake_llm.push_status(503, retry_after_ms=1)
    reply = backend.judge(make_request(idea_text="Another idea"))
    assert reply.retries == 2 and reply.error == ""
    # The SDK numbers its own retries in a header; our count is the SDK's, not a guess.
    assert [r["retry_count"] for r in fake_llm.chat_requests[1:]] == ["0", "1", "2"]


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
        fake_llm.push_status(503, retry_after_ms=1)
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
        prompt_fingerprint(build_messages(r)) for r in requests
    ]
    assert all(r.error == "" for r in replies)
    assert 0.4 <= elapsed < 1.5  # two waves of four, not eight in a row nor all at once


def test_judge_many_propagates_a_permanent_error(fake_llm, llm_backend):
    fake_llm.push_status(401)
    with pytest.raises(PermanentBackendError):
        judge_many(llm_backend(), [make_request()] * 3, concurrency=1)


def test_a_refused_json_schema_falls_back_to_json_object_once_per_endpoint(llm_backend):
    with FakeLLM(refuse_formats={"json_schema"}) as fake:
        first = llm_backend(base_url=fake.base_url).judge(make_request())
        # A new backend (as the next task would build) skips the refused format at once.
        second = llm_backend(base_url=fake.base_url).judge(make_request(idea_text="Other"))
        kinds = [r["response_format"]["type"] for r in fake.chat_requests]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert fake.chat_requests[1]["response_format"]["schema"]["properties"]["score"]["enum"] == [
        1,
        2,
        3,
        4,
    ]
    assert (first.response_mode, second.response_mode) == ("json_object", "json_object")
    assert first.error == "" and first.retries == 0  # a refusal is not a transient retry


def test_the_remembered_format_is_shared_through_djangos_cache(llm_backend):
    from apps.judges.backends import openai as backend_module

    with FakeLLM(refuse_formats={"json_schema"}) as fake:
        llm_backend(base_url=fake.base_url).judge(make_request())
        backend_module._endpoint_steps.clear()  # as in another worker process
        llm_backend(base_url=fake.base_url).judge(make_request(idea_text="Other"))
        kinds = [r["response_format"]["type"] for r in fake.chat_requests]
    assert kinds == ["json_schema", "json_object", "json_object"]


def test_an_endpoint_refusing_every_format_gets_plain_text_cut_at_the_stop(llm_backend):
    with FakeLLM(refuse_formats={"json_schema", "json_object"}) as fake:
        fake.push_reply('{"score": 3, "reason": "Concrete.", "confidence": 80}\nHope this helps!')
        reply = llm_backend(base_url=fake.base_url).judge(make_request())
        sent = fake.chat_requests
    assert [(r["response_format"] or {}).get("type") for r in sent] == [
        "json_schema",
        "json_object",
        "json_object",
        None,
    ]
    assert sent[-1]["stop"] == ["}\n"]
    assert (reply.score, reply.confidence, reply.response_mode) == (3, 80, "text")
    assert "Hope" not in reply.raw


def test_a_reply_cut_at_max_tokens_is_asked_again_saying_so(fake_llm, llm_backend):
    fake_llm.push_reply('{"score": 3, "reason": "This idea is')  # what max_tokens leaves
    reply = llm_backend().judge(make_request())
    assert reply.attempts == 2 and reply.error == ""
    correction = fake_llm.chat_requests[1]["messages"][-1]["content"]
    assert "confidence" in correction


def test_calls_wait_for_a_place_in_the_client_not_behind_their_abandoned_copies(llm_backend):
    """A one-slot server answers in turn. Four calls sent at once wait in its queue past the
    timeout, are abandoned and sent again behind their own abandoned copies; with
    max_concurrency=1 they wait in the client, where waiting does not count, and none is
    abandoned."""
    requests = [make_request(idea_text=f"Idea {i}") for i in range(4)]
    with FakeLLM(single_slot=True, latency=0.4) as fake:
        unbounded = llm_backend(base_url=fake.base_url, timeout=1.0, max_retries=1)
        unbounded.judge(make_request())  # learn the format first
        # A retry queues behind the abandoned copies too and may time out again, failing the
        # batch: either way the server did work nobody waits for.
        with contextlib.suppress(TransientBackendError):
            judge_many(unbounded, requests, concurrency=4)
        assert unbounded.timeouts >= 1 and len(fake.chat_requests) > 5
    with FakeLLM(single_slot=True, latency=0.4) as fake:
        gated = llm_backend(base_url=fake.base_url, timeout=1.0, max_retries=1, max_concurrency=1)
        gated.judge(make_request())
        replies = judge_many(gated, requests, concurrency=4)
        assert gated.timeouts == 0 and all(r.retries == 0 and r.ok for r in replies)
        assert len(fake.chat_requests) == 5


def test_a_format_tried_after_a_refusal_is_not_trusted_until_it_works(llm_backend):
    """The step after a refusal is remembered as the place to start, not as confirmed: a
    second refusal, met by the next judgment, is still recognised (not retried as an outage)."""
    from apps.judges.backends.openai import _endpoint_key, remember_step

    with FakeLLM(refuse_formats={"json_schema", "json_object"}) as fake:
        remember_step(
            _endpoint_key(fake.base_url, "fake-model"), "json_object_schema", confirmed=False
        )
        reply = llm_backend(base_url=fake.base_url).judge(make_request())
        kinds = [(r["response_format"] or {}).get("type") for r in fake.chat_requests]
    assert kinds == ["json_object", "json_object", None]
    assert reply.response_mode == "text" and reply.retries == 0
