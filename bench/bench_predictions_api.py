"""Benchmark: GET /api/judges/predictions/ on a few thousand stored predictions, paginated
against the unpaginated reference measured in the same run.

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/pluralist_bench \
        .venv/bin/python bench/bench_predictions_api.py [--ideas 500] [--repeat 5]

Stores (once per run, then removes) a finished prediction run of one reviewer with
ideas x dimensions x 2 k finals (tests/judges/helpers.stored_predictions), then times, each
`--repeat` times, the median of:
- `reference`: what the endpoint did before issue 29, in-process: every row loaded, labelled
  and shaped, then cut to 5,000 (`presenters.prediction_rows` + `prediction_api_rows`);
- `page 100`, `page 1000`: one request through Django's test client (routing, permission,
  filters, count, slice, JSON rendering), limit 100 (the default) and 1000 (the maximum);
- `all pages`: walking every page of 1000, which reads everything the reference read.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _median_seconds(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ideas", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from bench_import import DEFAULT_URL, setup_django

    setup_django(os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    from django.conf import settings
    from django.test import Client

    from apps.accounts.models import User
    from apps.catalog.models import Domain, Idea, Patent
    from apps.judges import presenters
    from apps.judges.models import JudgeFinal, JudgeRun
    from apps.screening.models import Rubric
    from tests.judges.helpers import stored_predictions

    settings.ALLOWED_HOSTS = ["*"]
    domain = Domain.objects.create(
        key="bench-predictions", name="Bench", rubric=Rubric.objects.get(is_default=True)
    )
    reviewer = User.objects.create(username="bench-pred-reviewer", role=User.Role.REVIEWER)
    manager = User.objects.create(username="bench-pred-manager", role=User.Role.MANAGER)
    try:
        stored_predictions(domain, reviewer, ideas=args.ideas)
        total = JudgeFinal.objects.filter(reviewer=reviewer).count()
        client = Client()
        client.force_login(manager)

        def reference() -> None:
            rows = presenters.prediction_rows(reviewer=None, domain=None, dimension=None)
            presenters.prediction_api_rows(rows[:5000])

        def page(limit: int) -> None:
            response = client.get("/api/judges/predictions/", {"limit": limit})
            assert response.status_code == 200, response.content[:300]

        def all_pages() -> None:
            offset = 0
            while True:
                body = client.get(
                    "/api/judges/predictions/", {"limit": 1000, "offset": offset}
                ).json()
                if body["next"] is None:
                    break
                offset += 1000

        print(f"{total:,} predictions stored ({args.ideas} ideas), median of {args.repeat}:")
        ref = _median_seconds(reference, args.repeat)
        print(f"  reference (all rows built, cut at 5,000, no HTTP): {ref * 1000:8.0f} ms")
        for label, fn in (
            ("page of 100 (default)", lambda: page(100)),
            ("page of 1000", lambda: page(1000)),
            ("all pages of 1000", all_pages),
        ):
            seconds = _median_seconds(fn, args.repeat)
            print(f"  {label:48s}: {seconds * 1000:8.0f} ms  ({seconds / ref:.2f}x the reference)")
    finally:
        JudgeRun.objects.filter(domain=domain).delete()
        Idea.objects.filter(patent__domain=domain).delete()
        Patent.objects.filter(domain=domain).delete()
        domain.delete()
        User.objects.filter(username__in=[reviewer.username, manager.username]).delete()


if __name__ == "__main__":
    main()
