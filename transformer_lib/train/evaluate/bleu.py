"""Corpus BLEU, exact match, and how sure a BLEU score or a difference is: all computed by
sacrebleu (Post, 2018), with bootstrap resampling of the test sentences (Koehn, 2004).
Notebook 07, section 11, uses them to choose settings on `valid` and report `test` once.

The numbers are those sacrebleu's command line prints for the same files and seed
(``SACREBLEU_SEED=seed``): :func:`bleu_confidence_interval` those of
``sacrebleu REF -i HYP --confidence``, and :func:`paired_bootstrap` those of
``sacrebleu REF -i A B --paired-bs``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import NamedTuple

import sacrebleu
from sacrebleu.significance import PairedTest

from transformer_lib._checks import check_int, fail

__all__ = [
    "corpus_bleu",
    "exact_match",
    "BleuInterval",
    "BleuDifference",
    "bleu_confidence_interval",
    "paired_bootstrap",
]


def _check_texts(name: str, texts) -> None:
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        fail(name, "a list of strings (one per sentence)", type(texts).__name__, error=TypeError)


def _check_pair_lists(hypotheses, references, name: str = "hypotheses") -> None:
    _check_texts(name, hypotheses)
    _check_texts("references", references)
    if len(hypotheses) != len(references):
        fail("references", "one per hypothesis ({n})", str(len(references)), n=len(hypotheses))


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus-level BLEU in [0, 100] with sacrebleu's defaults (13a tokenizer, one reference).

    BLEU is a corpus statistic: n-gram matches are pooled over all sentences before the
    precision and brevity penalty are computed, so it is not an average of sentence scores.
    An empty corpus scores 0.0, as in :func:`exact_match`.
    """
    _check_pair_lists(hypotheses, references)
    if not hypotheses:
        return 0.0  # sacrebleu raises IndexError on an empty corpus
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score


