"""Corpus BLEU (sacrebleu), exact match, and how sure a BLEU score or a difference is:
bootstrap resampling of the test sentences (Koehn, 2004) with sacrebleu's draws.
Notebook 07, section 11, uses them to choose settings on `valid` and report `test` once.

What we report differs from what sacrebleu's command line prints (the draws are the same):

- ``--confidence`` adds ``μ = mean ± half-width`` to the score: μ is the mean of the
  resampled scores, not the corpus BLEU, and the half-width is half the distance between
  the 2.5% and 97.5% points. :func:`bleu_confidence_interval` returns the corpus BLEU, the
  two points themselves (``low``, ``high``: a percentile interval, in general centred on
  neither number) and μ (``mean``); ``mean`` and ``half_width`` are sacrebleu's numbers.
- ``--paired-bs`` prints, per system, μ ± half-width and a p-value against the baseline;
  it gives no interval for the difference. :func:`paired_bootstrap` returns the same
  p-value and adds the 2.5% and 97.5% points of the resampled differences.

Shapes:
    N sentences; BLEU's sufficient statistics per sentence are 10 numbers: the hypothesis
    and reference lengths, then matched and total n-grams for n = 1..4.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import sacrebleu

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
        fail("references", f"one per hypothesis ({len(hypotheses)})", str(len(references)))


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
    """Corpus BLEU, the bounds of its 95% bootstrap interval (the 2.5% and 97.5% points of
    the resampled scores), and the mean of the resampled scores (sacrebleu's μ)."""

    bleu: float
    low: float
    high: float
    mean: float

    @property
    def half_width(self) -> float:
        """Half the interval's width: the ``±`` of sacrebleu's ``μ = mean ± half-width``."""
        return (self.high - self.low) / 2


class BleuDifference(NamedTuple):
    """BLEU(b) - BLEU(a) on one corpus, the 95% bootstrap interval of that difference
    (ours: sacrebleu prints none), and sacrebleu's paired-bootstrap p-value."""

    difference: float
    low: float
    high: float
    p_value: float


def _sentence_statistics(hypotheses, references) -> np.ndarray:
    """BLEU's sufficient statistics per sentence: (N, 10) = lengths, 4 matches, 4 totals."""
    metric = sacrebleu.BLEU(effective_order=True)  # quiets a warning; the counts are the same
    rows = []
    for hypothesis, reference in zip(hypotheses, references):
        score = metric.sentence_score(hypothesis, [reference])
        rows.append([score.sys_len, score.ref_len, *score.counts, *score.totals])
    return np.array(rows, dtype=np.int64)


def _bleu_from(stats: np.ndarray) -> float:
    """Corpus BLEU from summed statistics, with corpus_bleu's settings (exp smoothing)."""
    sys_len, ref_len, correct, total = stats[0], stats[1], stats[2:6], stats[6:]
    return sacrebleu.BLEU.compute_bleu(
        correct.tolist(), total.tolist(), int(sys_len), int(ref_len), smooth_method="exp"
    ).score


def _resampled_bleu(stats: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """BLEU of each resampled corpus. Shapes: stats (N, 10), rows (n_samples, N)."""
    return np.array([_bleu_from(stats[sample].sum(axis=0)) for sample in rows])


def _interval(samples: np.ndarray) -> tuple[float, float]:
    """The 2.5% and 97.5% order statistics, picked as sacrebleu picks them."""
    ordered = np.sort(samples)
    cut = len(ordered) // 40
    return float(ordered[cut]), float(ordered[len(ordered) - cut - 1])


def _check_bootstrap(hypotheses, references, n_samples, seed, name="hypotheses") -> None:
    _check_pair_lists(hypotheses, references, name)
    if not hypotheses:
        fail(name, "a non-empty list of strings", "an empty list")
    check_int("n_samples", n_samples, minimum=40)  # 2.5% of the samples is at least one
    check_int("seed", seed, minimum=0)


def bleu_confidence_interval(
    hypotheses: Sequence[str], references: Sequence[str], n_samples: int = 1000, seed: int = 12345
) -> BleuInterval:
    """Corpus BLEU with a 95% confidence interval by bootstrap resampling (Koehn, 2004).

    Draw ``n_samples`` corpora of N sentences with replacement from the N test sentences,
    score each, and take the 2.5% and 97.5% points of those scores as ``low`` and ``high``.
    The draws are those of sacrebleu's ``BLEU().corpus_score(..., n_bootstrap=n_samples)``
    (command line: ``--confidence``) for the same ``seed``, given here as an argument
    (sacrebleu reads ``SACREBLEU_SEED``, default 12345). sacrebleu prints
    ``μ = mean ± half_width`` instead: the mean of the resampled scores, not ``bleu``, and
    an interval symmetric around it; ``[low, high]`` is the percentile interval, which need
    not be symmetric around either number.
    """
    _check_bootstrap(hypotheses, references, n_samples, seed)
    stats = _sentence_statistics(hypotheses, references)  # (N, 10)
    rows = np.random.default_rng(seed).choice(len(stats), size=(n_samples, len(stats)))
    samples = _resampled_bleu(stats, rows)  # (n_samples,)
    low, high = _interval(samples)
    return BleuInterval(_bleu_from(stats.sum(axis=0)), low, high, float(samples.mean()))


def paired_bootstrap(
    hypotheses_a: Sequence[str],
    hypotheses_b: Sequence[str],
    references: Sequence[str],
    n_samples: int = 1000,
    seed: int = 12345,
) -> BleuDifference:
    """Is system b's BLEU different from system a's beyond the noise of the test set?

    Both systems are scored on the *same* resampled corpora, so sentences that are easy
    or hard for both cancel out. ``low`` and ``high`` are the 2.5% and 97.5% points of the
    resampled differences b - a: the difference is more than noise when they exclude 0.
    sacrebleu has no such interval. ``p_value`` is its paired bootstrap test
    (``--paired-bs``, as in Moses, with a as the baseline): about the share of centred
    resampled |differences| above the observed one; the same draws as sacrebleu's for the
    same ``seed``, and 1.0 when the scores are equal. The interval and ``p_value < 0.05`` are
    two readings of the same draws; near the edge they can disagree.
    """
    _check_bootstrap(hypotheses_a, references, n_samples, seed, name="hypotheses_a")
    _check_texts("hypotheses_b", hypotheses_b)
    if len(hypotheses_b) != len(hypotheses_a):
        fail(
            "hypotheses_b",
            f"one per sentence of hypotheses_a ({len(hypotheses_a)})",
            str(len(hypotheses_b)),
        )
    stats_a = _sentence_statistics(hypotheses_a, references)  # (N, 10)
    stats_b = _sentence_statistics(hypotheses_b, references)  # (N, 10)
    rows = np.random.default_rng(seed).choice(len(stats_a), size=(n_samples, len(stats_a)))
    samples = _resampled_bleu(stats_b, rows) - _resampled_bleu(stats_a, rows)  # (n_samples,)
    observed = _bleu_from(stats_b.sum(axis=0)) - _bleu_from(stats_a.sum(axis=0))
    centred = np.abs(samples) - np.abs(samples).mean()
    p_value = (int((centred > abs(observed)).sum()) + 1) / (n_samples + 1)
    if observed == 0:  # nothing to explain (sacrebleu would give 1 / (n + 1) here)
        p_value = 1.0
    return BleuDifference(observed, *_interval(samples), p_value)
