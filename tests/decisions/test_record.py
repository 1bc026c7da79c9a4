"""The decision record: the cut at N, marks with their history and figures, the API, the CSVs,
the memo and its command. Browser tests are in test_record_browser.py."""

from __future__ import annotations

import csv
import io
import re
from decimal import ROUND_HALF_UP, Decimal

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from apps.catalog.models import Domain, Idea
from apps.core.errors import ApplicationError, PermissionDenied
from apps.decisions.models import DecisionMark, DecisionSnapshot
from apps.decisions.ranking.cut import top_n_probability
from apps.decisions.record import selectors
from apps.decisions.record.services import decision_mark_record, shortlist_size_set
from apps.screening.models import Rating
from tests.decisions.conftest import compute_decisions

pytestmark = pytest.mark.django_db


def two(x: object) -> str:
    return str(Decimal(str(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def exported(client: Client, query: str) -> list[dict[str, str]]:
    response = client.get(reverse("decisions:export") + query)
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def top_ideas(domain: Domain, k: int) -> list[Idea]:
    board = selectors.domain_board(domain=domain.key)
    ids = [r["idea_id"] for r in board.rows[:k]]
    by_id = Idea.objects.in_bulk(ids)
    return [by_id[i] for i in ids]


@pytest.mark.parametrize(
    "query", ["", "&n=10", "&dimension=innovativeness", "&sort=p_top&n=10", "&sort=estimate"]
)
def test_the_cut_at_ten_holds_exactly_ten_ideas_per_domain(client, manager, decided, query):
    client.force_login(manager)
    for key in ("nlp", "materials"):
        rows = exported(client, f"?domain={key}{query}")
        assert len(rows) == 24
        flags = [r["in_shortlist"] for r in rows]
        assert flags == ["true"] * 10 + ["false"] * 14
        assert {r["shortlist_size"] for r in rows} == {"10"}


def test_the_cut_follows_the_n_asked_and_the_domains_saved_n(client, manager, decided, domain):
    client.force_login(manager)
    rows = exported(client, "?domain=nlp&n=3")
    assert [r["in_shortlist"] for r in rows].count("true") == 3
    # Today's address and the old one (redirected with its query) take n alike.
    old = client.get("/disagreement/export/decide.csv?domain=nlp&n=4", follow=True)
    text = b"".join(old.streaming_content).decode()
    assert [r["in_shortlist"] for r in csv.DictReader(io.StringIO(text))].count("true") == 4
    response = client.post(
        reverse("decisions:shortlist_size"), {"domain": "nlp", "n": "7", "next": "/decisions/"}
    )
    assert response.status_code == 302
    assert selectors.shortlist_size(domain="nlp") == 7
    assert selectors.shortlist_size(domain="materials") == 10
    assert [r["in_shortlist"] for r in exported(client, "?domain=nlp")].count("true") == 7
    page = client.get(reverse("decisions:decide") + "?domain=nlp").content.decode()
    assert "Shortlist: the top 7 of 24 ideas" in page and 'id="decide-cut-line"' in page
    assert "P(top 7)" in page


def test_a_bad_n_is_a_400_naming_n_on_the_csv_and_ignored_on_the_page(client, manager, decided):
    client.force_login(manager)
    for bad in ("0", "abc", "10001", "-3"):
        response = client.get(reverse("decisions:export") + f"?domain=nlp&n={bad}")
        assert response.status_code == 400
        assert response.content.decode().startswith("n: ")
        assert client.get(reverse("decisions:decide") + f"?domain=nlp&n={bad}").status_code == 200
    with pytest.raises(ApplicationError) as info:
        shortlist_size_set(actor=manager, domain=Domain.objects.get(key="nlp"), size=0)
    assert info.value.errors[0].field == "n"


def test_p_top_n_is_a_probability_that_sums_to_n_over_the_domain(decided):
    rows = selectors.domain_board(domain="nlp", n=5).rows
    total = sum(r["p_top_n"] for r in rows)
    assert abs(total - 5) < 0.05
    assert all(0 <= r["p_top_n"] <= 1 for r in rows)
    sure = top_n_probability(
        __import__("numpy").array([3.0, 2.0, 1.0, 0.0]), __import__("numpy").full(4, 1e-6), 2
    )
    assert sure.tolist() == [1.0, 1.0, 0.0, 0.0]


def test_a_mark_keeps_the_board_it_was_made_on_and_every_change(decided, manager, admin, domain):
    idea = top_ideas(domain, 1)[0]
    first = decision_mark_record(actor=manager, idea=idea, mark="take_forward", note="strong")
    figures = dict(first.figures)
    assert figures["rank"] == 1 and figures["id"] == decided.id
    assert figures["shortlist_size"] == 10 and figures["in_shortlist"] is True
    row = selectors.domain_board(domain=domain.key).row_for(idea.pk)
    assert (figures["estimate"], figures["low"], figures["high"], figures["p_top_n"]) == (
        row["estimate"],
        row["low"],
        row["high"],
        row["p_top_n"],
    )
    # The same mark and note again adds nothing; a change adds a version.
    assert (
        decision_mark_record(actor=manager, idea=idea, mark="take_forward", note="strong") == first
    )
    second = decision_mark_record(actor=admin, idea=idea, mark="hold", note="wait for a read")
    assert (second.version, second.decided_by, second.mark) == (2, admin, "hold")
    # A recompute after ratings change leaves the recorded figures as they were.
    Rating.objects.filter(idea=idea, status=Rating.Status.SCORED).update(score=1)
    later = compute_decisions()
    assert later.id != decided.id
    kept = DecisionMark.objects.get(idea=idea, version=1)
    assert kept.figures == figures and kept.figures["id"] == decided.id
    assert [m.version for m in selectors.mark_history(idea=idea)] == [2, 1]
    assert selectors.marks_current_by_idea(domain=domain.key)[idea.pk].mark == "hold"


def test_reviewers_cannot_record_a_decision_and_bad_values_are_named(decided, reviewer, manager):
    idea = Idea.objects.first()
    with pytest.raises(PermissionDenied):
        decision_mark_record(actor=reviewer, idea=idea, mark="reject")
    with pytest.raises(ApplicationError) as info:
        decision_mark_record(actor=manager, idea=idea, mark="maybe", note="x" * 5000)
    assert [e.field for e in info.value.errors] == ["mark", "note"]
    assert not DecisionMark.objects.exists()


def test_no_decision_is_recorded_before_the_ranking_exists(planted, manager):
    with pytest.raises(ApplicationError, match="not been computed"):
        decision_mark_record(actor=manager, idea=Idea.objects.first(), mark="hold")


def test_the_api_records_lists_and_tells_the_history(decided, manager, domain):
    api = APIClient()
    api.force_login(manager)
    idea = top_ideas(domain, 1)[0]
    url = f"/api/decisions/marks/{idea.pk}/"
    response = api.put(url, {"mark": "take_forward", "note": "clear need"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    for field in ("idea", "mark", "note", "decided_by", "decided_at", "snapshot"):
        assert field in body
    assert body["idea"] == idea.pk and body["decided_by"] == manager.username
    assert body["snapshot"]["id"] == decided.id and body["snapshot"]["rank"] == 1
    api.put(url, {"mark": "reject", "note": "patent expires"}, format="json")
    listed = api.get("/api/decisions/marks/?domain=nlp").json()
    assert listed["count"] == 1
    assert {k: listed["results"][0][k] for k in ("idea", "mark", "note")} == {
        "idea": idea.pk,
        "mark": "reject",
        "note": "patent expires",
    }
    assert api.get("/api/decisions/marks/?domain=materials").json()["count"] == 0
    history = api.get(f"{url}history/").json()
    assert [(h["version"], h["mark"]) for h in history] == [(1, "take_forward"), (2, "reject")]


def test_the_api_names_the_bad_field(decided, manager):
    api = APIClient()
    api.force_login(manager)
    idea = Idea.objects.first()
    bad = api.put(f"/api/decisions/marks/{idea.pk}/", {"mark": "perhaps"}, format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "mark"
    assert (
        api.put("/api/decisions/marks/999999/", {"mark": "hold"}, format="json").status_code == 404
    )
    missing = api.get("/api/decisions/marks/")
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "domain"
    assert api.get("/api/decisions/marks/?domain=nope").status_code == 400


def test_the_marks_csv_holds_the_current_marks_or_every_version(client, decided, manager, domain):
    a, b = top_ideas(domain, 2)
    decision_mark_record(actor=manager, idea=a, mark="take_forward", note="=HYPERLINK()")
    decision_mark_record(actor=manager, idea=b, mark="hold")
    decision_mark_record(actor=manager, idea=b, mark="reject", note="weak market")
    client.force_login(manager)
    text = b"".join(
        client.get(reverse("decisions:marks_csv") + "?domain=nlp").streaming_content
    ).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["idea"], r["mark"], r["version"]) for r in rows] == [
        (a.external_id, "take_forward", "1"),
        (b.external_id, "reject", "2"),
    ]
    assert rows[0]["note"] == "'=HYPERLINK()" and rows[0]["rank"] == "1"
    text = b"".join(
        client.get(reverse("decisions:marks_csv") + "?domain=nlp&history=1").streaming_content
    ).decode()
    assert len(list(csv.DictReader(io.StringIO(text)))) == 3


def test_the_page_records_a_mark_without_javascript_and_shows_it(client, decided, manager, domain):
    idea = top_ideas(domain, 1)[0]
    client.force_login(manager)
    response = client.post(
        reverse("decisions:mark_set", kwargs={"idea_id": idea.pk}),
        {"mark": "take_forward", "note": "go"},
    )
    assert response.status_code == 302 and f"#mark-{idea.pk}" in response["Location"]
    page = client.get(reverse("decisions:marks") + "?domain=nlp").content.decode()
    assert 'data-mark="take_forward"' in page and "1 decided" in page
    fragment = client.post(
        reverse("decisions:mark_set", kwargs={"idea_id": idea.pk}),
        {"mark": "bogus"},
        headers={"HX-Request": "true"},
    )
    assert fragment.status_code == 200 and b"<html" not in fragment.content
    assert b'role="alert"' in fragment.content and b"mark:" in fragment.content
    assert DecisionMark.objects.filter(idea=idea).count() == 1
    history = client.get(
        reverse("decisions:mark_history", kwargs={"idea_id": idea.pk}),
        headers={"HX-Request": "true"},
    ).content.decode()
    assert 'data-version="1"' in history and "<html" not in history


def _memo_body(text: str) -> str:
    return re.sub(r"Memo written [0-9: -]+ UTC", "", text)


def test_the_memo_holds_the_chosen_ideas_figures_and_the_reasons_not_taken(
    client, decided, manager, domain, tmp_path
):
    chosen = top_ideas(domain, 3)
    for idea in chosen:
        decision_mark_record(actor=manager, idea=idea, mark="take_forward", note="fits")
    dropped = top_ideas(domain, 5)[4]
    decision_mark_record(actor=manager, idea=dropped, mark="reject", note="needs a partner")
    client.force_login(manager)
    board = {r["idea"]: r for r in exported(client, "?domain=nlp")}
    for fmt in ("html", "md"):
        out = tmp_path / f"memo.{fmt}"
        call_command("decision_memo", domain="nlp", format=fmt, output=str(out))
        text = out.read_text()
        page = client.get(reverse("decisions:memo") + f"?domain=nlp&format={fmt}")
        assert page.status_code == 200 and "attachment" in page["Content-Disposition"]
        assert _memo_body(page.content.decode()) == _memo_body(text)
        for idea in chosen:
            row = board[idea.external_id]
            assert f"{two(row['low'])} – {two(row['high'])}" in text
            assert two(row["estimate"]) in text and two(row["p_top_n"]) in text
            assert idea.display_title in text
        assert "needs a partner" in text and dropped.external_id in text
        assert "Technical validity" in text
    html = (tmp_path / "memo.html").read_text()
    assert "@media print" in html and "<link" not in html and "<script" not in html
    assert html.count('class="idea"') == 3


def test_the_markdown_memo_reads_as_a_document(decided, manager, domain, tmp_path, capsys):
    idea = top_ideas(domain, 1)[0]
    decision_mark_record(actor=manager, idea=idea, mark="take_forward", note="clear buyer")
    call_command("decision_memo", domain="nlp", format="md", output="-")
    text = capsys.readouterr().out
    assert text.startswith("# Decision memo: NLP") and "## Taken forward (1)" in text
    assert "\n\n\n\n" not in text and "{%" not in text and "&amp;" not in text


def test_the_memo_command_names_an_unknown_domain(decided, tmp_path):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--domain"):
        call_command("decision_memo", domain="nope", format="md", output=str(tmp_path / "m"))


def test_reviewers_reach_none_of_it(client, decided, reviewer):
    client.force_login(reviewer)
    idea = Idea.objects.first()
    for url in (
        reverse("decisions:marks"),
        reverse("decisions:marks_csv"),
        reverse("decisions:memo"),
        reverse("decisions:mark_history", kwargs={"idea_id": idea.pk}),
    ):
        assert client.get(url).status_code == 403
    assert (
        client.post(reverse("decisions:mark_set", kwargs={"idea_id": idea.pk}), {"mark": "hold"})
    ).status_code == 403
    assert (
        client.post(reverse("decisions:shortlist_size"), {"domain": "nlp", "n": 3})
    ).status_code == 403
    api = APIClient()
    api.force_login(reviewer)
    assert (
        api.put(f"/api/decisions/marks/{idea.pk}/", {"mark": "hold"}, format="json").status_code
        == 403
    )
    assert api.get("/api/decisions/marks/?domain=nlp").status_code == 403
    assert api.get(f"/api/decisions/marks/{idea.pk}/history/").status_code == 403
    assert not DecisionMark.objects.exists()
    assert DecisionSnapshot.objects.count() == 1
