"""Alignment snapshots: queued once per scope when runs finish, computed once, read by pages."""

from __future__ import annotations

import re
import time

import pytest
from django.urls import reverse

from apps.judges import services
from apps.judges.models import AlignmentSnapshot, JudgeFinal, JudgeRun
from apps.judges.services.alignment import (
    alignment_runs_finished,
    alignment_snapshot_compute,
    scopes_for_runs,
)
from apps.judges.services.bursts import marker_key
from tests.judges.helpers import compute_alignment, small_configs


def test_a_finished_evaluation_feeds_the_auto_scopes_and_a_study_its_own(
    domain, two_reviewers_history, executed_loo
):
    rita, _, _ = two_reviewers_history
    configs = small_configs()
    loo = executed_loo(rita, configs)
    study, _ = services.judge_study_start(
        by=None,
        domain=domain,
        dimensions=["innovativeness"],
        configs=configs,
        shots=[2],
        seeds=1,
        backend="",
        min_history=2,
        enqueue=False,
    )
    services.judge_run_execute(run_id=study.id)
    assert scopes_for_runs([loo.id]) == ["auto", "auto|nlp"]
    assert scopes_for_runs([study.id]) == [f"run-{study.id}"]


def test_a_burst_of_finished_runs_queues_one_snapshot_per_scope(
    two_reviewers_history, django_capture_on_commit_callbacks, executed_loo
):
    rita, otto, _ = two_reviewers_history
    configs = small_configs()
    runs = [executed_loo(r, configs, notify=False) for r in (rita, otto)]
    with django_capture_on_commit_callbacks() as sent:
        for run in runs:
            alignment_runs_finished(run_ids=[run.id])
        alignment_runs_finished(run_ids=[r.id for r in runs])
    queued = AlignmentSnapshot.objects.filter(status="queued")
    assert sorted(queued.values_list("scope", flat=True)) == ["auto", "auto|nlp"]
    assert len(sent) == 2  # one task per scope, sent after commit


def test_computing_a_snapshot_twice_changes_nothing_the_second_time(
    two_reviewers_history, executed_loo
):
    rita, _, _ = two_reviewers_history
    executed_loo(rita, small_configs())
    snapshot = AlignmentSnapshot.objects.get(scope="auto", status="queued")
    first = alignment_snapshot_compute(snapshot_id=snapshot.id)
    assert first.status == "done" and first.result["curve"]
    again = alignment_snapshot_compute(snapshot_id=snapshot.id)
    assert again.computed_at == first.computed_at and again.result == first.result


def test_the_dashboard_shows_the_stored_number_and_says_when_newer_runs_finished(
    client, manager, evaluated, executed_loo
):
    snapshot = AlignmentSnapshot.objects.get(scope="auto", status="done")
    row = next(r for r in snapshot.result["curve"] if r["alpha"] is not None)
    # Tamper with the stored figure: the page must show the stored one, not recompute it.
    row["alpha"] = 0.4321
    AlignmentSnapshot.objects.filter(id=snapshot.id).update(result=snapshot.result)
    client.force_login(manager)
    page = client.get(reverse("judges:alignment")).content.decode()
    assert '<td class="num">0.432</td>' in page
    assert "up to date" in page
    rita = evaluated[0]
    executed_loo(rita, list(JudgeRun.objects.get(id=snapshot.run_ids[0]).configs.all()))
    page = client.get(reverse("judges:alignment")).content.decode()
    assert "runs finished since" in page and "A new computation is queued" in page


def test_no_get_computes_alignment(client, manager, django_assert_max_num_queries, evaluated):
    client.force_login(manager)
    with django_assert_max_num_queries(40):
        assert client.get(reverse("judges:alignment")).status_code == 200
    with django_assert_max_num_queries(12):
        assert client.get(reverse("judges:alignment_csv", args=["curve"])).status_code == 200


def test_a_judge_csv_neutralises_a_formula_looking_reason(client, manager, evaluated):
    rita = evaluated[0]
    final = JudgeFinal.objects.filter(run__purpose="prediction", reviewer=rita).first()
    final.reason = '=HYPERLINK("http://evil.example","click")'
    final.save(update_fields=["reason"])
    client.force_login(manager)
    response = client.get(reverse("judges:predictions"), {"reviewer": "rita", "format": "csv"})
    body = b"".join(response.streaming_content).decode()
    assert "'=HYPERLINK" in body
    assert not re.search(r'(^|,)"?=HYPERLINK', body, re.MULTILINE)


