"""A rubric is attached to its domains from its file or from `import_rubric --domain`, and the
ratings import says how to do it when ratings name dimensions of another rubric."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from apps.catalog.models import Domain
from apps.core.errors import ApplicationError
from apps.screening.models import Rubric

pytestmark = pytest.mark.django_db

TINY = "key: tiny\nname: Tiny\ndimensions:\n  - key: overall\n    scale: {min: 1, max: 3}\n"


def test_import_rubric_with_domain_attaches_the_rubric_to_that_domain(catalog, tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    out = StringIO()
    call_command("import_rubric", str(path), "--domain", "nlp", "--domain", "stories", stdout=out)
    tiny = Rubric.objects.get(key="tiny")
    assert Domain.objects.get(key="nlp").rubric == tiny
    assert Domain.objects.get(key="stories").rubric == tiny  # created: rubrics may come first
    assert "rates the domains: nlp, stories" in out.getvalue()


def test_a_rubric_file_lists_its_domains(run_import, catalog):
    run_import("rubric", TINY + "domains: [nlp]\n", "tiny.yaml")
    assert Domain.objects.get(key="nlp").rubric.key == "tiny"


def test_a_bad_domain_key_in_the_file_is_refused_with_its_path(run_import):
    with pytest.raises(ApplicationError) as refused:
        run_import("rubric", TINY + "domains: [nlp, 'not a key']\n", "tiny.yaml")
    assert [(e.field, e.value) for e in refused.value.errors] == [("domains[1]", "not a key")]
    assert not Rubric.objects.filter(key="tiny").exists()


def test_an_unknown_dimension_error_says_how_to_attach_the_right_rubric(run_import, reviewer_alice):
    content = "idea,reviewer,dimension,score\nidea-001,alice,overall,2\n"
    with pytest.raises(ApplicationError) as refused:
        run_import("ratings", content, "ratings.csv")
    message = refused.value.errors[0].message
    assert "is not a dimension of rubric pbig" in message
    assert "import_rubric FILE --domain nlp" in message
    assert "`domains:`" in message
