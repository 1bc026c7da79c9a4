import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

pytestmark = pytest.mark.django_db


def test_the_command_prints_the_metrics_json_for_a_domain_and_dimension(planted):
    out = StringIO()
    call_command(
        "metrics",
        "--format",
        "json",
        "--domain",
        "nlp",
        "--dimension",
        "innovativeness",
        "--level",
        "interval",
        "--n-boot",
        "50",
        stdout=out,
    )
    result = json.loads(out.getvalue())
    assert result["level"] == "interval"
    assert {(c["domain"], c["dimension"]) for c in result["cells"]} == {
        ("nlp", "innovativeness"),
        ("__all__", "innovativeness"),
    }


def test_the_command_prints_a_readable_table(planted):
    out = StringIO()
    call_command("metrics", "--format", "table", "--n-boot", "50", stdout=out)
    text = out.getvalue()
    assert "ratings" in text and "Innovativeness" in text and "jaccard" in text


def test_the_command_names_an_unknown_domain(planted):
    with pytest.raises(CommandError, match="atlantis"):
        call_command("metrics", "--domain", "atlantis", stdout=StringIO())
