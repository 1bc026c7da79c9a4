"""Panel evidence in the prompt, judged by the real local model: the three configurations each
with and without the evidence end with a usable reply, and the prompt sent is the one with the
evidence (its fingerprint). What the model makes of it is measured in
bench/bench_llm_panel_evidence.py, not asserted."""

from __future__ import annotations

import pytest

from apps.judges.backends import JudgeRequest, get_backend
from apps.judges.engine.panel import PanelScore
from apps.judges.engine.prompting import build_messages, prompt_fingerprint
from tests.judges.engine.conftest import EXAMPLES, SPECIFICITY
from tests.judges.llm.test_local_llm import OTHER_EXAMPLES, TARGET

pytestmark = pytest.mark.llm

PANEL = (PanelScore(11, 4, 2.5, 1.0), PanelScore(12, 3, 2.0, 0.8))


@pytest.mark.parametrize("examples", [(), OTHER_EXAMPLES, EXAMPLES])
def test_every_configuration_judges_with_panel_evidence_on_the_real_model(llm_server, examples):
    backend = get_backend(
        "openai", base_url=llm_server.base_url, model=llm_server.model, timeout=120
    )
    with_panel = JudgeRequest(dimension=SPECIFICITY, examples=examples, panel=PANEL, **TARGET)
    plain = JudgeRequest(dimension=SPECIFICITY, examples=examples, **TARGET)
    for request in (with_panel, plain):
        reply = backend.judge(request)
        assert reply.error == "", reply.raw
        assert SPECIFICITY.scale_min <= reply.score <= SPECIFICITY.scale_max
        assert reply.prompt_fingerprint == prompt_fingerprint(build_messages(request))
    assert "What other reviewers gave" in build_messages(with_panel)[1]["content"]
    assert "What other reviewers gave" not in build_messages(plain)[1]["content"]
