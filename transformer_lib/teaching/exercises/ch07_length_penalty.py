"""Notebook 07, the toy translator: the length penalty that beam search ranks finished
hypotheses by (§6.1)."""

from __future__ import annotations

from collections.abc import Callable

from transformer_lib.i18n import N_, _
from transformer_lib.inference.decode import length_penalty
from transformer_lib.teaching.exercises._compare import _expect, _number
from transformer_lib.teaching.exercises._core import Mistake, _passed, exercise

__all__ = ["check_length_penalty"]


def _library_normalised(log_prob: float, length: int, alpha: float) -> float:
    """A hypothesis' score as beam search ranks it: log P(Y) / lp(|Y|)."""
    return log_prob / length_penalty(length, alpha)


LENGTH_PENALTY_MISTAKES = (
    Mistake(
        N_(
            "divide the score by lp, do not multiply: log P(Y) is negative, so multiplying by "
            "lp > 1 pushes long hypotheses further down instead of offsetting their extra tokens."
        ),
        lambda log_prob, length, alpha: log_prob * ((5 + length) / 6) ** alpha,
    ),
    Mistake(
        N_(
            "that is the plain |Y|^α normalisation; GNMT's penalty (the paper's) is "
            "lp = ((5 + |Y|) / 6)^α."
        ),
        lambda log_prob, length, alpha: log_prob / length**alpha,
    ),
    Mistake(
        N_(
            "brackets: raise the whole ratio to α, ((5 + |Y|) / 6) ** alpha, not (5 + |Y|) ** "
            "alpha / 6."
        ),
        lambda log_prob, length, alpha: log_prob / ((5 + length) ** alpha / 6),
    ),
    Mistake(
        N_("raise (5 + |Y|) / 6 to the power α: α = 0 must switch the penalty off."),
        lambda log_prob, length, alpha: log_prob / ((5 + length) / 6),
    ),
    Mistake(
        N_("α is an exponent, not a factor: ((5 + |Y|) / 6) ** alpha."),
        lambda log_prob, length, alpha: log_prob / ((5 + length) / 6 * alpha),
    ),
    Mistake(
        N_(
            "dividing by |Y| is the plain per-token average; the length penalty is "
            "((5 + |Y|) / 6)^α, which α tunes."
        ),
        lambda log_prob, length, alpha: log_prob / length,
    ),
    Mistake(
        N_("use true division, (5 + |Y|) / 6: // rounds down to a whole number."),
        lambda log_prob, length, alpha: log_prob / ((5 + length) // 6) ** alpha,
    ),
)


@exercise(_library_normalised, LENGTH_PENALTY_MISTAKES)
def check_length_penalty(fn: Callable) -> None:
    """fn(log_prob, length, alpha) -> float: log_prob / ((5 + length) / 6)^alpha (§6.1)."""
    __tracebackhide__ = True
    fallback = _("Return log_prob / ((5 + length) / 6) ** alpha.")
    for log_prob, length, alpha in (
        (-1.2, 4, 0.6),
        (-1.5, 9, 0.6),
        (-4.0, 20, 1.0),
        (-2.0, 3, 0.0),
    ):
        what = _("the score for log P = {log_prob}, |Y| = {length}, alpha = {alpha}").format(
            log_prob=log_prob, length=length, alpha=alpha
        )
        _expect(
            what,
            fn,
            (log_prob, length, alpha),
            _library_normalised,
            LENGTH_PENALTY_MISTAKES,
            validate=_number(_library_normalised(log_prob, length, alpha), what, fallback),
        )
    short, long = _library_normalised(-1.2, 4, 0.6), _library_normalised(-1.5, 9, 0.6)
    if long > short:
        message = _(
            "length penalty: log P / ((5 + |Y|) / 6)^α. With α = 0.6, the long one of "
            "(-1.2, 4 tokens) and (-1.5, 9 tokens) wins; with α = 0 the short one would."
        )
    else:
        message = _(
            "length penalty: log P / ((5 + |Y|) / 6)^α. With α = 0.6, the short one of "
            "(-1.2, 4 tokens) and (-1.5, 9 tokens) wins; with α = 0 the short one would."
        )
    _passed(message)
