"""The admin assignments page: forms, messages, load table, htmx fragments, permissions."""

import pytest

from apps.screening.models import Assignment
from tests.factories import IdeaFactory, PatentFactory, ReviewerFactory

URL = "/screening/assignments/"


@pytest.fixture
def ten_ideas(domain):
    patent = PatentFactory(domain=domain)
    return [IdeaFactory(patent=patent, external_id=f"nlp-{i:03d}") for i in range(10)]


def test_the_page_shows_each_reviewers_load_per_domain(
    client, admin, reviewer, other_reviewer, outsider
):
    Assignment.objects.filter(reviewer=other_reviewer).update(status=Assignment.Status.COMPLETED)
    client.force_login(admin)
    response = client.get(URL)
    assert response.status_code == 200
    html = response.content.decode()
    assert "<title>Assignments · Pluralist</title>" in html
    assert "Reviewer load by domain" in html
    assert "Materials Chemistry" in html and "nothing assigned" in html  # oscar has no work yet
    assert "1 of 2 assignments done" in html
    assert 'hx-post="/screening/assignments/bulk/"' in html


def test_the_page_has_finished_empty_states(client, admin):
    client.force_login(admin)
    html = client.get(URL).content.decode()
    assert "No domains yet." in html
    assert "No assignments yet." in html


def test_the_page_stays_within_a_query_budget(
    client, admin, domain, ten_ideas, django_assert_max_num_queries
):
    for i in range(8):
        ReviewerFactory(username=f"load{i}", profile=[domain])
    client.force_login(admin)
    client.post(URL + "bulk/", {"domain": domain.pk, "per_idea": 3})
    with django_assert_max_num_queries(14):
        assert client.get(URL).status_code == 200


def test_bulk_form_assigns_balanced_and_redirects_with_a_message(client, admin, domain, ten_ideas):
    for i in range(5):
        ReviewerFactory(username=f"panel{i}", profile=[domain])
    client.force_login(admin)
    response = client.post(URL + "bulk/", {"domain": domain.pk, "per_idea": 3}, follow=True)
    assert response.redirect_chain == [(URL, 302)]
    assert "Created 30 assignments in NLP" in response.content.decode()
    again = client.post(URL + "bulk/", {"domain": domain.pk, "per_idea": 3}, follow=True)
    assert "Nothing to do: every idea of NLP already has 3 reviewers." in again.content.decode()


def test_bulk_form_explains_a_count_larger_than_the_panel(
    client, admin, domain, ten_ideas, reviewer
):
    client.force_login(admin)
    response = client.post(URL + "bulk/", {"domain": domain.pk, "per_idea": 4})
    assert response.status_code == 400
    assert "NLP has only 1 reviewer(s) to choose from" in response.content.decode()
    assert not Assignment.objects.exclude(reviewer=reviewer).exists()


def test_htmx_posts_get_the_panel_fragment_only(client, admin, domain, ten_ideas, reviewer):
    client.force_login(admin)
    response = client.post(
        URL + "bulk/", {"domain": domain.pk, "per_idea": 1}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="assignments-main">')
    assert "<html" not in html
    assert "Created 10 assignments in NLP" in html


def test_hand_form_assigns_several_ideas_and_names_unknown_ones(client, admin, reviewer, ten_ideas):
    client.force_login(admin)
    bad = client.post(URL + "assign/", {"reviewer": reviewer.pk, "ideas": "nlp-001, nope-1"})
    assert bad.status_code == 400
    assert "No idea with the ID nope-1." in bad.content.decode()
    ok = client.post(
        URL + "assign/", {"reviewer": reviewer.pk, "ideas": "nlp-001\nnlp-002 nlp-003"}, follow=True
    )
    assert "Assigned 3 ideas to Rita." in ok.content.decode()
    assert Assignment.objects.filter(reviewer=reviewer).count() == 4


def test_hand_form_refuses_an_idea_outside_the_reviewers_domains(
    client, admin, outsider, ten_ideas
):
    client.force_login(admin)
    response = client.post(URL + "assign/", {"reviewer": outsider.pk, "ideas": "nlp-001"})
    assert response.status_code == 400
    assert "nlp-001: Oscar is not qualified for NLP" in response.content.decode()
    assert not Assignment.objects.filter(reviewer=outsider).exists()


def test_a_pending_assignment_can_be_removed_but_not_a_rated_one(client, admin, reviewer, idea):
    from apps.screening.services.ratings import rating_submit

    client.force_login(admin)
    assignment = Assignment.objects.get(reviewer=reviewer, idea=idea)
    rating_submit(reviewer=reviewer, idea=idea, scores={"specificity": 1})
    refused = client.post(f"{URL}{assignment.pk}/delete/", follow=True)
    assert "Only assignments still to rate can be removed" in refused.content.decode()
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.PENDING)
    removed = client.post(f"{URL}{assignment.pk}/delete/", follow=True)
    assert "Removed" in removed.content.decode()
    assert not Assignment.objects.filter(pk=assignment.pk).exists()


@pytest.mark.parametrize("persona", ["reviewer", "manager"])
def test_only_admins_reach_the_page(client, request, persona, domain):
    client.force_login(request.getfixturevalue(persona))
    assert client.get(URL).status_code == 403
    assert client.post(URL + "bulk/", {"domain": domain.pk, "per_idea": 1}).status_code == 403
    assert not Assignment.objects.exclude(reviewer__username="rita").exists()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True, serialized_rollback=True)  # keep the migration's rubric
def test_an_admin_assigns_a_domain_in_the_browser(
    page, login, admin, domain, other_domain, ten_ideas
):
    for i, name in enumerate(["Ana", "Ben", "Chloé", "Dev", "Eun"]):
        ReviewerFactory(username=f"panel{i}", first_name=name, profile=[domain])
    ReviewerFactory(username="mia", first_name="Mia", profile=[other_domain])
    IdeaFactory(patent__domain=other_domain, external_id="mat-001")
    login(admin)
    page.goto(URL)
    page.screenshot(path="/tmp/h3-assignments-empty.png", full_page=True)
    page.select_option("select[name=domain]", label="NLP")
    page.fill("input[name=per_idea]", "3")
    page.click("text=Assign balanced")
    page.wait_for_selector("text=Created 30 assignments in NLP")
    assert page.url.endswith(URL)  # htmx swapped the panel; no full navigation
    assert Assignment.objects.filter(idea__patent__domain=domain).count() == 30
    page.select_option("select[name=reviewer]", label="Ana (panel0) · NLP")
    page.fill("textarea[name=ideas]", "mat-001")
    page.click("button:text-is('Assign')")
    page.wait_for_selector("text=is not qualified for Materials Chemistry")
    page.screenshot(path="/tmp/h3-assignments.png", full_page=True)
