from apps.judges.engine.prompting import (
    TARGET_HEADING,
    build_messages,
    idea_text,
    patent_text,
    prompt_fingerprint,
    shared_prefix_chars,
    shared_prefix_share,
)
from tests.judges.engine.conftest import EXAMPLES, NEED, make_request


def test_it_puts_the_task_first_then_instruction_examples_and_the_target_last():
    messages = build_messages(make_request())
    assert [m["role"] for m in messages] == ["system", "user"]
    assert '"score"' in messages[0]["content"] and '"confidence"' in messages[0]["content"]
    user = messages[1]["content"]
    positions = [
        user.index(s)
        for s in ("## Instruction", "## Examples", "### Example 1", "### Example 2", TARGET_HEADING)
    ]
    assert positions == sorted(positions)
    assert "Supplier watch" in user[user.index(TARGET_HEADING) :]
    assert "Score: 3" in user and "Score: 2" in user
    assert "from 1 to 4" in user


def test_it_lists_every_level_and_marks_categories():
    user = build_messages(make_request(dimension=NEED))[1]["content"]
    for level in range(0, 4):
        assert f"- {level}" in user
    assert "- 0 [category]: Not a B2B product." in user
    assert "category rather than a degree" in user


def test_it_omits_the_examples_section_for_zero_shot():
    user = build_messages(make_request(examples=()))[1]["content"]
    assert "## Examples" not in user
    assert TARGET_HEADING in user


def test_the_shared_prefix_is_byte_identical_across_targets():
    a = build_messages(make_request(patent_text="P one", idea_text="I one"))
    b = build_messages(make_request(patent_text="Another patent", idea_text="Other idea"))
    cut_a, cut_b = shared_prefix_chars(a), shared_prefix_chars(b)
    flat_a = "".join(m["content"] for m in a)
    flat_b = "".join(m["content"] for m in b)
    assert cut_a == cut_b
    assert flat_a[:cut_a].encode() == flat_b[:cut_b].encode()
    assert flat_a[cut_a:] != flat_b[cut_b:]
    assert prompt_fingerprint(a) != prompt_fingerprint(b)


def test_the_prefix_changes_when_the_examples_change():
    a = build_messages(make_request())
    b = build_messages(make_request(examples=EXAMPLES[:1]))
    assert (
        "".join(m["content"] for m in a)[: shared_prefix_chars(a)]
        != "".join(m["content"] for m in b)[: shared_prefix_chars(b)]
    )


def test_the_shared_share_grows_with_examples():
    zero = shared_prefix_share(build_messages(make_request(examples=())))
    two = shared_prefix_share(build_messages(make_request()))
    assert 0 < zero < two < 1


def test_fingerprints_are_stable_for_equal_prompts():
    assert prompt_fingerprint(build_messages(make_request())) == prompt_fingerprint(
        build_messages(make_request())
    )


def test_text_helpers_render_fields_and_bound_long_claims():
    text = patent_text("Hum filter", "Removes hum.", "claim " * 5000)
    assert text.startswith("Title: Hum filter\nAbstract: Removes hum.\nClaims: claim")
    assert len(text) <= 2600 and text.endswith("…")
    idea = idea_text("Headset", "Clean audio.", "", "Cheaper.")
    assert idea == "Title: Headset\nDescription: Clean audio.\nDifferentiation: Cheaper."
