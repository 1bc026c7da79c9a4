"""Which finished runs are current (selectors.current_run_ids): what every read of the judges'
newest predictions and evaluations is built on."""

from __future__ import annotations

from apps.judges.selectors import current_run_ids

LOO, PRED, STUDY = "loo_evaluation", "prediction", "study"


def run(run_id, purpose, dims, *, reviewer=1, domain=1, scope=None):
    key = scope or f"{purpose}:r{reviewer}:d{domain}:{','.join(sorted(dims))}"
    return (run_id, purpose, reviewer, domain, list(dims), key)


def test_a_run_over_every_dimension_supersedes_the_earlier_one_per_dimension_runs():
    earlier = [run(1, PRED, ["a"]), run(2, PRED, ["b"]), run(3, PRED, ["c"])]
    assert current_run_ids([*earlier, run(4, PRED, ["a", "b", "c"])]) == [4]
    # Before it finished, each per-dimension run was current.
    assert current_run_ids(earlier) == [1, 2, 3]


def test_a_run_stays_current_while_a_dimension_of_it_has_no_later_run():
    # Its "b" predictions are the newest there are; "a" comes from run 2 as well.
    assert current_run_ids([run(1, PRED, ["a", "b"]), run(2, PRED, ["a"])]) == [1, 2]
    assert current_run_ids(
        [run(1, PRED, ["a", "b"]), run(2, PRED, ["a"]), run(3, PRED, ["b"])]
    ) == [
        2,
        3,
    ]


def test_runs_of_other_reviewers_domains_and_purposes_never_supersede_each_other():
    runs = [
        run(1, PRED, ["a"]),
        run(2, PRED, ["a"], reviewer=2),
        run(3, PRED, ["a"], domain=2),
        run(4, LOO, ["a"]),
    ]
    assert current_run_ids(runs) == [1, 2, 3, 4]


def test_a_study_is_superseded_only_by_a_later_study_of_its_scope():
    runs = [
        run(1, STUDY, ["a"], reviewer=None, scope="study:d1:a:c1"),
        run(2, STUDY, ["a", "b"], reviewer=None, scope="study:d1:a,b:c1"),
        run(3, STUDY, ["a"], reviewer=None, scope="study:d1:a:c1"),
    ]
    assert current_run_ids(runs) == [2, 3]


def test_a_run_that_names_no_dimension_is_kept_per_scope():
    runs = [run(1, PRED, [], scope="x"), run(2, PRED, ["a"]), run(3, PRED, [], scope="x")]
    assert current_run_ids(runs) == [2, 3]
