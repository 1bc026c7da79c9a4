"""Rating data for the disagreement tests, written in bulk (the services are tested elsewhere)."""

from __future__ import annotations

import numpy as np
import pytest

from apps.accounts.models import ReviewerProfile, User
from apps.catalog.models import Domain, Idea, Patent
from apps.screening.models import Dimension, Rating
from apps.screening.selectors import rubric_default
from tests.factories import PASSWORD


def plant_ratings(
    *,
    domains: list[Domain],
    n_ideas: int = 24,
    n_reviewers: int = 6,
    seed: int = 0,
    rationale: bool = True,
) -> list[Rating]:
    """Reviewers with different strictness and scale use but a shared sense of which ideas are good.

    Half the reviewers are technical, half business. Per idea, specificity sometimes fails its gate
    (then the downstream dimensions are stored as gated), as the staged form would do.
    """
    rng = np.random.default_rng(seed)
    dims = list(rubric_default().dimensions.order_by("position"))
    reviewers = []
    for d_i, domain in enumerate(domains):
        for r in range(n_reviewers):
            user = User.objects.create_user(
                username=f"{domain.key}-rev{r}",
                password=PASSWORD,
                role=User.Role.REVIEWER,
                first_name=f"Reviewer {r}",
                last_name=domain.name,
            )
            profile = ReviewerProfile.objects.create(
                user=user, background="technical" if r % 2 == 0 else "business"
            )
            profile.domains.add(domain)
            reviewers.append((d_i, user))
    ratings: list[Rating] = []
    for d_i, domain in enumerate(domains):
        # In bulk: one INSERT per table rather than one per row (this runs for ~140 tests).
        patents = Patent.objects.bulk_create(
            Patent(external_id=f"{domain.key}-P{p}", domain=domain, title=f"Patent {p}")
            for p in range(max(2, n_ideas // 3))
        )
        ideas = Idea.objects.bulk_create(
            Idea(
                external_id=f"{domain.key}-I{i:03d}",
                patent=patents[i % len(patents)],
                title=f"Idea {i} for {domain.name}",
            )
            for i in range(n_ideas)
        )
        quality = rng.normal(size=(n_ideas, len(dims)))
        panel = [u for k, u in reviewers if k == d_i]
        offset = rng.normal(scale=0.9, size=(len(panel), len(dims)))
        for idea_i, idea in enumerate(ideas):
            for r_i, user in enumerate(panel):
                scored: dict[str, int] = {}
                for j, dim in enumerate(dims):
                    lo, hi = dim.scale_min, dim.scale_max
                    mid = (lo + hi) / 2
                    raw = (
                        mid
                        + quality[idea_i, j] * (hi - lo) / 3
                        + offset[r_i, j]
                        + rng.normal(scale=0.3)
                    )
                    scored[dim.key] = int(np.clip(round(raw), lo, hi))
                # Four ideas in five pass the specificity gate; the fifth may fail it.
                spec_ok = scored["specificity"] > 2 or idea_i % 5 != 0
                if spec_ok:
                    scored["specificity"] = max(3, scored["specificity"])
                for dim in dims:
                    gated = dim.key != "specificity" and not spec_ok
                    ratings.append(
                        Rating(
                            reviewer=user,
                            idea=idea,
                            dimension=dim,
                            status=Rating.Status.NOT_RATED_BY_DESIGN
                            if gated
                            else Rating.Status.SCORED,
                            score=None if gated else scored[dim.key],
                            rationale=(
                                f"{user.username} on {dim.name}: looks "
                                f"{'strong' if scored[dim.key] > mid else 'weak'}"
                                if rationale and not gated
                                else ""
                            ),
                            source=Rating.Source.IMPORT,
                        )
                    )
    return Rating.objects.bulk_create(ratings, batch_size=2000)


@pytest.fixture(autouse=True)
def _default_rubric(request):
    """Transactional tests flush the database, and with it the PBIG rubric its migration loaded:
    put it back for every test that runs outside a rolled-back transaction."""
    marker = request.node.get_closest_marker("django_db")
    transactional = (marker is not None and marker.kwargs.get("transaction")) or any(
        f in request.fixturenames for f in ("transactional_db", "live_server")
    )
    if not transactional:
        return
    request.getfixturevalue("transactional_db")
    from pathlib import Path

    from apps.screening import rubric_files
    from apps.screening.models import Dimension as DimensionModel
    from apps.screening.models import Rubric

    if not Rubric.objects.filter(is_default=True).exists():
        path = Path(rubric_files.__file__).parent / "rubrics" / "pbig.yaml"
        spec = rubric_files.parse_rubric(
            rubric_files.load_rubric_text(path.read_text(encoding="utf-8"))
        )
        rubric_files.save_rubric(
            spec, rubric_model=Rubric, dimension_model=DimensionModel, make_default=True
        )


@pytest.fixture
def planted(db, domain, other_domain):
    return plant_ratings(domains=[domain, other_domain])


@pytest.fixture
def dims(db) -> dict[str, Dimension]:
    return {d.key: d for d in rubric_default().dimensions.all()}


def compute_snapshot(**kwargs):
    """Compute a snapshot synchronously through the service the worker runs."""
    from apps.disagreement.models import MetricSnapshot, scope_key
    from apps.disagreement.services import metrics_recompute

    level = kwargs.pop("level", "ordinal")
    snapshot = MetricSnapshot.objects.create(
        scope=scope_key(level=level, **kwargs), level=level, **kwargs
    )
    return metrics_recompute(snapshot_id=snapshot.id)


@pytest.fixture
def snapshot(planted):
    return compute_snapshot()
