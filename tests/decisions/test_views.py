"""The Decide page, its CSV and the routing page: thin tests of what each role gets."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from apps.accounts.models import User
from apps.catalog.models import Idea
from apps.decisions.models import RoutingSuggestion
from apps.judges.models import JudgeConfig, JudgeFinal, JudgeRun
from apps.screening.models import Dimension
from tests.decisions.conftest import compute_decisions

pytestmark = pytest.mark.django_db


@pytest.fixture
def predicted(planted, domain):
    """A new NLP idea nobody has read, predicted for nlp-rev0 by a finished prediction run."""
    rev0 = User.objects.get(username="nlp-rev0")
    rated = Idea.objects.filter(patent__domain=domain).order_by("id").first()
    unread = Idea.objects.create(
        external_id="nlp-UNREAD", patent=rated.patent, title="Zebra translation for contracts"
    )
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.PREDICTION,
        domain=domain,
        reviewer=rev0,
        dimensions=["innovativeness"],
        scope_key="prediction|nlp-rev0|nlp|innovativeness",
        status=JudgeRun.Status.DONE,
        finished_at=timezone.now(),
    )
    for idea, score in ((unread, 5), (rated, 1)):
        JudgeFinal.objects.create(
            run=run,
            kind=JudgeConfig.Kind.PERSONALIZED,
            k=9,
            reviewer=rev0,
            idea=idea,
            dimension=Dimension.objects.get(rubric__is_default=True, key="innovativeness"),
            score=score,
            confidence=88,
            kept=3,
        )
    return compute_decisions()


def exported(client, query: str) -> list[dict[str, str]]:
    response = client.get(reverse("decisions:export") + query)
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def test_a_lone_prediction_of_an_unread_idea_is_listed_but_weighs_nothing_until_measured(
    client, manager, predicted
):
    # A judge with no recorded signal read the idea (an LLM not shown the panel): new evidence,
    # but it counts only by its measured accuracy on ideas people also read, and two
    # predictions measure nothing. So the idea sits at the domain's prior, flagged no reader,
    # not "mostly judges", and the prediction is listed with what it is.
    client.force_login(manager)
    rows = {r["idea"]: r for r in exported(client, "?domain=nlp&dimension=innovativeness")}
    unread = rows["nlp-UNREAD"]
    assert unread["n_reviewers"] == "0" and unread["n_predicted"] == "1"
    assert unread["judge_pct"] == "" and unread["people_pct"] == ""
    assert unread["predictions"] == "nlp-rev0=5 @88% (new)"
    assert "no_reader" in unread["flags"] and "mostly_judges" not in unread["flags"]
    # nlp-rev0 read the other idea: its stale prediction is not used.
    rated = next(r for r in rows.values() if r["idea"] != "nlp-UNREAD" and r["n_reviewers"] == "6")
    assert rated["n_predicted"] == "0" or "nlp-rev0" not in rated["predictions"]


def test_evidence_people_gives_the_board_fitted_on_peoples_reads_only(client, manager, predicted):
    client.force_login(manager)
    full = {r["idea"]: r for r in exported(client, "?domain=nlp&dimension=innovativeness")}
    people = {
        r["idea"]: r
        for r in exported(client, "?domain=nlp&dimension=innovativeness&evidence=people")
    }
    assert set(people) == set(full)
    assert people["nlp-UNREAD"]["predictions"] == "" and people["nlp-UNREAD"]["n_predicted"] == "0"
    assert {r["evidence"] for r in people.values()} == {"people"}
    assert {r["evidence"] for r in full.values()} == {"all"}
    html = client.get(reverse("decisions:decide") + "?domain=nlp&evidence=people").content.decode()
    assert '<option value="people" selected>' in html and "People's reads only." in html
    assert "evidence=people" in html  # the CSV link keeps the toggle
    # The domain's ideas in the dark: how many, and what the text model says about them.
    assert 'id="decide-dark"' in html and ("nobody read" in html or "has a reader" in html)
    # On the full board, the text model's check per dimension, each named as the rubric names it.
    html = client.get(reverse("decisions:decide") + "?domain=nlp").content.decode()
    checks = re.findall(r'data-dimension="([a-z_]+)" data-used="(?:yes|no)">([^<]+?) [✓—]<', html)
    names = dict(Dimension.objects.filter(rubric__is_default=True).values_list("key", "name"))
    assert checks and all(name == names[key] for key, name in checks), checks


def test_the_csv_has_the_issues_columns_one_row_per_idea_in_the_pages_order(
    client, manager, predicted
):
    client.force_login(manager)
    rows = exported(client, "?domain=nlp")
    assert list(rows[0])[:5] == ["rank", "idea", "title", "domain", "dimension"]
    for column in ("estimate", "low", "high", "n_reviewers", "n_gated", "n_predicted"):
        assert column in rows[0]
    assert len(rows) == Idea.objects.filter(patent__domain__key="nlp").count()
    assert {r["domain"] for r in rows} == {"nlp"} and {r["dimension"] for r in rows} == {"all"}
    lows = [float(r["low"]) for r in rows]
    assert lows == sorted(lows, reverse=True)
    assert [int(r["rank"]) for r in rows] == list(range(1, len(rows) + 1))
    assert rows[0]["ordered_by"].startswith("lower bound")
    by_p = exported(client, "?domain=nlp&sort=p_top")
    ps = [float(r["p_top_n"]) for r in by_p]
    assert ps == sorted(ps, reverse=True)


def test_the_page_names_the_domain_it_shows_and_its_default_order(client, manager, predicted):
    client.force_login(manager)
    html = client.get(reverse("decisions:decide")).content.decode()
    # No "all domains": the first domain is chosen, and the control shows it.
    assert '<option value="materials" selected>' in html
    assert "Materials Chemistry · all dimensions" in html
    assert "lower bound of the 90 % interval, highest first" in html
    assert "All domains" not in html


def test_managers_search_the_ideas_by_title(client, manager, predicted):
    client.force_login(manager)
    html = client.get(reverse("decisions:decide") + "?domain=nlp&q=zebra").content.decode()
    assert "Zebra translation for contracts" in html
    assert "1 of 25 ideas match" in html and "Idea 3 for NLP" not in html


def test_bad_controls_fall_back_to_the_defaults(client, manager, predicted):
    client.force_login(manager)
    response = client.get(
        reverse("decisions:decide") + "?sort=bogus&page=abc&domain=nope&dimension=zzz"
    )
    assert response.status_code == 200
    assert "lower bound of the 90 % interval" in response.content.decode()


def test_the_old_addresses_redirect_with_their_query(client, manager, predicted):
    client.force_login(manager)
    page = client.get("/disagreement/decide/?domain=nlp&sort=estimate")
    assert page.status_code == 302
    assert page["Location"] == reverse("decisions:decide") + "?domain=nlp&sort=estimate"
    csv_ = client.get("/disagreement/export/decide.csv?domain=nlp")
    assert csv_["Location"] == reverse("decisions:export") + "?domain=nlp"


def test_the_page_before_any_computation_says_so_and_offers_to_compute(client, manager, db):
    client.force_login(manager)
    html = client.get(reverse("decisions:decide")).content.decode()
    assert "No ranking computed yet" in html and "Compute now" in html
    assert client.get(reverse("decisions:export")).status_code == 404


def test_reviewers_get_neither_the_page_nor_the_csv_nor_the_routing(client, reviewer, predicted):
    client.force_login(reviewer)
    for name in ("decisions:decide", "decisions:export", "decisions:routing"):
        assert client.get(reverse(name)).status_code == 403


def test_managers_read_the_routing_but_only_admins_accept(client, manager, admin, planted, domain):
    from apps.accounts.models import ReviewerProfile

    user = User.objects.create_user(username="newcomer", password="x", role=User.Role.REVIEWER)
    ReviewerProfile.objects.create(user=user).domains.add(domain)
    compute_decisions()
    ids = [str(i) for i in RoutingSuggestion.objects.values_list("id", flat=True)]
    client.force_login(manager)
    html = client.get(reverse("decisions:routing")).content.decode()
    assert "newcomer" in html and "Assign the selected reads" not in html
    assert client.post(reverse("decisions:routing_accept"), {"suggestions": ids}).status_code == 403
    client.force_login(admin)
    assert "Assign the selected reads" in client.get(reverse("decisions:routing")).content.decode()
    response = client.post(reverse("decisions:routing_accept"), {"suggestions": ids}, follow=True)
    assert f"{len(ids)} suggestions assigned" in response.content.decode()
    empty = client.post(reverse("decisions:routing_accept"), {}, follow=True).content.decode()
    assert "Choose at least one suggestion" in empty


def test_the_api_serves_the_csvs_rows_and_names_a_bad_filter(client, manager, predicted):
    client.force_login(manager)
    body = client.get("/api/decisions/ranking/?domain=nlp&sort=estimate").json()
    assert body["domain"] == "nlp" and body["dimension"] == "__all__"
    rows = exported(client, "?domain=nlp&sort=estimate")
    assert [r["idea"] for r in body["rows"]] == [r["idea"] for r in rows]
    assert str(body["rows"][0]["estimate"]) == rows[0]["estimate"]
    bad = client.get("/api/decisions/ranking/?domain=nope")
    assert bad.status_code == 400 and "domain" in str(bad.json())
    people = client.get("/api/decisions/ranking/?domain=nlp&evidence=people").json()
    assert people["evidence"] == "people" and {r["evidence"] for r in people["rows"]} == {"people"}
    wrong = client.get("/api/decisions/ranking/?domain=nlp&evidence=judges")
    assert wrong.status_code == 400 and "evidence" in str(wrong.json())


def findings_coverage(settings, coverage: dict[int, float]) -> None:
    """A finished findings snapshot of the NLP domain: each idea's estimated coverage (below
    0.6: "findings open")."""
    from apps.findings.models import FindingSlice, FindingSnapshot, Source
    from apps.findings.models import scope_key as findings_scope

    threshold = settings.FINDINGS_SIMILARITY_THRESHOLD
    snapshot = FindingSnapshot.objects.create(
        scope=findings_scope(threshold=threshold),
        threshold=threshold,
        status=FindingSnapshot.Status.DONE,
        started_at=timezone.now(),
    )
    FindingSlice.objects.create(
        snapshot=snapshot,
        source=Source.REVIEWERS,
        domain="nlp",
        ideas={str(i): {"n_reviewers": 3, "coverage": c} for i, c in coverage.items()},
    )


def test_decide_flags_ideas_with_open_findings_and_shows_a_panels_scores_as_judges(
    client, manager, decided, domain, settings
):
    """Findings far from saturation and a persona panel's scores reach Decide as flags; the
    panel's score stays out of the estimate (the row's figures do not move)."""
    from apps.panels.models import PanelDebate, PanelRun

    client.force_login(manager)
    before = {r["idea"]: r for r in exported(client, "?domain=nlp&dimension=innovativeness")}
    open_idea, panel_idea, quiet_idea = Idea.objects.filter(patent__domain=domain).order_by("id")[
        :3
    ]
    findings_coverage(settings, {open_idea.id: 0.3, quiet_idea.id: 0.9})
    run = PanelRun.objects.create(
        domain=domain,
        persona_source="invented",
        model="tiny-model",
        budget_tokens=1000,
        status=PanelRun.Status.DONE,
    )
    PanelDebate.objects.create(
        run=run,
        idea=panel_idea,
        dimension=Dimension.objects.get(rubric__is_default=True, key="innovativeness"),
        single_score=2,
        before_score=2.5,
        after_score=3.0,
        stop_reason="stable",
    )

    rows = {r["idea"]: r for r in exported(client, "?domain=nlp&dimension=innovativeness")}
    assert "findings_open" in rows[open_idea.external_id]["flags"]
    assert "findings_open" not in rows[quiet_idea.external_id]["flags"]
    assert "llm_panel" in rows[panel_idea.external_id]["flags"]
    for column in ("estimate", "low", "high", "n_predicted"):
        assert rows[panel_idea.external_id][column] == before[panel_idea.external_id][column]
    page = client.get(reverse("decisions:decide") + "?domain=nlp&dimension=innovativeness")
    html = page.content.decode()
    assert 'data-flag="llm_panel"' in html and "Panel of LLM judges (not reviewers)" in html
    assert "Innovativeness 3.0" in html and 'data-flag="findings_open"' in html


def test_each_page_of_decide_flags_its_own_rows(client, manager, decided, monkeypatch, settings):
    """The page asks the other apps for the flags of the rows it shows, page by page (the CSV
    for every row): an idea on the second page is flagged there, and nowhere else."""
    from apps.decisions import presenters

    monkeypatch.setattr(presenters, "PAGE_SIZE", 4)
    client.force_login(manager)
    order = [r["idea"] for r in exported(client, "?domain=nlp")]
    first, later = order[0], order[5]
    ids = Idea.objects.filter(external_id__in=[first, later]).values_list("id", flat=True)
    findings_coverage(settings, dict.fromkeys(ids, 0.2))

    def flagged(page: int) -> list[str]:
        html = client.get(reverse("decisions:decide") + f"?domain=nlp&page={page}").content.decode()
        rows = re.findall(r'<tr[^>]*data-idea="([^"]+)"[^>]*>(.*?)</tr>', html, re.S)
        assert len(rows) == 4
        return [idea for idea, cells in rows if 'data-flag="findings_open"' in cells]

    assert flagged(1) == [first]
    assert flagged(2) == [later]
    assert flagged(3) == []
    csv_rows = {r["idea"]: r["flags"] for r in exported(client, "?domain=nlp")}
    assert [i for i in order if "findings_open" in csv_rows[i]] == [first, later]


def _freshness(client) -> str:
    import re

    html = client.get(reverse("decisions:decide") + "?domain=nlp").content.decode()
    match = re.search(
        r'<span id="decide-freshness">(.*?)</span>\s*<span class="muted small">', html, re.S
    )
    assert match, "the freshness line is on the page"
    return " ".join(match.group(1).split())


def test_decide_says_up_to_date_only_when_no_prediction_run_it_would_use_is_pending(
    client, manager, predicted, domain
):
    client.force_login(manager)
    assert "up to date" in _freshness(client)
    run = JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.PREDICTION,
        domain=domain,
        reviewer=User.objects.get(username="nlp-rev1"),
        dimensions=["innovativeness"],
        scope_key="prediction|nlp-rev1|nlp|innovativeness",
        status=JudgeRun.Status.QUEUED,
    )
    text = _freshness(client)
    assert "up to date" not in text
    assert "judges' predictions pending (1 prediction run queued or running)" in text
    # Done after the ranking read its inputs: still not up to date until recomputed.
    JudgeRun.objects.filter(id=run.id).update(
        status=JudgeRun.Status.DONE, finished_at=timezone.now()
    )
    assert "1 finished since this ranking" in _freshness(client)
    compute_decisions()
    assert "up to date" in _freshness(client)


def test_an_evaluation_run_does_not_keep_decide_from_being_up_to_date(
    client, manager, predicted, domain
):
    client.force_login(manager)
    JudgeRun.objects.create(
        purpose=JudgeRun.Purpose.LOO_EVALUATION,
        domain=domain,
        reviewer=User.objects.get(username="nlp-rev1"),
        dimensions=["innovativeness"],
        scope_key="loo|nlp-rev1|nlp|innovativeness",
        status=JudgeRun.Status.RUNNING,
    )
    assert "up to date" in _freshness(client)


def test_decide_says_what_its_rating_count_is_made_of_and_the_data_page_labels_its_own(
    client, manager, admin, predicted
):
    from apps.screening.models import Rating

    client.force_login(manager)
    html = client.get(reverse("decisions:decide") + "?domain=nlp").content.decode()
    scored = Rating.objects.filter(status=Rating.Status.SCORED).count()
    gated = Rating.objects.filter(status=Rating.Status.NOT_RATED_BY_DESIGN).count()
    assert f"from {Rating.objects.count():,} ratings" in html
    assert f"({scored:,} scored" in html and f"{gated:,} closed by a gate" in html
    client.force_login(admin)
    data = client.get(reverse("catalog:admin_home")).content.decode()
    assert "Scored ratings" in data and "Ratings stored in all" in data
    assert f'<div class="catalog-count-value">{Rating.objects.count():,}</div>' in data


def test_the_idea_page_says_when_the_idea_is_not_ranked_yet_or_nothing_is(
    client, manager, predicted, domain
):
    client.force_login(manager)
    rated = Idea.objects.filter(patent__domain=domain).order_by("id").first()
    late = Idea.objects.create(external_id="nlp-LATE", patent=rated.patent, title="Added late")
    html = client.get(reverse("disagreement:idea", args=[late.id])).content.decode()
    assert "This idea is not on the latest ranking" in html
    html = client.get(reverse("disagreement:idea", args=[rated.id])).content.decode()
    assert 'id="standing-overall"' in html and "P(top 10 %)" in html
    from apps.decisions.models import DecisionSnapshot

    DecisionSnapshot.objects.all().delete()
    html = client.get(reverse("disagreement:idea", args=[rated.id])).content.decode()
    assert "The ranking has not been computed yet." in html


def test_no_link_on_the_pages_a_manager_reaches_from_decide_is_forbidden_to_them(
    client, manager, predicted, domain, newcomer_nlp
):
    """Issue 26: the routing page's "Back to assignments" gave the manager a 403. Every
    same-site link of Decide, the routing page, an idea's page (its standing and case links),
    the Judges' shortlists and alignment pages answers a manager with something else."""
    import re

    compute_decisions()  # with the newcomer, routing has suggestions to show
    client.force_login(manager)
    unread = Idea.objects.get(external_id="nlp-UNREAD")
    pages = [
        reverse("decisions:decide") + "?domain=nlp",
        reverse("decisions:routing"),
        reverse("disagreement:idea", args=[unread.id]) + "?from=decide",
        reverse("judges:predictions"),
        reverse("judges:alignment"),
    ]
    checked = set()
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        for href in re.findall(r'href="(/[^"#]*)', response.content.decode()):
            href = href.replace("&amp;", "&")
            if href in checked or href.startswith(("/static/", "/accounts/logout")):
                continue
            checked.add(href)
            status = client.get(href).status_code
            assert status != 403, f"{href} (linked from {url}) is forbidden to a manager"
    assert reverse("judges:case", args=[unread.id]) in checked
    assert not any(h.startswith(reverse("assignments:index")) for h in checked)


@pytest.fixture
def newcomer_nlp(domain):
    from apps.accounts.models import ReviewerProfile

    user = User.objects.create_user(username="newcomer", password="x", role=User.Role.REVIEWER)
    ReviewerProfile.objects.create(user=user).domains.add(domain)
    return user
