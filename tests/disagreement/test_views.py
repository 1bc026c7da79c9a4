import pytest
from django.urls import reverse

from apps.disagreement.models import MetricSnapshot
from tests.disagreement.conftest import compute_snapshot

pytestmark = pytest.mark.django_db

PAGES = ["overview", "strictness", "agreement", "panel", "contested", "split"]


def page_urls(snapshot):
    idea_id = snapshot.result["contested"][0]["idea_id"]
    urls = [reverse(f"disagreement:{name}") for name in PAGES]
    urls += [reverse("disagreement:idea", args=[idea_id])]
    urls += [
        reverse("disagreement:export", args=[k])
        for k in ("grid", "strictness", "pairwise", "panel", "contested", "split")
    ]
    urls += [reverse("disagreement:snapshot_progress", args=[snapshot.id])]
    return urls


def test_managers_and_admins_see_every_dashboard_and_export(client, manager, admin, snapshot):
    for user in (manager, admin):
        client.force_login(user)
        for url in page_urls(snapshot):
            response = client.get(url)
            assert response.status_code == 200, url


def test_reviewers_are_refused_every_dashboard_and_export(client, reviewer, snapshot):
    client.force_login(reviewer)
    for url in page_urls(snapshot):
        assert client.get(url).status_code == 403, url
    assert client.post(reverse("disagreement:recompute")).status_code == 403
    assert MetricSnapshot.objects.count() == 1


def test_anonymous_visitors_are_sent_to_the_login_page(client, snapshot):
    for url in page_urls(snapshot):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith(
            "/accounts/login/"
        ), url
    assert client.post(reverse("disagreement:recompute")).status_code == 302


def test_the_overview_shows_the_grid_readings_and_freshness(client, manager, snapshot):
    client.force_login(manager)
    html = client.get(reverse("disagreement:overview")).content.decode()
    assert "Innovativeness" in html and "Market size" in html and "All domains" in html
    cell = next(
        c
        for c in snapshot.result["cells"]
        if c["domain"] == "__all__" and c["background"] == "__all__"
    )
    assert cell["reading"] in html
    assert f"from {snapshot.n_ratings:,} ratings" in html
    assert "up to date" in html
    assert 'id="chart-overview-data"' in html and "Recompute now" in html


def test_the_overview_counts_ratings_changed_since_the_snapshot(client, manager, snapshot):
    from apps.screening.models import Rating

    rating = Rating.objects.filter(status="scored").first()
    rating.rationale = "changed my mind"
    rating.save()
    client.force_login(manager)
    html = client.get(reverse("disagreement:overview")).content.decode()
    assert "1 new rating since" in html


def test_the_overview_has_clear_empty_states(client, manager, db):
    client.force_login(manager)
    html = client.get(reverse("disagreement:overview")).content.decode()
    assert "No ratings yet" in html and "Compute now" in html


def test_the_overview_invites_to_compute_when_ratings_exist_but_no_snapshot(
    client, manager, planted
):
    client.force_login(manager)
    html = client.get(reverse("disagreement:overview")).content.decode()
    assert "No metrics yet — compute now" in html


def test_the_overview_stays_within_its_query_budget(
    client, manager, snapshot, django_assert_max_num_queries
):
    client.force_login(manager)
    client.get(reverse("disagreement:overview"))
    # 11: session, user, labels, domains, background groups, snapshot, in progress, failure,
    # freshness, ratings exist, and one spare.
    with django_assert_max_num_queries(11):
        response = client.get(reverse("disagreement:overview") + "?domain=nlp&background=technical")
    assert response.status_code == 200


def test_filters_narrow_the_grid_to_a_domain_and_dimension(client, manager, snapshot):
    client.force_login(manager)
    html = client.get(
        reverse("disagreement:overview") + "?domain=nlp&dimension=market_size"
    ).content.decode()
    assert "Market size" in html and "Innovativeness</th>" not in html
    assert "Materials Chemistry</th>" not in html


def test_a_date_range_uses_its_own_snapshot(client, manager, snapshot):
    client.force_login(manager)
    url = reverse("disagreement:overview") + "?since=2020-01-01&until=2020-12-31"
    assert "No metrics yet" in client.get(url).content.decode()
    import datetime as dt

    compute_snapshot(since=dt.date(2020, 1, 1), until=dt.date(2020, 12, 31))
    html = client.get(url).content.decode()
    assert "from 0 ratings" in html


def test_the_csv_export_holds_the_numbers_behind_the_chart(client, manager, snapshot):
    client.force_login(manager)
    response = client.get(reverse("disagreement:export", args=["grid"]) + "?domain=nlp")
    assert response["Content-Type"].startswith("text/csv")
    lines = csv_text(response).splitlines()
    assert lines[0].startswith("domain,dimension,background,fine_alpha")
    # The Overview's grid: everyone's cells (the by-background groups are split.csv's).
    assert all(line.startswith("nlp,") for line in lines[1:]) and len(lines) == 1 + 6
    assert all(line.split(",")[2] == "all" for line in lines[1:])


