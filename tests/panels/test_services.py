"""Panel services against the database and the fake LLM server (a real HTTP server)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from apps.core.errors import ApplicationError
from apps.panels import selectors
from apps.panels.models import (
    PanelChunk,
    PanelDebate,
    PanelRun,
    PanelTurn,
    Persona,
    PersonaDocument,
)
from apps.panels.services import (
    panel_run_execute,
    panel_runs_reclaim,
    persona_document_add,
    persona_document_extract,
    personas_from_reviewers,
    personas_invent,
)
from apps.panels.services.runs import panel_run_plan, panel_run_start
from tests.panels.conftest import DIMENSION, make_personas, scripted

pytestmark = pytest.mark.django_db

DOC = (
    "Interviews with hospital purchasing: buyers pay only for tools that cut charting time in "
    "half. Ward nurses insist that new screens must never add a click to a shift."
)


def _run(domain, *, rounds=2, ideas=2, budget=None, source=Persona.Source.INVENTED) -> PanelRun:
    plan = panel_run_plan(
        domain=domain, source=source, dimension_key=DIMENSION, idea_count=ideas, max_rounds=rounds
    )
    run = panel_run_start(plan=plan, by=None, budget_tokens=budget, send=False)
    panel_run_execute(run_id=run.id)
    run.refresh_from_db()
    return run


def test_persona_extraction_stores_stakeholders_with_quotes_found_in_the_document(
    domain, llm, admin, django_capture_on_commit_callbacks
):
    fake = llm()
    with django_capture_on_commit_callbacks(execute=False):
        document = persona_document_add(domain=domain, title="Interviews", text=DOC, by=admin)
    fake.push_reply(
        json.dumps(
            {
                "stakeholders": [
                    {
                        "name": "Hospital buyers",
                        "description": "They buy what saves time.",
                        "evidence": [
                            {
                                "dimension": "market_size",
                                "quote": "buyers pay only for tools that cut charting time",
                            },
                            {
                                "dimension": "innovativeness",
                                "quote": "nothing like this is in the text",
                            },
                        ],
                    },
                    {
                        "name": "Ward nurses",
                        "evidence": [
                            {
                                "dimension": "need_validity",
                                "quote": "must never add a click to a shift",
                            }
                        ],
                    },
                    {
                        "name": "Buyers at the hospital",
                        "evidence": [
                            {"dimension": "specificity", "quote": "cut charting time in half"}
                        ],
                    },
                ]
            }
        )
    )
    persona_document_extract(document_id=document.id)
    document.refresh_from_db()
    assert document.status == PersonaDocument.Status.DONE
    personas = {p.name: p for p in Persona.objects.filter(domain=domain, source="documents")}
    assert set(personas) == {"Hospital buyers", "Ward nurses"}  # the similar buyers merged
    buyers = personas["Hospital buyers"]
    assert {e["quote"] for e in buyers.evidence} == {
        "buyers pay only for tools that cut charting time",
        "cut charting time in half",
    }
    assert buyers.dimensions == ["specificity", "market_size"]
    assert buyers.model == "fake-model"


def test_without_an_endpoint_panels_refuse_and_point_to_the_demo(domain, settings, rated):
    settings.LLM_BASE_URL = ""
    make_personas(domain, ["A", "B"])
    plan = panel_run_plan(domain=domain, source="invented", dimension_key=DIMENSION)
    with pytest.raises(ApplicationError, match="bin/demo --llm"):
        panel_run_start(plan=plan, by=None)


def test_a_debate_stops_when_no_member_changes_its_score(domain, llm, rated):
    make_personas(domain, ["Alice", "Bob", "Carol"])
    fake = llm(scripted(lambda persona, rnd: {"Alice": 1, "Bob": 4, "Carol": 4}.get(persona, 3)))
    run = _run(domain, rounds=3, ideas=1)
    debate = PanelDebate.objects.get(run=run)
    assert debate.stop_reason == "stable"
    assert debate.debate_rounds == 1
    # single + 3 alone + 3 in round 1 + synthesis
    assert PanelTurn.objects.filter(run=run).count() == 8 == len(fake.chat_requests)
    assert debate.before_score == debate.after_score == pytest.approx(3.0)
    assert debate.synthesis == "They mostly agree."


def test_a_debate_that_keeps_moving_stops_at_the_maximum_of_rounds(domain, llm, rated):
    make_personas(domain, ["Alice", "Bob"])
    llm(
        scripted(
            lambda persona, rnd: (
                (1 if persona == "Alice" else 5) if (rnd or 0) % 2 == 0 else 3 + (persona == "Bob")
            )
        )
    )
    run = _run(domain, rounds=3, ideas=1)
    debate = PanelDebate.objects.get(run=run)
    assert debate.stop_reason == "max_rounds"
    assert debate.debate_rounds == 3
    assert len(debate.rounds) == 4
    assert run.status == PanelRun.Status.DONE


def test_the_panel_score_aggregates_the_members_final_scores_and_every_turn_is_stored(
    domain, llm, rated
):
    make_personas(domain, ["Alice", "Bob", "Carol"])
    # Alice gives in to the others in round 1: 1,5,5 -> 5,5,5.
    llm(scripted(lambda persona, rnd: 5 if (persona != "Alice" or rnd) else 1))
    run = _run(domain, rounds=2, ideas=2)
    for debate in PanelDebate.objects.filter(run=run):
        assert debate.before_score == pytest.approx(11 / 3)
        assert debate.after_score == pytest.approx(5.0)
        assert debate.stop_reason == "unanimous"
    turn = PanelTurn.objects.filter(run=run, kind="revise").first()
    assert len(turn.prompt_fingerprint) == 64 and turn.prompt_tokens > 0 and turn.raw
    assert run.calls == PanelTurn.objects.filter(run=run).count() == 2 * (1 + 3 + 3 + 1)
    dim = run.figures["dimensions"][DIMENSION]
    assert dim["switch_to_majority_rate"] == 1.0
    assert dim["calls"] == run.calls


def test_a_retried_chunk_replays_its_stored_turns_without_duplicates(domain, llm, rated):
    make_personas(domain, ["Alice", "Bob"])
    fake = llm(scripted(lambda persona, rnd: 2 if persona == "Alice" else 4))
    run = _run(domain, rounds=2, ideas=2)
    turns = list(
        PanelTurn.objects.filter(run=run).values_list("idea", "kind", "member", "round", "score")
    )
    calls = len(fake.chat_requests)
    # A worker died in the middle of the second idea: its last two turns and its debate were
    # never written, and its lease went stale.
    chunk = PanelChunk.objects.get(run=run, index=1)
    lost = PanelTurn.objects.filter(run=run, idea=chunk.idea).order_by("-id")[:2]
    PanelTurn.objects.filter(id__in=[t.id for t in lost]).delete()
    PanelDebate.objects.filter(run=run, idea=chunk.idea).delete()
    PanelChunk.objects.filter(id=chunk.id).update(status="running", heartbeat_at=None)
    PanelRun.objects.filter(id=run.id).update(status="running")
    assert panel_run_execute(run_id=run.id) == "done"
    again = list(
        PanelTurn.objects.filter(run=run).values_list("idea", "kind", "member", "round", "score")
    )
    assert sorted(again) == sorted(turns)
    assert len(fake.chat_requests) == calls + 2  # only the two lost turns were asked again
    assert PanelDebate.objects.filter(run=run).count() == 2
    # And a duplicate delivery of a finished run does nothing.
    assert panel_run_execute(run_id=run.id) == "done"
    assert len(fake.chat_requests) == calls + 2


def test_a_run_stops_at_its_budget_cap_and_keeps_what_it_finished(domain, llm, rated):
    make_personas(domain, ["Alice", "Bob"])
    llm(scripted(lambda persona, rnd: 2 if persona == "Alice" else 4))
    run = _run(domain, rounds=1, ideas=3, budget=300)
    assert run.status == PanelRun.Status.STOPPED
    assert "budget cap of 300 tokens" in run.error
    assert run.prompt_tokens + run.completion_tokens >= 300
    assert run.calls < run.estimate["calls"]


def test_the_estimate_bounds_what_a_run_uses(domain, llm, rated):
    make_personas(domain, ["Alice", "Bob"])
    llm(scripted(lambda persona, rnd: 1 + (persona == "Bob") * 4 if (rnd or 0) % 2 == 0 else 3))
    run = _run(domain, rounds=2, ideas=2)
    assert run.calls <= run.estimate["calls"]
    assert run.prompt_tokens <= run.estimate["prompt_tokens"]


def test_bad_inputs_are_named(domain, llm, rated):
    make_personas(domain, ["Alice"])
    with pytest.raises(ApplicationError) as exc:
        panel_run_plan(domain=domain, source="invented", dimension_key="nope", max_rounds=9)
    fields = {e.field for e in exc.value.errors}
    assert fields == {"rounds", "dimension"}
    with pytest.raises(ApplicationError, match="at least 2 active personas"):
        panel_run_plan(domain=domain, source="invented", dimension_key=DIMENSION)


def test_panel_scores_for_ideas_returns_the_latest_finished_run_labelled_as_judges(
    domain, llm, rated
):
    make_personas(domain, ["Alice", "Bob"])
    llm(scripted(lambda persona, rnd: 2 if persona == "Alice" else 4))
    run = _run(domain, rounds=1, ideas=2)
    idea_ids = [c.idea_id for c in run.chunks.all()]
    scores = selectors.panel_scores_for_ideas(idea_ids=idea_ids + [999999])
    assert set(scores) == set(idea_ids)
    (score,) = scores[idea_ids[0]]
    assert score.after == 3.0 and score.single is not None and score.run_id == run.id
    assert "not reviewers" in score.label
    # Decide asks for a whole domain's ideas at once (the debated ones are then read first):
    # the same scores.
    many = idea_ids + list(range(10**6, 10**6 + selectors.MANY_IDEAS))
    assert selectors.panel_scores_for_ideas(idea_ids=many) == scores
    assert selectors.panel_scores_for_ideas(idea_ids=many[2:]) == {}


def test_panel_study_command_prints_the_figures_per_dimension(domain, llm, rated, capsys):
    llm(scripted(lambda persona, rnd: 3))
    call_command(
        "panel_study",
        "--domain",
        "nlp",
        "--personas",
        "reviewers",
        "--rounds",
        "1",
        "--ideas",
        "2",
        "--dimension",
        DIMENSION,
        "--format",
        "json",
    )
    out = json.loads(capsys.readouterr().out)
    dim = out["dimensions"][DIMENSION]
    for key in (
        "alpha_single",
        "alpha_before",
        "alpha_after",
        "calls",
        "tokens",
        "switch_to_majority_rate",
    ):
        assert key in dim
    assert out["calls"] > 0 and out["tokens"] > 0 and out["model"] == "fake-model"
    assert out["personas"] == "reviewers" and len(out["members"]) == 3
    assert (
        Persona.objects.filter(domain=domain, source="reviewers", reviewer__isnull=False).count()
        == 3
    )


def test_invented_personas_come_from_the_rubric_and_a_mute_model_gets_named_generic_ones(
    domain, llm
):
    fake = llm()
    fake.push_reply(
        json.dumps(
            {
                "stakeholders": [
                    {
                        "name": "Venture investor",
                        "description": "Wants scale.",
                        "dimensions": ["market_size", "colour"],
                    },
                    {
                        "name": "Venture investors",
                        "description": "Same again.",
                        "dimensions": ["innovativeness"],
                    },
                ]
            }
        )
    )
    personas = personas_invent(domain=domain, count=3)
    assert [p.name for p in personas] == [
        "Venture investor",
        "Generic reviewer 2",
        "Generic reviewer 3",
    ]
    assert personas[0].dimensions == [
        "innovativeness",
        "market_size",
    ]  # merged, unknown key dropped
    assert all(p.source == "invented" for p in personas)


def test_a_reviewer_persona_states_how_strict_the_reviewer_is(domain, llm, rated):
    fake = llm()
    fake.push_reply(json.dumps({"persona": "You reward bold ideas."}))
    reviewers, _ = rated
    (persona,) = personas_from_reviewers(domain=domain, limit=1)
    assert persona.reviewer in reviewers
    assert persona.description.startswith("You reward bold ideas.")
    assert "On innovativeness: mean" in persona.description
    assert "the others on the same ideas" in persona.description


def test_a_document_read_without_an_endpoint_is_marked_failed_with_the_reason(
    domain, llm, admin, settings, django_capture_on_commit_callbacks
):
    llm()
    with django_capture_on_commit_callbacks(execute=False):
        document = persona_document_add(domain=domain, title="Notes", text=DOC, by=admin)
    settings.LLM_BASE_URL = ""
    assert persona_document_extract(document_id=document.id).status == "failed"
    document.refresh_from_db()
    assert "bin/demo --llm" in document.error


def test_panel_study_command_names_what_is_missing(domain, llm, rated):
    llm()
    with pytest.raises(CommandError, match="at least 2 active personas from documents"):
        call_command(
            "panel_study", "--domain", "nlp", "--personas", "documents", "--format", "json"
        )
    with pytest.raises(CommandError, match="--domain: no domain with key 'nope'"):
        call_command(
            "panel_study", "--domain", "nope", "--personas", "invented", "--format", "json"
        )


def test_the_reclaim_resends_runs_a_dead_worker_or_a_lost_message_left(
    domain, llm, rated, broker, django_capture_on_commit_callbacks
):
    make_personas(domain, ["Alice", "Bob"])
    llm()
    plan = panel_run_plan(domain=domain, source="invented", dimension_key=DIMENSION, idea_count=1)
    dead, lost, fresh = (panel_run_start(plan=plan, by=None, send=False) for _ in range(3))
    long_ago = timezone.now() - timedelta(hours=1)
    PanelRun.objects.filter(id=dead.id).update(status="running", heartbeat_at=long_ago)
    PanelRun.objects.filter(id=lost.id).update(updated_at=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        assert panel_runs_reclaim() == {"stale": 1, "lost": 1}
    sent = sorted(m.args[0] for m in broker.sent("panels.panel_run_execute"))
    assert sent == sorted([dead.id, lost.id])
    assert panel_runs_reclaim() == {"stale": 0, "lost": 0}  # their clocks were reset
