from apps.judges.engine.postprocess import aggregate_seeds


def test_it_takes_the_majority_of_the_kept_seeds():
    final = aggregate_seeds([(3, 90), (3, 85), (2, 99)], threshold=80)
    assert (final.score, final.kept, final.discarded, final.failed) == (3, 3, 0, 0)


def test_it_discards_predictions_below_the_threshold_before_voting():
    final = aggregate_seeds([(3, 70), (3, 79), (2, 80)], threshold=80)
    assert (final.score, final.kept, final.discarded) == (2, 1, 2)


def test_it_counts_failed_seeds_apart_and_returns_none_when_nothing_is_kept():
    final = aggregate_seeds([(None, None), (2, 10), (None, 95)], threshold=80)
    assert (final.score, final.kept, final.discarded, final.failed) == (None, 0, 1, 2)


def test_a_missing_confidence_is_discarded_unless_the_threshold_is_off():
    assert aggregate_seeds([(2, None)], threshold=80).score is None
    assert aggregate_seeds([(2, None)], threshold=0).score == 2


def test_a_three_way_split_goes_to_the_median_score_even_against_confidence():
    assert aggregate_seeds([(1, 99), (2, 81), (4, 99)], threshold=80).score == 2
    # votes 1, 3, 3, 4, 4 -> 3 and 4 tie on votes; median 3 -> 3, although 4 is more confident
    preds = [(1, 90), (3, 85), (3, 85), (4, 95), (4, 95)]
    assert aggregate_seeds(preds, threshold=80).score == 3


def test_a_tie_equally_far_from_the_median_goes_to_the_higher_mean_confidence_then_the_lower():
    assert aggregate_seeds([(2, 95), (4, 85)], threshold=80).score == 2
    assert aggregate_seeds([(2, 85), (4, 95)], threshold=80).score == 4
    # 2 and 4 tie everywhere, the median 3 is equally far: the lower wins
    assert aggregate_seeds([(2, 90), (4, 90)], threshold=80).score == 2


def test_the_order_of_the_seeds_does_not_matter():
    preds = [(2, 90), (4, 90), (3, 81), (3, 99), (4, 90)]
    assert aggregate_seeds(preds, threshold=80) == aggregate_seeds(preds[::-1], threshold=80)