def test_the_run_page_polls_while_the_run_works_and_stops_when_it_is_done(
    client, manager, two_reviewers_history, request_loo
):
    rita, _, _ = two_reviewers_history
    run = request_loo(rita)
    client.force_login(manager)
    partial = client.get(reverse("judges:run_status", args=[run.id])).content.decode()
    assert 'id="run-status"' in partial and 'hx-trigger="every 2s"' in partial
    assert "1 run queued, 0 running" in partial
    services.judge_run_execute(run_id=run.id)
    alignment_runs_finished(run_ids=[run.id])  # the engine's after-commit call
    partial = client.get(reverse("judges:run_status", args=[run.id])).content.decode()
    # Done, and its alignment is being computed: it keeps polling until that is stored.
    assert "Being computed" in partial and 'hx-trigger="every 2s"' in partial
    compute_alignment()
    partial = client.get(reverse("judges:run_status", args=[run.id])).content.decode()
    assert "hx-trigger" not in partial and 'id="run-alignment"' in partial
    assert "Local baseline (not an LLM)" in partial


@pytest.mark.parametrize("page", ["judges:alignment", "judges:predictions"])
def test_pages_say_how_many_runs_wait_instead_of_no_predictions_yet(
    client, manager, two_reviewers_history, request_loo, page
):
    rita, _, _ = two_reviewers_history
    request_loo(rita)
    client.force_login(manager)
    body = client.get(reverse(page)).content.decode()
    assert "1 judge run queued and 0 running" in body
    assert "once they have enough ratings" not in body


def test_my_judge_shows_a_plain_verdict_with_n_and_an_interval(client, evaluated):
    rita = evaluated[0]
    client.force_login(rita)
    page = client.get(reverse("judges:me")).content.decode()
    assert 'id="my-verdicts"' in page
    assert re.search(r"reproduces well|partly|not yet", page)
    assert re.search(r"n=\d+", page)
    mine = client.get(reverse("judges-api-my-alignment")).json()
    assert mine["verdicts"] and {"level", "n", "low", "high", "coverage"} <= set(
        mine["verdicts"][0]
    )