def exact_match(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Fraction in [0, 1] of hypotheses equal to their reference (after stripping spaces)."""
    _check_pair_lists(hypotheses, references)
    if not hypotheses:
        return 0.0
    return sum(h.strip() == r.strip() for h, r in zip(hypotheses, references)) / len(hypotheses)


class BleuInterval(NamedTuple):
    """Corpus BLEU and its 95% bootstrap interval as sacrebleu prints them:
    ``bleu (μ = mean ± half_width)``. ``mean`` is the mean of the resampled scores (not the
    corpus BLEU); ``half_width`` is half the distance between their 2.5% and 97.5% points."""

    bleu: float
    mean: float
    half_width: float

    @property
    def low(self) -> float:
        """μ - half-width: the interval's lower end."""
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        """μ + half-width: the interval's upper end."""
        return self.mean + self.half_width


class BleuDifference(NamedTuple):
    """BLEU(b) - BLEU(a) on one corpus, sacrebleu's paired-bootstrap p-value for it (a is
    the baseline), and each system's BLEU with its interval from the same resampled corpora."""

    difference: float
    p_value: float
    a: BleuInterval
    b: BleuInterval


@contextmanager
def _sacrebleu_seed(seed: int) -> Iterator[None]:
    """sacrebleu reads the seed of its resampling from the environment variable SACREBLEU_SEED."""
    saved = os.environ.get("SACREBLEU_SEED")
    os.environ["SACREBLEU_SEED"] = str(seed)
    try:
        yield
    finally:
        if saved is None:
            del os.environ["SACREBLEU_SEED"]
        else:
            os.environ["SACREBLEU_SEED"] = saved


def _check_bootstrap(hypotheses, references, n_samples, seed, name="hypotheses") -> None:
    _check_pair_lists(hypotheses, references, name)
    if not hypotheses:
        fail(name, "a non-empty list of strings", "an empty list")
    check_int("n_samples", n_samples, minimum=40)  # 2.5% of the samples is at least one
    check_int("seed", seed, minimum=1)  # sacrebleu's paired test takes 0 as "no seed"


def bleu_confidence_interval(
    hypotheses: Sequence[str], references: Sequence[str], n_samples: int = 1000, seed: int = 12345
) -> BleuInterval:
    """Corpus BLEU with a 95% confidence interval by bootstrap resampling (Koehn, 2004).

    sacrebleu draws ``n_samples`` corpora of N sentences with replacement from the N test
    sentences and scores each; μ is the mean of those scores, and the interval is μ ± half
    the distance between their 2.5% and 97.5% points. The same numbers as
    ``SACREBLEU_SEED=seed sacrebleu REF -i HYP --confidence --confidence-n n_samples``.
    """
    _check_bootstrap(hypotheses, references, n_samples, seed)
    with _sacrebleu_seed(seed):
        score = sacrebleu.BLEU().corpus_score(
            list(hypotheses), [list(references)], n_bootstrap=n_samples
        )
    # μ and the half-width have no public name: they are the fields Score.format() prints.
    return BleuInterval(score.score, float(score._mean), float(score._ci))


def paired_bootstrap(
    hypotheses_a: Sequence[str],
    hypotheses_b: Sequence[str],
    references: Sequence[str],
    n_samples: int = 1000,
    seed: int = 12345,
) -> BleuDifference:
    """Is system b's BLEU different from system a's beyond the noise of the test set?

    sacrebleu's paired bootstrap test (``significance._paired_bs_test``, which follows the
    Moses script ``bootstrap-hypothesis-difference-significance.pl``; a is the baseline).
    It draws ``n_samples`` corpora of N sentences with replacement from the N test
    sentences (``numpy.random.default_rng(seed)``) and scores both systems on each *same*
    corpus, so sentences that are easy or hard for both cancel out. With Δ = BLEU(b) -
    BLEU(a) and Δ* the same difference on a resampled corpus, it centres the *absolute*
    differences, |Δ*| - mean |Δ*|, counts those strictly greater than |Δ|, and returns
    p = (count + 1) / (n_samples + 1): never 0. The sign of Δ plays no part (read the
    direction from ``difference``). When |Δ| is clearly above the noise, |Δ*| - mean |Δ*|
    is close to Δ* - mean Δ* (or its negative, for Δ < 0), so p is close to the share of
    resamples on Δ's side only: a one-sided p-value, smaller than a two-sided one would be.

    Identical translations give Δ = 0 and every Δ* = 0, so no centred value is above 0
    and p = 1 / (n_samples + 1), 1/1001 by default: nothing was tested, and
    ``difference == 0`` says so. Two systems with *different* translations and the same
    corpus BLEU also have Δ = 0, but their |Δ*| vary, many of them above their mean: p is
    large. For a two-sided test at level 0.05 (is either system better?), call a
    difference shown only when ``p_value < 0.025`` (notebook 07, section 11). The same numbers as
    ``SACREBLEU_SEED=seed sacrebleu REF -i A B --paired-bs --paired-bs-n n_samples``.
    """
    _check_bootstrap(hypotheses_a, references, n_samples, seed, name="hypotheses_a")
    _check_texts("hypotheses_b", hypotheses_b)
    if len(hypotheses_b) != len(hypotheses_a):
        fail(
            "hypotheses_b",
            "one per sentence of hypotheses_a ({n})",
            str(len(hypotheses_b)),
            n=len(hypotheses_a),
        )
    systems = [("a", list(hypotheses_a)), ("b", list(hypotheses_b))]
    with _sacrebleu_seed(seed):
        test = PairedTest(
            systems, {"BLEU": sacrebleu.BLEU()}, [list(references)], "bs", n_samples=n_samples
        )
        _, results = test()
    a, b = (BleuInterval(r.score, float(r.mean), float(r.ci)) for r in results["BLEU"])
    return BleuDifference(b.bleu - a.bleu, float(results["BLEU"][1].p_value), a, b)
