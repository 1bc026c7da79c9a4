"""Judge pages in a real browser: charts are drawn, roles see what they should.

Set JUDGE_SCREENSHOTS_DIR to keep screenshots of every page (e.g. /tmp).
"""

from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path

import pytest

from apps.accounts.models import User
from apps.catalog.models import Domain
from apps.judges import services
from apps.judges.models import JudgeConfig, JudgeFinal, JudgeRun
from tests.factories import PASSWORD
from tests.judges.helpers import compute_alignment, small_configs

# serialized_rollback keeps the migration's PBIG rubric for the tests after these ones.
pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def _shot(page, name: str) -> None:
    directory = os.environ.get("JUDGE_SCREENSHOTS_DIR")
    if directory:
        page.screenshot(path=str(Path(directory) / f"h8-{name}.png"), full_page=True)


def _charted_personalized(page, prefix: str) -> dict[str, float]:
    """Per dimension, the personalized judge's drawn point at its largest k (chart data)."""
    data = page.evaluate(
        f"""Array.from(document.querySelectorAll('script[id^="jg-data-{prefix}-"]'))"""
        ".map(s => JSON.parse(s.textContent))"
    )
    out = {}
    for chart in data:
        for d in chart["datasets"]:
            if d["kind"] != "personalized" or not d["points"]:
                continue
            # The largest k's point, as the verdicts: where it has no per-reviewer alpha (fewer
            # than 8 kept predictions) nothing is drawn there, and a smaller k's point is not
            # the verdicts' figure.
            last = max(d["points"], key=lambda p: p["x"])
            if last["y"] is not None:
                out[chart["dimension"]] = last["y"]
    return out


def _evaluate(domain, reviewers, configs, dimensions) -> None:
    for reviewer in reviewers:
        for dim in dimensions:
            run, _ = services.judge_run_request(
                purpose="loo_evaluation",
                domain=domain,
                dimensions=[dim],
                configs=configs,
                reviewer=reviewer,
                enqueue=False,
            )
            services.judge_run_execute(run_id=run.id)
    # The pages read stored snapshots; compute them here as the worker would.
    compute_alignment()


def test_a_manager_sees_the_alignment_charts_drawn_and_a_reviewer_only_their_own_judge(
    page, login, manager, domain, two_reviewers_history
):
    rita, otto, _ = two_reviewers_history
    configs = small_configs()
    login(manager)
    page.goto("/judges/")
    assert page.get_by_text("No judge runs yet").is_visible()
    _shot(page, "alignment-empty")

    _evaluate(domain, [rita, otto], configs, ["innovativeness"])
    page.goto("/judges/")
    page.wait_for_selector(".jg-chart[data-ready] canvas")
    drawn = page.evaluate("(window.judgeCharts || []).map(c => c.data.datasets.length)")
    # One line per configuration that kept predictions; the others are named with the reason.
    first = page.locator(".jg-chart").first
    assert drawn and drawn[0] + first.locator(".jg-missing").count() == 3
    assert page.locator("h1").inner_text() == "Judge alignment"
    # the canvas really has pixels painted
    painted = page.evaluate(
        "() => { const c = document.querySelector('.jg-chart canvas');"
        " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }"
    )
    assert painted > 500
    _shot(page, "alignment-small")

    page.context.clear_cookies()
    login(rita)
    page.goto("/judges/me/")
    page.wait_for_selector(".jg-chart[data-ready] canvas")
    assert "My judge" in page.locator("h1").inner_text()
    assert "Otto" not in page.content()
    assert page.get_by_text("You need 10 more ratings in NLP / specificity").is_visible()
    _shot(page, "me-small")
    response = page.goto("/judges/")
    assert response.status == 403
    response = page.goto("/judges/predictions/")
    assert response.status == 403