def csv_text(response) -> str:
    return b"".join(response.streaming_content).decode()


def test_csvs_say_all_instead_of_the_internal_key(client, manager, snapshot):
    client.force_login(manager)
    for kind in ("grid", "strictness", "pairwise", "panel", "contested", "split"):
        text = csv_text(client.get(reverse("disagreement:export", args=[kind])))
        assert "__all__" not in text, kind


def test_split_csv_is_the_by_background_table_not_the_grid(client, manager, snapshot):
    client.force_login(manager)
    grid = csv_text(client.get(reverse("disagreement:export", args=["grid"])))
    split = csv_text(client.get(reverse("disagreement:export", args=["split"])))
    assert grid != split
    header, *rows = split.splitlines()
    assert header == "domain,dimension,group,fine_alpha,n_items,coarse_jaccard,n_pairs"
    assert {r.split(",")[2] for r in rows} == {"business", "technical", "all"}
    assert len(rows) == 6 * 3


def test_the_contested_page_names_ideas_by_title_and_states_its_order(client, manager, snapshot):
    client.force_login(manager)
    html = client.get(reverse("disagreement:contested")).content.decode()
    first = snapshot.result["contested"][0]
    assert first["title"].startswith("Idea ") and first["title"] in html
    assert "Ordered by <strong>calibrated spread (z), highest first" in html
    text = csv_text(client.get(reverse("disagreement:export", args=["contested"])))
    header, row1, *_ = text.splitlines()
    assert header.startswith("rank,idea,title,")
    assert row1.startswith(f"1,{first['idea']},{first['title']},")
    assert all(r["raw_spread"] > 0 for r in snapshot.result["contested"])


def test_the_idea_page_names_gated_ratings_and_shows_raw_and_calibrated_scores(
    client, manager, snapshot
):
    from apps.screening.models import Rating

    gated = Rating.objects.filter(status="gated").select_related("idea").first()
    client.force_login(manager)
    html = client.get(reverse("disagreement:idea", args=[gated.idea_id])).content.decode()
    assert "Not rated by design" in html
    assert "Calibrated (z)" in html and "Raw" in html
    assert gated.idea.title in html


def test_the_recompute_button_queues_a_snapshot_and_returns_the_progress_partial(
    client, manager, snapshot
):
    client.force_login(manager)
    response = client.post(
        reverse("disagreement:recompute"), {"level": "ordinal"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    queued = MetricSnapshot.objects.get(status="queued")
    html = response.content.decode()
    assert 'id="metrics-progress"' in html and 'hx-trigger="every 1s"' in html
    assert reverse("disagreement:snapshot_progress", args=[queued.id]) in html
    # Without JavaScript the same form redirects back to the overview.
    response = client.post(reverse("disagreement:recompute"), {"level": "ordinal"})
    assert (
        response.status_code == 302 and MetricSnapshot.objects.filter(status="queued").count() == 1
    )


def test_the_progress_partial_stops_polling_when_done(client, manager, snapshot):
    client.force_login(manager)
    response = client.get(
        reverse("disagreement:snapshot_progress", args=[snapshot.id]), HTTP_HX_REQUEST="true"
    )
    assert "hx-trigger" not in response.content.decode()
    assert response["HX-Refresh"] == "true"


def test_free_background_labels_flow_through_to_the_by_background_page(client, manager, planted):
    from apps.accounts.models import ReviewerProfile

    ReviewerProfile.objects.filter(user__username__endswith="rev0").update(background="legal")
    ReviewerProfile.objects.filter(user__username__endswith="rev2").update(background="legal")
    compute_snapshot()
    client.force_login(manager)
    html = client.get(reverse("disagreement:split")).content.decode()
    assert "By background" in html and "(Business, Legal, Technical)" in html
    assert '<th colspan="2" class="dz-domain">Legal</th>' in html
    overview = client.get(reverse("disagreement:overview")).content.decode()
    assert 'value="legal"' in overview, overview[overview.find("Reviewers <") :][:600]
    text = csv_text(client.get(reverse("disagreement:export", args=["split"])))
    assert ",legal," in text


def test_the_idea_page_names_category_answers(client, manager, snapshot):
    # (It also compared its z-scores with the old decision board's; the board moved to the
    # decisions app's model, which has no per-reviewer z: tests/decisions cover it.)
    from apps.screening.models import Rating

    zero = (
        Rating.objects.filter(dimension__key="need_validity", status="scored", score=0)
        .select_related("idea")
        .first()
    )
    client.force_login(manager)
    html = client.get(reverse("disagreement:idea", args=[zero.idea_id])).content.decode()
    assert ">category</span>" in html
