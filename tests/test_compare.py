"""compare: the course's one rule for "A is better than B", and the sentence it prints."""

from __future__ import annotations

import itertools
import math

import pytest

from transformer_lib.teaching.studies.compare import Verdict, clearly_better, compare

APART, LOW = [96.0, 97.0, 98.0], [90.0, 91.0, 92.0]
OVERLAPPING = [91.5, 95.0, 99.0]  # higher mean than LOW's and APART's neighbours, ranges touch


@pytest.mark.parametrize(
    ("ours", "theirs", "higher_is_better", "verdict"),
    [
        (APART, LOW, True, "better"),
        (LOW, APART, True, "worse"),
        (OVERLAPPING, LOW, True, "no difference shown"),  # mean +4.2, one seed below
        ([95.0] * 3, [95.0] * 3, True, "no difference shown"),  # a tie is no difference
        ([92.0, 93.0, 94.0], [94.0, 95.0, 96.0], True, "no difference shown"),  # touching
        ([0.05, 0.06, 0.055], [0.1, 0.12, 0.09], False, "better"),  # AER: lower is better
        ([0.05, 0.06, 0.055], [0.1, 0.12, 0.09], True, "worse"),
    ],
)
def test_compare_applies_every_seed_beyond_every_seed(ours, theirs, higher_is_better, verdict):
    found = compare(ours, theirs, higher_is_better=higher_is_better)
    assert isinstance(found, Verdict) and found.verdict == verdict == str(found)


def test_compare_agrees_with_clearly_better_both_ways():
    cases = [APART, LOW, OVERLAPPING, [95.0] * 3, [88.0, 93.0, 90.0], [89.0, 91.0, 94.0]]
    for ours, theirs in itertools.product(cases, repeat=2):
        verdict = compare(ours, theirs).verdict
        assert (verdict == "better") == clearly_better(ours, theirs)
        assert (verdict == "worse") == clearly_better(theirs, ours)


def test_the_rule_overclaims_one_way_with_chance_one_in_twenty_for_three_seeds():
    """Under no difference every ordering of the 6 scores is equally likely: count them."""
    orders = list(itertools.permutations(range(6)))
    wins = sum(compare(order[:3], order[3:]).verdict == "better" for order in orders)
    assert wins / len(orders) == pytest.approx(1 / math.comb(6, 3))


@pytest.mark.parametrize(
    ("ours", "theirs", "name"), [([1.0, 2.0], LOW, "ours"), (LOW, [3.0], "theirs")]
)
def test_compare_wants_three_seeds_and_names_the_argument(ours, theirs, name):
    with pytest.raises(ValueError, match=rf"`{name}` must be at least 3 scores, one per seed"):
        compare(ours, theirs)


def test_compare_names_an_argument_that_is_not_scores():
    with pytest.raises(ValueError, match=r"`theirs` must be a list of numbers"):
        compare(LOW, ["a", "b", "c"])


def test_the_bootstrap_interval_holds_the_mean_difference_and_is_reproducible():
    verdict = compare(OVERLAPPING, LOW)
    low, high = verdict.interval()
    assert low < verdict.difference < high
    assert (low, high) == verdict.interval()  # seeded
    assert low >= min(OVERLAPPING) - max(LOW) and high <= max(OVERLAPPING) - min(LOW)
    with pytest.raises(ValueError, match=r"`level` must be between 0 and 1"):
        verdict.interval(level=95)


def test_the_sentence_states_the_verdict_and_the_numbers_behind_it():
    said = compare(LOW, APART).sentence("dropout 0.1", "notebook 07", "valid BLEU")
    assert said.startswith("dropout 0.1 is worse than notebook 07 on valid BLEU: every seed")
    assert "91.0 [90.0–92.0] against 97.0 [96.0–98.0]" in said and "-6.0" in said
    said = compare(OVERLAPPING, LOW).sentence("a", "b", "valid BLEU")
    assert said.startswith("No difference shown between a and b on valid BLEU")
    aer = compare([0.05, 0.06, 0.055], [0.1, 0.12, 0.09], higher_is_better=False)
    assert "0.055 [0.050–0.060] against 0.103 [0.090–0.120]" in aer.sentence("a", "b", "AER")


def test_the_sentence_speaks_the_course_language(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh_CN")  # what set_language("zh_CN") leaves
    said = compare(APART, LOW).sentence("1 head", "notebook 07", "valid BLEU")
    assert said.startswith("在valid BLEU得分上，1个头优于笔记本07")  # the names translated too


def test_accuracies_that_reach_one_keep_three_decimals():
    """A rate of 1.0 is still a rate: 0.998 against 0.761, not 1.0 against 0.8."""
    sentence = compare([0.994, 1.0, 1.0], [0.638, 0.846, 0.8]).sentence("a", "b", "accuracy")
    assert "0.998 [0.994–1.000] against 0.761 [0.638–0.846]" in sentence
    assert "mean difference +0.237" in sentence