def test_a_tour_of_the_judge_pages_on_the_demo_data(page, login, settings):
    from apps.demo.services import demo_load

    settings.LLM_BASE_URL = ""
    demo_load(seed=0, scale=0.3)
    domain = Domain.objects.order_by("key").first()
    configs = [
        JudgeConfig.objects.create(
            name="Zero-shot",
            kind="zero_shot",
            backend="local",
            shots=[0],
            seeds=1,
            confidence_threshold=50,
        ),
        JudgeConfig.objects.create(
            name="Aggregate",
            kind="aggregate",
            backend="local",
            shots=[1, 5, 9],
            seeds=1,
            confidence_threshold=50,
        ),
        JudgeConfig.objects.create(
            name="Personalized",
            kind="personalized",
            backend="local",
            shots=[1, 5, 9],
            seeds=1,
            confidence_threshold=50,
        ),
    ]
    reviewers = list(
        User.objects.filter(role="reviewer", reviewer_profile__domains=domain).order_by("username")
    )
    _evaluate(
        domain,
        reviewers,
        configs,
        ["innovativeness", "need_validity", "market_size"],
    )
    for reviewer in reviewers[:3]:
        run, _ = services.judge_run_request(
            purpose="prediction",
            domain=domain,
            dimensions=["innovativeness"],
            configs=[configs[2]],
            reviewer=reviewer,
            enqueue=False,
        )
        services.judge_run_execute(run_id=run.id)
    # one run still in progress, to show the progress bar
    running = JudgeRun.objects.create(
        purpose="study",
        domain=domain,
        dimensions=["market_size"],
        scope_key="tour",
        status="running",
        total=400,
        done=130,
        calls=130,
        tokens_in=91000,
        tokens_out=5200,
    )
    admin = User.objects.get(username="admin")
    manager = User.objects.get(username="manager")
    for user in [admin, manager, reviewers[0]]:  # the `login` fixture types the test password
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])

    login(manager)
    page.goto("/judges/")
    page.wait_for_selector(".jg-chart[data-ready] canvas")
    # Figure 3, one scatter per configuration with kept reasons; any other is named, not drawn.
    scatters = page.locator("canvas[data-type=scatter]").count()
    not_drawn = page.get_by_text(re.compile(r"^Not drawn: .*no kept predictions with reasons"))
    named = (
        not_drawn.inner_text().split(":", 1)[1].split("(")[0].split(",")
        if not_drawn.count()
        else []
    )
    assert scatters >= 2 and scatters + len(named) == 3, (scatters, named)
    # The reasoning axes span their full ranges: a flat cloud must not look like a trend.
    ranges = page.evaluate(
        "(window.judgeCharts || []).filter(c => c.canvas.dataset.type === 'scatter')"
        ".map(c => [c.scales.y.min, c.scales.y.max, c.scales.x.min, c.scales.x.max])"
    )
    assert ranges and all(y0 <= 0 and y1 >= 1 and x0 <= -1 and x1 >= 1 for y0, y1, x0, x1 in ranges)
    # One story: the chart draws the per-reviewer alpha, the verdicts' own figure, and one
    # sentence says how it differs from the pooled alpha.
    assert "per reviewer" in page.locator("#pooled-vs-per-reviewer").inner_text()
    charted = _charted_personalized(page, "all")
    verdicts = list(
        csv.DictReader(io.StringIO(page.request.get("/judges/export/verdicts.csv").text()))
    )
    assert charted and verdicts
    for dimension, y in charted.items():
        alphas = [
            float(v["alpha"])
            for v in verdicts
            if v["dimension"] == dimension and v["alpha"] and int(v["n"]) >= 8
        ]
        assert alphas and abs(sum(alphas) / len(alphas) - y) < 1e-6, (dimension, y, alphas)
    _shot(page, "alignment")
    idea_id = (
        JudgeFinal.objects.filter(run__purpose="loo_evaluation", kind="personalized")
        .first()
        .idea_id
    )
    page.goto(f"/judges/cases/{idea_id}/")
    assert page.locator(".jg-case").count() >= 1
    _shot(page, "case")
    page.goto("/judges/predictions/")
    # Three reviewers' shortlists, each at most JUDGE_SHORTLIST_SIZE ideas per list.
    rows = page.locator("#shortlist-table tbody tr")
    assert 5 < rows.count() <= 3 * 2 * settings.JUDGE_SHORTLIST_SIZE
    _shot(page, "predictions")

    # "My judge": the reviewer's own chart point and verdict are one figure.
    page.context.clear_cookies()
    login(reviewers[0])
    page.goto("/judges/me/")
    page.wait_for_selector(".jg-chart[data-ready] canvas")
    assert "per-reviewer alpha" in page.locator("#pooled-vs-per-reviewer").inner_text()
    mine = _charted_personalized(page, "me")
    shown = page.locator("#my-verdicts .jg-verdict-figures").all_inner_texts()
    assert mine and shown
    compared = 0
    for text in shown:
        figure = re.search(r"per-reviewer alpha (-?[0-9.]+).*n=(\d+)", text)
        assert figure is not None, text
        if int(figure.group(2)) < 8:  # too few to judge by: no verdict figure, no chart point
            continue
        compared += 1
        assert any(abs(float(figure.group(1)) - y) < 0.006 for y in mine.values()), (text, mine)
    assert compared == len(mine)
    _shot(page, "me")

    page.context.clear_cookies()
    login(admin)
    page.goto("/judges/runs/")
    assert page.locator("#start-study").is_visible()
    assert page.locator("#judge-runs[hx-trigger]").count() == 1  # polls while the study runs
    assert (
        page.locator(f"#run-{running.id} .progress > span").get_attribute("style") == "width: 32%"
    )
    _shot(page, "runs")

    page.context.clear_cookies()
    login(reviewers[0])
    page.goto("/judges/me/")
    page.wait_for_selector(".jg-chart[data-ready] canvas")
    _shot(page, "me")
