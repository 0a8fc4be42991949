"""Notebook 08, what matters: Xavier's bound for one weight matrix (why fusing W^Q, W^K,
W^V into one (3D, D) matrix starts them smaller), and when a difference between two
variants is larger than the spread between seeds."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable

from transformer_lib.i18n import N_, _
from transformer_lib.teaching.exercises._compare import _expect, _number
from transformer_lib.teaching.exercises._core import Mistake, _passed, exercise
from transformer_lib.teaching.studies.compare import clearly_better

__all__ = ["check_xavier_bound", "check_clearly_better"]


def _library_bound(fan_out: int, fan_in: int) -> float:
    """``nn.init.xavier_uniform_``'s bound for a (fan_out, fan_in) matrix (gain 1)."""
    return math.sqrt(6 / (fan_in + fan_out))


XAVIER_MISTAKES = (
    Mistake(
        N_(
            "that is the standard deviation of Xavier's *normal* draw, √(2 / (fan_in + fan_out)). "
            "A uniform draw on [-a, a] has variance a²/3, so the bound is a = √(6 / (fan_in + "
            "fan_out))."
        ),
        lambda fan_out, fan_in: math.sqrt(2 / (fan_in + fan_out)),
    ),
    Mistake(
        N_(
            "Xavier averages both sides: the bound is √(6 / (fan_in + fan_out)), not √(6 / fan_in) "
            "(that would ignore how many outputs each input feeds)."
        ),
        lambda fan_out, fan_in: math.sqrt(6 / fan_in),
    ),
    Mistake(
        N_(
            "the bound is √(6 / (fan_in + fan_out)) with a square root; you returned the variance-"
            "like 6 / (fan_in + fan_out)."
        ),
        lambda fan_out, fan_in: 6 / (fan_in + fan_out),
    ),
    Mistake(
        N_("fan_in + fan_out, not fan_in · fan_out: the bound is √(6 / (fan_in + fan_out))."),
        lambda fan_out, fan_in: math.sqrt(6 / (fan_in * fan_out)),
    ),
)


@exercise(_library_bound, XAVIER_MISTAKES)
def check_xavier_bound(fn: Callable) -> None:
    """fn(fan_out, fan_in) -> float, Xavier's uniform bound for a (fan_out, fan_in) matrix."""
    __tracebackhide__ = True
    fallback = _("Return √(6 / (fan_in + fan_out)).")
    for fan_out, fan_in in [(64, 64), (192, 64), (256, 64), (64, 256), (512, 512)]:
        what = f"{getattr(fn, '__name__', 'bound')}(fan_out={fan_out}, fan_in={fan_in})"
        expected = _library_bound(fan_out, fan_in)
        _expect(
            what,
            fn,
            (fan_out, fan_in),
            _library_bound,
            XAVIER_MISTAKES,
            validate=_number(expected, what, fallback),
        )
    ratio = _library_bound(3 * 64, 64) / _library_bound(64, 64)
    message = _(
        "Xavier's bound √(6 / (fan_in + fan_out)): one (3D, D) matrix starts W^Q, W^K, W^V "
        "{ratio} (= 1/√2) times as wide as three (D, D) matrices."
    )
    _passed(message.format(ratio=f"{ratio:.3f}"))


CLEARLY_BETTER_MISTAKES = (
    Mistake(
        N_(
            "the seeds are not paired: seed 0 of one variant has nothing in common with seed 0 of "
            "the other beyond the batch order. Compare the ranges: min(ours) > max(theirs)."
        ),
        lambda ours, theirs: all(a > b for a, b in zip(ours, theirs)),
    ),
    Mistake(
        N_(
            "comparing means ignores the spread: one lucky seed moves a mean. Ask whether the "
            "worst seed of ours beats the best seed of theirs: min(ours) > max(theirs)."
        ),
        lambda ours, theirs: statistics.mean(ours) > statistics.mean(theirs),
    ),
    Mistake(
        N_(
            "max(ours) > min(theirs) only says the ranges touch; 'clearly better' needs every "
            "seed of ours above every seed of theirs: min(ours) > max(theirs)."
        ),
        lambda ours, theirs: max(ours) > min(theirs),
    ),
    Mistake(
        N_("a tie is not a win: use min(ours) > max(theirs), strictly greater."),
        lambda ours, theirs: min(ours) >= max(theirs),
    ),
)


@exercise(clearly_better, CLEARLY_BETTER_MISTAKES)
def check_clearly_better(fn: Callable) -> None:
    """fn(ours, theirs) -> bool: every seed of ours above every seed of theirs."""
    __tracebackhide__ = True
    cases = [  # in this order, each mistake meets the first case it gets wrong
        ([96.0, 97.0, 98.0], [90.0, 91.0, 92.0]),  # apart: True
        ([95.0, 95.0, 95.0], [95.0, 95.0, 95.0]),  # all tied: False
        ([88.0, 93.0, 90.0], [89.0, 91.0, 94.0]),  # interleaved, lower mean: False
        ([99.0, 80.0, 82.0], [85.0, 86.0, 84.0]),  # higher mean, overlapping: False
        ([92.0, 97.0, 95.0], [91.0, 90.0, 94.0]),  # every pair won, ranges overlap: False
        ([70.0, 71.0, 72.0], [80.0, 81.0, 82.0]),  # below: False
    ]
    for ours, theirs in cases:
        what = f"{getattr(fn, '__name__', 'clearly_better')}({ours}, {theirs})"
        expected = clearly_better(ours, theirs)
        _expect(
            what,
            fn,
            (ours, theirs),
            clearly_better,
            CLEARLY_BETTER_MISTAKES,
            fallback=_("Expected {expected}: is min(ours) > max(theirs)?").format(
                expected=expected
            ),
        )
    _passed(_("clearly better: the worst seed of one beats the best seed of the other."))
