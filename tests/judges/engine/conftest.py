"""Builders shared by the judges-core tests (plain Python: no database needed)."""

from __future__ import annotations

import pytest

from apps.judges.backends import Example, JudgeRequest, RubricDimension, get_backend

SPECIFICITY = RubricDimension(
    key="specificity",
    name="Specificity",
    description="Is the proposed product concrete and clearly described?",
    scale_min=1,
    scale_max=4,
    levels={
        1: "Cannot be followed.",
        2: "Reads, but vague.",
        3: "Concrete products.",
        4: "One clear product.",
    },
)
NEED = RubricDimension(
    key="need_validity",
    name="Need validity",
    description="Does it answer a real business need?",
    scale_min=0,
    scale_max=3,
    levels={
        0: "Not a B2B product.",
        1: "Low returns.",
        2: "One kind of return is large.",
        3: "Both returns are large.",
    },
    categories=(0,),
)

EXAMPLES = (
    Example(
        item_id=11,
        patent_text="Title: Noise filter\nAbstract: Removes hum.",
        idea_text="Title: Factory headset\nDescription: Clean audio on the floor.",
        score=3,
    ),
    Example(
        item_id=12,
        patent_text="Title: Battery model\nAbstract: Predicts wear.",
        idea_text="Title: Fleet dashboard\nDescription: Flags failing vans.",
        score=2,
    ),
)


def make_request(**overrides) -> JudgeRequest:
    values = dict(
        dimension=SPECIFICITY,
        examples=EXAMPLES,
        patent_text="Title: Contract parser\nAbstract: Finds obligations in text.",
        idea_text="Title: Supplier watch\nDescription: Alerts buyers before deadlines.",
        seed=0,
        model="fake-model",
        temperature=0.0,
    )
    values.update(overrides)
    return JudgeRequest(**values)


@pytest.fixture(autouse=True)
def _forget_response_formats():
    """Each test's fake server starts unknown (ports are reused across tests)."""
    from apps.judges.backends.openai import forget_endpoints

    forget_endpoints()
    yield
    forget_endpoints()


@pytest.fixture
def llm_backend(fake_llm):
    """The openai backend pointed at the fake server."""

    def build(**options):
        defaults = dict(
            base_url=fake_llm.base_url,
            api_key="test-key",
            model="fake-model",
            timeout=2.0,
            max_retries=3,
        )
        defaults.update(options)
        return get_backend("openai", **defaults)

    return build


@pytest.fixture
def local_backend():
    """`local_backend(**options)`: the offline judge (backends/local.py), e.g. with
    `vectors=...`, built the way the run engine builds it."""

    def build(**options):
        return get_backend("local", **options)

    return build
