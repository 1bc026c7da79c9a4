from collections import Counter

import pytest

from apps.core.errors import ApplicationError, PermissionDenied
from apps.screening.models import Assignment
from apps.screening.selectors.assignments import domain_load, reviewer_load
from apps.screening.services.assignments import (
    assignment_bulk_balanced,
    assignment_create,
    assignment_delete,
    assignments_create,
)
from tests.factories import IdeaFactory, PatentFactory, ReviewerFactory


@pytest.fixture
def panel(domain):
    """Five NLP reviewers and ten NLP ideas, nothing assigned yet."""
    reviewers = [ReviewerFactory(username=f"panel{i}", profile=[domain]) for i in range(5)]
    patent = PatentFactory(domain=domain)
    ideas = [IdeaFactory(patent=patent) for _ in range(10)]
    return reviewers, ideas


def test_balanced_assignment_gives_every_idea_n_reviewers_and_each_reviewer_the_same_load(
    domain, admin, panel
):
    reviewers, ideas = panel
    created = assignment_bulk_balanced(domain=domain, per_idea=3, actor=admin)
    assert created == 30
    per_reviewer = Counter(Assignment.objects.values_list("reviewer__username", flat=True))
    assert per_reviewer == {r.username: 6 for r in reviewers}
    per_idea = Counter(Assignment.objects.values_list("idea_id", flat=True))
    assert per_idea == {i.pk: 3 for i in ideas}
    assert Assignment.objects.filter(assigned_by=admin).count() == 30


def test_running_the_balanced_assignment_again_creates_nothing(domain, admin, panel):
    assignment_bulk_balanced(domain=domain, per_idea=3, actor=admin)
    assert assignment_bulk_balanced(domain=domain, per_idea=3, actor=admin) == 0
    assert Assignment.objects.count() == 30


def test_balanced_assignment_is_deterministic(domain, admin, panel):
    assignment_bulk_balanced(domain=domain, per_idea=2, actor=admin)
    first = sorted(Assignment.objects.values_list("idea_id", "reviewer_id"))
    Assignment.objects.all().delete()
    assignment_bulk_balanced(domain=domain, per_idea=2, actor=admin)
    assert sorted(Assignment.objects.values_list("idea_id", "reviewer_id")) == first


def test_balanced_assignment_tops_up_partly_assigned_ideas_and_favours_the_least_loaded(
    domain, admin, panel
):
    reviewers, ideas = panel
    # panel0 already carries four ideas; the others carry none.
    for idea in ideas[:4]:
        assignment_create(reviewer=reviewers[0], idea=idea, actor=admin)
    created = assignment_bulk_balanced(domain=domain, per_idea=2, actor=admin)
    assert created == 20 - 4
    load = Counter(Assignment.objects.values_list("reviewer__username", flat=True))
    assert load == {r.username: 4 for r in reviewers}
    assert all(
        n == 2 for n in Counter(Assignment.objects.values_list("idea_id", flat=True)).values()
    )


def test_a_declined_assignment_is_replaced_but_the_reviewer_never_gets_the_idea_twice(
    domain, admin, panel
):
    reviewers, ideas = panel
    a = assignment_create(reviewer=reviewers[0], idea=ideas[0], actor=admin)
    Assignment.objects.filter(pk=a.pk).update(status=Assignment.Status.DECLINED)
    assignment_bulk_balanced(domain=domain, per_idea=5, actor=admin)
    on_first = Assignment.objects.filter(idea=ideas[0])
    # Four others replace the declined place; the decliner is not assigned a second time.
    assert on_first.count() == 5
    assert on_first.filter(reviewer=reviewers[0]).count() == 1


def test_balanced_assignment_ignores_reviewers_of_other_domains(domain, admin, panel, outsider):
    assignment_bulk_balanced(domain=domain, per_idea=1, actor=admin)
    assert not Assignment.objects.filter(reviewer=outsider).exists()


def test_balanced_assignment_refuses_more_places_than_reviewers(domain, admin, panel):
    with pytest.raises(ApplicationError) as exc:
        assignment_bulk_balanced(domain=domain, per_idea=6, actor=admin)
    assert exc.value.errors[0].field == "per_idea"
    assert "only 5 reviewer" in exc.value.errors[0].message
    assert not Assignment.objects.exists()


def test_balanced_assignment_refuses_a_chosen_reviewer_of_another_domain(
    domain, admin, panel, outsider
):
    reviewers, _ = panel
    with pytest.raises(ApplicationError) as exc:
        assignment_bulk_balanced(
            domain=domain, per_idea=1, actor=admin, reviewers=[reviewers[0], outsider]
        )
    assert exc.value.errors[0].field == "reviewers"
    assert exc.value.errors[0].value == "oscar"


