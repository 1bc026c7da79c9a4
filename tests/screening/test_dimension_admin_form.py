"""The Django admin's dimension form checks what a rubric file would: the JSON fields' shapes
and that `requires` names other dimensions of the rubric (issue 29: the shapes that were 500s
in a rubric file must not get in by hand either)."""

from __future__ import annotations

import json

import pytest
from django.forms.models import model_to_dict

from apps.screening.admin import DimensionAdminForm
from apps.screening.models import Dimension, Rubric
from apps.screening.rubric_files import DIMENSION_FIELDS

pytestmark = pytest.mark.django_db


def _form(dimension: Dimension, **changes) -> DimensionAdminForm:
    data = model_to_dict(dimension, fields=["key", *DIMENSION_FIELDS])
    for name in ("levels", "requires", "categories", "questions", "question_scores"):
        data[name] = changes.pop(name, None) or json.dumps(data[name])
    data.update(changes)
    if not data.get("optional"):
        data.pop("optional", None)
    if data.get("pass_above") is None:
        data["pass_above"] = ""
    return DimensionAdminForm(data=data, instance=dimension)


@pytest.fixture
def innovativeness() -> Dimension:
    return Dimension.objects.get(rubric=Rubric.objects.get(is_default=True), key="innovativeness")


def test_the_stored_dimension_is_valid_as_it_is(innovativeness):
    form = _form(innovativeness)
    assert form.is_valid(), form.errors


@pytest.mark.parametrize(
    "field,value",
    [
        ("requires", '[["specificity"]]'),
        ("requires", '["nowhere"]'),
        ("question_scores", "[1, 2]"),
        ("levels", '{"²": "x"}'),
        ("categories", '["9' + "9" * 40 + '"]'),
    ],
)
def test_a_shape_a_rubric_file_may_not_hold_is_refused_on_its_field(innovativeness, field, value):
    form = _form(innovativeness, **{field: value})
    assert not form.is_valid()
    assert field in form.errors, form.errors