def test_a_manager_queues_a_recompute_and_the_banner_reloads_the_page_once_it_is_stored(
    client, manager, domain, evaluated, django_capture_on_commit_callbacks
):
    client.force_login(manager)
    with django_capture_on_commit_callbacks() as sent:
        response = client.post(reverse("judges:alignment_recompute"), {"domain": "nlp"})
    assert response.status_code == 302 and "domain=nlp" in response["Location"]
    assert AlignmentSnapshot.objects.filter(scope="auto|nlp", status="queued").count() == 1
    assert len(sent) == 1
    banner = client.get(
        reverse("judges:alignment_status"),
        {"domain": "nlp", "waiting": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert "A new computation is queued" in banner.content.decode()
    assert "HX-Refresh" not in banner
    compute_alignment()
    banner = client.get(
        reverse("judges:alignment_status"),
        {"domain": "nlp", "waiting": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert banner["HX-Refresh"] == "true" and "hx-trigger" not in banner.content.decode()


def test_a_burst_queues_the_alignment_when_its_last_run_finishes(
    two_reviewers_history, django_capture_on_commit_callbacks, executed_loo
):
    """While other evaluations are queued or running, a finishing one queues nothing (the
    burst's first finished run starts its clock); the last one queues every scope, even when
    it failed itself, and clears the clock for the next burst."""
    from django.core.cache import cache

    from apps.judges.services.alignment import alignment_after_run

    rita, otto, _ = two_reviewers_history
    configs = small_configs()
    first, last = (executed_loo(r, configs, notify=False) for r in (rita, otto))
    JudgeRun.objects.filter(id=last.id).update(status=JudgeRun.Status.RUNNING)
    markers = [marker_key(f"alignment:{s}") for s in ("auto", "auto|nlp")]
    with django_capture_on_commit_callbacks(execute=True):
        assert alignment_after_run(first) == []
    assert not AlignmentSnapshot.objects.filter(status="queued").exists()
    assert all(cache.get(m) for m in markers)

    JudgeRun.objects.filter(id=last.id).update(status=JudgeRun.Status.FAILED)
    with django_capture_on_commit_callbacks(execute=True) as sent:
        alignment_after_run(last)
    queued = AlignmentSnapshot.objects.filter(status="queued")
    assert sorted(queued.values_list("scope", flat=True)) == ["auto", "auto|nlp"]
    assert len(sent) == 2
    assert not any(cache.get(m) for m in markers)


def test_a_long_burst_queues_the_alignment_once_its_wait_has_passed(
    two_reviewers_history, django_capture_on_commit_callbacks, executed_loo, settings
):
    """Mid-burst, a scope is queued once JUDGE_BURST_MAX_WAIT_SECONDS have passed since the
    burst's first finished run, or ten times its last computation where that is longer."""
    from django.core.cache import cache

    from apps.judges.services.alignment import alignment_after_run

    rita, otto, _ = two_reviewers_history
    configs = small_configs()
    first, other = (executed_loo(r, configs, notify=False) for r in (rita, otto))
    JudgeRun.objects.filter(id=other.id).update(status=JudgeRun.Status.QUEUED)
    markers = {s: marker_key(f"alignment:{s}") for s in ("auto", "auto|nlp")}
    with django_capture_on_commit_callbacks(execute=False):
        alignment_after_run(first)  # the burst's first finished run: the clock starts
    assert not AlignmentSnapshot.objects.filter(status="queued").exists()

    # The overall scope took 100 s last time: it waits 1,000 s, the domain's the max wait.
    AlignmentSnapshot.objects.create(scope="auto", status="done", duration_ms=100_000)
    wait = settings.JUDGE_BURST_MAX_WAIT_SECONDS
    for key in markers.values():
        cache.set(key, time.time() - wait - 1, timeout=3600)
    with django_capture_on_commit_callbacks(execute=False):
        alignment_after_run(first)
    queued = AlignmentSnapshot.objects.filter(status="queued")
    assert list(queued.values_list("scope", flat=True)) == ["auto|nlp"]
    assert time.time() - cache.get(markers["auto|nlp"]) < 60  # its clock starts again

    cache.set(markers["auto"], time.time() - 1001, timeout=3600)
    with django_capture_on_commit_callbacks(execute=False):
        alignment_after_run(first)
    assert sorted(queued.values_list("scope", flat=True)) == ["auto", "auto|nlp"]


def _both_evaluated(two_reviewers_history, executed_loo):
    """Rita's and Otto's leave-one-out evaluations, finished (their scopes' snapshots queued)."""
    rita, otto, _ = two_reviewers_history
    configs = small_configs()
    for reviewer in (rita, otto):
        executed_loo(reviewer, configs)
    return rita, otto


def _compute_queued(scope: str) -> AlignmentSnapshot:
    return alignment_snapshot_compute(
        snapshot_id=AlignmentSnapshot.objects.get(scope=scope, status="queued").id
    )


def test_a_reviewer_section_computed_from_the_same_rows_is_taken_from_the_last_snapshot(
    two_reviewers_history, executed_loo
):
    """A recompute reuses a reviewer's section when their rows hash as before, and computes it
    again when they differ (the digest is stored with the section)."""
    from apps.judges.services.alignment import ALIGNMENT

    rita, otto = _both_evaluated(two_reviewers_history, executed_loo)
    first = _compute_queued("auto")
    sections = first.per_reviewer
    assert set(sections) == {f"r{rita.id}", f"r{otto.id}"}
    assert all(len(s["rows_hash"]) == 64 for s in sections.values())
    computed = _reasons_by_reviewer(first.result["verdicts"])
    assert set(computed) == {rita.id, otto.id}
    # Mark both stored sections; make Otto's digest stale.
    for section in sections.values():
        section["coarse"] = [{"marker": "kept"}]
        assert section["verdicts"]
        for v in section["verdicts"]:
            v["reason"] = "kept"
    sections[f"r{otto.id}"]["rows_hash"] = "0" * 64
    AlignmentSnapshot.objects.filter(id=first.id).update(per_reviewer=sections)

    snapshot, _ = ALIGNMENT.queue("auto")
    again = alignment_snapshot_compute(snapshot_id=snapshot.id)
    assert again.per_reviewer[f"r{rita.id}"]["coarse"] == [{"marker": "kept"}]
    assert again.per_reviewer[f"r{otto.id}"]["coarse"] != [{"marker": "kept"}]
    assert again.per_reviewer[f"r{otto.id}"]["rows_hash"] not in ("0" * 64, None)
    # The verdicts go with the section: Rita's kept (in her section and the scope's list),
    # Otto's computed again.
    reasons = _reasons_by_reviewer(again.result["verdicts"])
    assert reasons[rita.id] == {"kept"} and "kept" not in reasons[otto.id]
    assert {v["reason"] for v in again.per_reviewer[f"r{rita.id}"]["verdicts"]} == {"kept"}
    assert all(
        v["reviewer"] == rita.username for v in again.per_reviewer[f"r{rita.id}"]["verdicts"]
    )
    assert reasons[otto.id] == computed[otto.id]


def test_a_domain_scope_reads_only_its_reviewers_sections_of_the_overall_one(
    two_reviewers_history, executed_loo
):
    from apps.judges import selectors

    rita, otto = _both_evaluated(two_reviewers_history, executed_loo)
    overall = _compute_queued("auto")
    sections = overall.per_reviewer
    for section in sections.values():
        section["coarse"] = [{"marker": "from the overall scope"}]
    AlignmentSnapshot.objects.filter(id=overall.id).update(per_reviewer=sections)
    # The database picks out the sections asked for; a reviewer without one is left out.
    picked = selectors.alignment_sections(snapshot_id=overall.id, keys=[f"r{rita.id}", "r0"])
    assert picked == {f"r{rita.id}": sections[f"r{rita.id}"]}
    (scope,) = AlignmentSnapshot.objects.filter(
        status="queued", scope__startswith="auto|"
    ).values_list("scope", flat=True)
    domain = _compute_queued(scope)
    assert set(domain.per_reviewer) == {f"r{rita.id}", f"r{otto.id}"}
    for section in domain.per_reviewer.values():
        assert section["coarse"] == [{"marker": "from the overall scope"}]


def _reasons_by_reviewer(verdicts: list[dict]) -> dict[int, set[str]]:
    reasons: dict[int, set[str]] = {}
    for v in verdicts:
        reasons.setdefault(v["reviewer_id"], set()).add(v["reason"])
    return reasons


PREDICTION_HOOK_CALLS: list[list[int]] = []


def record_predictions_changed(*, reviewer_ids):
    PREDICTION_HOOK_CALLS.append(list(reviewer_ids))


def test_the_decision_board_hears_of_a_prediction_burst_from_its_last_run(
    domain, two_reviewers_history, settings, django_capture_on_commit_callbacks
):
    from django.core.cache import cache

    from apps.judges.services.execution import _predictions_changed

    settings.PREDICTIONS_CHANGED_HOOKS = [
        "tests.judges.test_alignment_snapshots.record_predictions_changed"
    ]
    rita, otto, _ = two_reviewers_history
    first, last = (
        JudgeRun.objects.create(
            purpose="prediction",
            domain=domain,
            reviewer=r,
            dimensions=["innovativeness"],
            shots=[],
            scope_key=f"test-{r.id}",
            status=status,
        )
        for r, status in ((rita, "done"), (otto, "running"))
    )
    cache.set(marker_key("predictions-changed"), time.time(), timeout=60)  # the clock runs
    PREDICTION_HOOK_CALLS.clear()
    with django_capture_on_commit_callbacks(execute=True):
        _predictions_changed(first)
    assert PREDICTION_HOOK_CALLS == []  # Otto's run is still going
    JudgeRun.objects.filter(id=last.id).update(status="failed")
    with django_capture_on_commit_callbacks(execute=True):
        _predictions_changed(last)
    assert PREDICTION_HOOK_CALLS == [[otto.id]]


def test_the_overall_scope_reuses_the_sections_its_domain_scope_just_computed(
    two_reviewers_history, executed_loo
):
    from apps.judges.services.alignment import ALIGNMENT

    _both_evaluated(two_reviewers_history, executed_loo)
    domain_scope = _compute_queued("auto|nlp")
    sections = domain_scope.per_reviewer
    for section in sections.values():
        section["coarse"] = [{"marker": "from the domain's snapshot"}]
    AlignmentSnapshot.objects.filter(id=domain_scope.id).update(per_reviewer=sections)
    snapshot, _ = ALIGNMENT.queue("auto")
    overall = alignment_snapshot_compute(snapshot_id=snapshot.id)
    assert [s["coarse"] for s in overall.per_reviewer.values()] == [
        [{"marker": "from the domain's snapshot"}]
    ] * 2


def test_the_overall_scope_takes_the_reasoning_its_domain_scope_stored(
    two_reviewers_history, executed_loo, monkeypatch
):
    """The reasoning structure's part of a domain, kept in the cache by the digest of its rows,
    is what the overall scope shows for that domain (a reviewer of one domain has the same
    pairs, scores and reasons in both scopes); the part as computed equals the whole."""
    from apps.judges.selectors.reports import ReasoningParts
    from apps.judges.services.alignment import ALIGNMENT

    _both_evaluated(two_reviewers_history, executed_loo)
    stored: list[str] = []
    keep = ReasoningParts.set_many
    monkeypatch.setattr(
        ReasoningParts, "set_many", lambda self, parts: (stored.extend(parts), keep(self, parts))
    )
    domain_scope = _compute_queued("auto|nlp")
    assert domain_scope.reasoning_points and all(r["points"] for r in domain_scope.reasoning_points)
    overall = _compute_queued("auto")
    assert overall.reasoning_points == domain_scope.reasoning_points
    # Mark the stored part: the next overall snapshot reads it instead of computing it.
    parts = ReasoningParts()
    (digest,) = set(stored)
    part = parts.get_many([digest])[digest]
    for share in part["kinds"].values():
        for point in share["points"]:
            point["similarity"] = 0.123
    parts.set_many({digest: part})
    snapshot, _ = ALIGNMENT.queue("auto")
    again = alignment_snapshot_compute(snapshot_id=snapshot.id)
    assert {p["similarity"] for r in again.reasoning_points for p in r["points"]} == {0.123}
