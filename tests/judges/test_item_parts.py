"""The per-domain item text parts: measured by a command, stored, used by the vectors, shown."""

from __future__ import annotations

import random
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.core.errors import ApplicationError
from apps.judges.engine.item_text import vector_model
from apps.judges.models import ItemTextChoice, ItemVector
from apps.judges.services.item_parts import item_parts_measure
from apps.judges.vectors import domain_parts, item_vectors
from tests.factories import IdeaFactory, PatentFactory, ReviewerFactory
from tests.judges.helpers import rate

pytestmark = pytest.mark.django_db

TOPICS = [
    "ledger invoice reconciliation audit",
    "sensor telemetry vibration turbine",
    "genome sequencing protein assay",
    "satellite orbit antenna uplink",
]
WORDS = [f"w{n}x" for n in range(300)]


def _story_domain(domain, n=32):
    """Ideas whose title names their topic, each on its own patent whose abstract is a long
    story of common words that no other idea shares; reviewers score by topic."""
    rng = random.Random(1)
    ideas = []
    for i in range(n):
        story = " ".join(rng.choice(WORDS) for _ in range(300))
        patent = PatentFactory(domain=domain, title=f"Story {i}", abstract=story)
        topic = TOPICS[i % 4]
        ideas.append(IdeaFactory(patent=patent, title=f"{topic} {topic}", description=topic))
    for r in range(3):
        reviewer = ReviewerFactory(username=f"story{r}", profile=[domain])
        rate(reviewer, ideas, "innovativeness", lambda i, r=r: min(5, 1 + i % 4 + r % 2))
    return ideas


def test_a_domain_of_unshared_stories_reads_the_idea_alone_and_its_vectors_follow(domain):
    ideas = _story_domain(domain)
    item_vectors([ideas[0].id])
    assert set(ItemVector.objects.values_list("model", flat=True)) == {vector_model()}
    assert domain_parts(domain.id) == "idea+source"
    choice = item_parts_measure(domain=domain, k=5, seeds=1)
    assert choice.parts == "idea"
    figures = {f["parts"]: f for f in choice.measurement["figures"]}
    assert figures["idea"]["per_reviewer_alpha"] > figures["idea+source"]["per_reviewer_alpha"]
    # Vectors of the old parts are dropped; the next use refits the domain on the idea text.
    assert not ItemVector.objects.exists()
    assert domain_parts(domain.id) == "idea"
    item_vectors([ideas[0].id])
    assert set(ItemVector.objects.values_list("model", flat=True)) == {vector_model("idea")}
    # Measuring again updates the one row of the domain.
    item_parts_measure(domain=domain, k=5, seeds=1)
    assert ItemTextChoice.objects.filter(domain=domain).count() == 1


def test_bad_arguments_name_the_field(domain):
    with pytest.raises(ApplicationError) as err:
        item_parts_measure(domain=domain, k=0)
    assert err.value.errors[0].field == "k"
    with pytest.raises(CommandError, match="no domain 'nope'"):
        call_command("judge_item_parts", "--domain", "nope")


def test_the_command_prints_the_figures_and_the_page_shows_them_to_managers_only(
    domain, client, manager, reviewer
):
    _story_domain(domain)
    out = StringIO()
    call_command("judge_item_parts", "--domain", domain.key, "--k", "5", "--seeds", "1", stdout=out)
    text = out.getvalue()
    assert f"{domain.key}: idea (" in text and "per-reviewer alpha" in text
    client.force_login(manager)
    page = client.get("/judges/").content.decode()
    assert 'id="item-text-table"' in page
    assert "Idea only (chosen)" in page and "Idea and source document" in page
    client.force_login(reviewer)
    assert client.get("/judges/").status_code == 403


def test_without_a_measurement_the_page_says_every_domain_reads_the_full_text(client, manager):
    client.force_login(manager)
    page = client.get("/judges/").content.decode()
    assert "Not measured yet: every domain reads the full text" in page
