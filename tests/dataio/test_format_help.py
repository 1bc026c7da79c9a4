"""The import page links each format's description and offers the example files."""

from __future__ import annotations

from django.urls import reverse

from apps.dataio.format_docs import EXAMPLES_DIR, SECTION_TITLES, example_path
from tests.factories import IdeaFactory


def test_each_import_panel_links_its_format_and_example_files(client, admin):
    client.force_login(admin)
    html = client.get(reverse("catalog:admin_home")).content.decode()
    for kind in SECTION_TITLES:
        assert f'href="{reverse("catalog:format_help", kwargs={"kind": kind})}"' in html
    for name in ("rubric.yaml", "patents.csv", "ideas.jsonl", "reviewers.csv", "ratings.csv"):
        assert f'href="{reverse("catalog:example_file", kwargs={"name": name})}" download' in html


def test_a_format_page_renders_its_section_of_the_formats_doc(client, reviewer):
    client.force_login(reviewer)
    html = client.get(reverse("catalog:format_help", kwargs={"kind": "ratings"})).content.decode()
    assert "<h1>Ratings: import format</h1>" in html
    assert "<table>" in html and "<code>reviewer</code>" in html  # the columns table
    assert "Rules common to every kind" in html
    assert "## " not in html  # Markdown is rendered, not shown raw
    assert "Download ratings.csv" in html


def test_an_unknown_kind_is_a_404(client, admin):
    client.force_login(admin)
    assert client.get(reverse("catalog:format_help", kwargs={"kind": "nope"})).status_code == 404


def test_an_example_file_downloads_byte_for_byte(client, admin):
    client.force_login(admin)
    response = client.get(reverse("catalog:example_file", kwargs={"name": "ideas.csv"}))
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="ideas.csv"'
    assert response["Content-Type"] == "text/csv"
    assert b"".join(response.streaming_content) == (EXAMPLES_DIR / "ideas.csv").read_bytes()


def test_only_the_listed_example_files_are_served(client, admin):
    client.force_login(admin)
    for name in ("formats.md", "..%2Fformats.md", "README.md", "rubric.yml"):
        url = reverse("catalog:example_file", kwargs={"name": "x"}).replace("/x", "/" + name)
        assert client.get(url).status_code == 404
    assert example_path("../formats.md") is None


def test_the_hand_assignment_hint_shows_real_ids_and_names_a_case_slip(client, admin, reviewer):
    idea = IdeaFactory(
        external_id="IDEA-CS-0168", patent__domain=reviewer.reviewer_profile.domains.first()
    )
    client.force_login(admin)
    html = client.get(reverse("assignments:index")).content.decode()
    assert "idea-0001" not in html
    assert 'placeholder="' in html and "IDEA-CS-0168" in html
    assert "IDs are case-sensitive" in html
    bad = client.post(
        reverse("assignments:assign"), {"reviewer": reviewer.pk, "ideas": "idea-cs-0168"}
    )
    assert "did you mean idea-cs-0168 → IDEA-CS-0168?" in bad.content.decode()
    assert idea.assignments.count() == 0