def test_balanced_assignment_can_be_restricted_to_chosen_reviewers(domain, admin, panel):
    reviewers, _ = panel
    created = assignment_bulk_balanced(
        domain=domain, per_idea=2, actor=admin, reviewers=reviewers[:2]
    )
    assert created == 20
    assert set(Assignment.objects.values_list("reviewer__username", flat=True)) == {
        "panel0",
        "panel1",
    }


@pytest.mark.parametrize("bad", [0, -1, "3", True])
def test_balanced_assignment_refuses_a_bad_count(domain, admin, panel, bad):
    with pytest.raises(ApplicationError) as exc:
        assignment_bulk_balanced(domain=domain, per_idea=bad, actor=admin)
    assert exc.value.errors[0].field == "per_idea"


def test_only_admins_assign(domain, manager, panel):
    reviewers, ideas = panel
    with pytest.raises(PermissionDenied):
        assignment_bulk_balanced(domain=domain, per_idea=1, actor=manager)
    with pytest.raises(PermissionDenied):
        assignment_create(reviewer=reviewers[0], idea=ideas[0], actor=reviewers[1])


def test_creating_an_assignment_twice_returns_the_same_row(admin, domain, panel):
    reviewers, ideas = panel
    first = assignment_create(reviewer=reviewers[0], idea=ideas[0], actor=admin)
    second = assignment_create(reviewer=reviewers[0], idea=ideas[0], actor=admin)
    assert first.pk == second.pk
    assert Assignment.objects.count() == 1


def test_it_refuses_to_assign_an_unqualified_reviewer(admin, outsider, idea):
    with pytest.raises(ApplicationError) as exc:
        assignment_create(reviewer=outsider, idea=idea, actor=admin)
    assert exc.value.errors[0].field == "reviewer"
    assert "not qualified" in exc.value.errors[0].message
    assert not Assignment.objects.filter(reviewer=outsider).exists()


def test_it_refuses_to_assign_an_idea_to_a_manager(admin, manager, idea):
    with pytest.raises(ApplicationError) as exc:
        assignment_create(reviewer=manager, idea=idea, actor=admin)
    assert exc.value.errors[0].message == "is not a reviewer"


def test_assigning_several_ideas_is_all_or_nothing(admin, domain, other_domain, panel):
    reviewers, ideas = panel
    foreign = IdeaFactory(patent__domain=other_domain, external_id="mat-1")
    with pytest.raises(ApplicationError) as exc:
        assignments_create(reviewer=reviewers[0], ideas=[ideas[0], foreign, ideas[1]], actor=admin)
    assert [(e.field, e.value) for e in exc.value.errors] == [("ideas", "mat-1")]
    assert not Assignment.objects.exists()
    made = assignments_create(reviewer=reviewers[0], ideas=ideas[:3], actor=admin)
    assert len(made) == 3
    assert len(assignments_create(reviewer=reviewers[0], ideas=ideas[:4], actor=admin)) == 4
    assert Assignment.objects.count() == 4


def test_only_pending_assignments_can_be_deleted(admin, reviewer, idea):
    assignment = Assignment.objects.get(reviewer=reviewer, idea=idea)
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.COMPLETED)
    with pytest.raises(ApplicationError) as exc:
        assignment_delete(assignment=assignment, actor=admin)
    assert exc.value.errors[0].field == "status"
    Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.PENDING)
    assignment_delete(assignment=assignment, actor=admin)
    assert not Assignment.objects.filter(pk=assignment.pk).exists()
    assignment_delete(assignment=assignment, actor=admin)  # twice is harmless


def test_reviewer_load_counts_each_status_per_domain(
    admin, reviewer, other_reviewer, outsider, idea
):
    Assignment.objects.filter(reviewer=other_reviewer).update(status=Assignment.Status.COMPLETED)
    rows = {(r.reviewer.username, r.domain.key): r for r in reviewer_load()}
    assert (rows["rita", "nlp"].assigned, rows["rita", "nlp"].pending) == (1, 1)
    assert (rows["otto", "nlp"].completed, rows["otto", "nlp"].progress_percent) == (1, 100)
    assert rows["oscar", "materials"].assigned == 0
    nlp = next(d for d in domain_load() if d.domain.key == "nlp")
    assert (nlp.ideas, nlp.unassigned_ideas, nlp.assignments, nlp.progress_percent) == (1, 0, 2, 50)


def test_bulk_balanced_creates_thousands_of_assignments_in_a_handful_of_queries(
    domain, admin, panel, django_assert_max_num_queries
):
    patent = PatentFactory(domain=domain)
    from apps.catalog.models import Idea

    Idea.objects.bulk_create(
        [Idea(external_id=f"bulk-{i}", patent=patent, title=f"Bulk idea {i}") for i in range(1000)]
    )
    with django_assert_max_num_queries(12):
        created = assignment_bulk_balanced(domain=domain, per_idea=2, actor=admin)
    assert created == 2 * 1010
