"""Unit splitting and de-duplication on hand-made paraphrases and near-misses, at the documented
threshold (DEFAULT_THRESHOLD, with the judges' local hashing embeddings). No database."""

from __future__ import annotations

import pandas as pd

from apps.findings.analysis import DEFAULT_THRESHOLD, cluster_units, compute_findings, split_units
from apps.judges.engine.embeddings import embed_texts_local


def _groups(texts: list[str]) -> list[set[str]]:
    labels = cluster_units(embed_texts_local(texts), DEFAULT_THRESHOLD)
    groups: dict[int, set[str]] = {}
    for text, label in zip(texts, labels, strict=True):
        groups.setdefault(int(label), set()).add(text)
    return sorted(groups.values(), key=lambda g: sorted(g))


def test_it_splits_sentences_semicolons_and_contrasts_and_drops_trivia():
    text = (
        "Good. The sensor drifts in humid rooms; calibration is manual, "
        "but the vendor sells a service."
    )
    assert split_units(text) == [
        "The sensor drifts in humid rooms",
        "Calibration is manual",
        "The vendor sells a service.",
    ]
    assert split_units("Not B2B.") == ["Not B2B."]
    assert split_units("   ") == []


def test_it_bounds_a_long_rationale():
    units = split_units("The price is too high for clinics. " * 500)
    assert len(units) == 20


def test_paraphrases_merge():
    texts = [
        "The sensor array will struggle with humidity drift.",
        "Humidity drift is a real risk for the sensor array.",
        "The pricing model ignores hospital budgets.",
        "Hospital budgets do not fit the pricing model.",
    ]
    assert _groups(texts) == [
        {texts[2], texts[3]},
        {texts[0], texts[1]},
    ]


def test_near_misses_sharing_a_topic_stay_apart():
    texts = [
        "The sensor array will struggle with humidity drift.",
        "The sensor array needs manual calibration.",
        "The sensor array costs too much to replace.",
    ]
    assert len(_groups(texts)) == 3


def test_complete_linkage_does_not_chain_related_points_into_one():
    texts = [
        "Humidity drift hurts the sensor.",
        "Humidity and temperature drift hurt the sensor.",
        "Temperature limits hurt the sensor housing.",
    ]
    assert len(_groups(texts)) >= 2


def test_an_idea_finding_raised_by_two_reviewers_counts_once_with_both():
    frame = pd.DataFrame(
        [
            (1, 10, "nlp", "specificity", "a", "Hospital budgets do not fit the pricing model."),
            (2, 10, "nlp", "market_size", "b", "The pricing model ignores hospital budgets."),
            (3, 10, "nlp", "market_size", "b", "Setup needs a data engineer on site."),
        ],
        columns=["rating_id", "idea_id", "domain", "dimension", "member", "text"],
    )
    result = compute_findings(frame, embed_texts_local)
    idea = result["domains"]["nlp"]["ideas"]["10"]
    assert (idea["n_rationales"], idea["n_units"], idea["n_findings"]) == (3, 3, 2)
    assert [f["members"] for f in idea["findings"]] == [["a", "b"], ["b"]]
    assert result["domains"]["nlp"]["sweep"]["0.9"]["idea_findings"] >= 2
