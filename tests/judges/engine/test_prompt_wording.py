"""Judge prompts speak the rubric's language; PBIG's wording stays the default, byte for byte."""

from dataclasses import replace

from apps.judges.engine.judgment import PromptWording
from apps.judges.engine.prompting import (
    PBIG_TASK,
    SYSTEM_PROMPT,
    build_messages,
    idea_text,
    rubric_wording,
    shared_prefix_chars,
)
from tests.judges.engine.conftest import SPECIFICITY, make_request

ARGUMENTS = PromptWording(
    task="You judge short arguments written on a debate topic.",
    item_noun="argument",
    source_noun="topic",
)


def test_the_default_wording_is_pbigs():
    system, user = (m["content"] for m in build_messages(make_request()))
    assert system == SYSTEM_PROMPT
    assert system.startswith(PBIG_TASK)
    assert "## The patent and idea to score" in user
    assert "\nPatent:\n" in user and "\nIdea:\n" in user


def test_a_rubric_about_arguments_gets_a_prompt_about_arguments():
    request = make_request(dimension=replace(SPECIFICITY, wording=ARGUMENTS))
    messages = build_messages(request)
    system, user = (m["content"] for m in messages)
    text = system + user
    assert system.startswith("You judge short arguments written on a debate topic.")
    assert "patent" not in text.lower() and "product idea" not in text.lower()
    assert "Score the new argument on that dimension only" in system
    assert "## The topic and argument to score" in user
    assert "\nTopic:\n" in user and "\nArgument:\n" in user
    # The cacheable prefix still ends where the target block starts.
    assert user[shared_prefix_chars(messages) - len(system) :].startswith("## The topic")


def test_nouns_without_a_task_build_a_neutral_task_statement():
    wording = PromptWording(item_noun="summary", source_noun="article")
    system = build_messages(make_request(dimension=replace(SPECIFICITY, wording=wording)))[0]
    assert system["content"].startswith(
        "You score cases for a panel of reviewers. Each case pairs an article with a summary"
    )


def test_blank_rubric_fields_fall_back_to_pbig_and_untitled_items_skip_the_title():
    class Blank:
        task, item_noun, source_noun = "", "", " "

    assert rubric_wording(Blank()) == PromptWording()
    assert idea_text("", "Uniforms limit expression.") == "Description: Uniforms limit expression."
