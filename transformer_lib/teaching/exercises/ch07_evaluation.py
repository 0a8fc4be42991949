"""Notebook 07, the toy translator, evaluation: the alignment error rate of predicted word
alignments against gold sure and possible links (Och & Ney 2003)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from transformer_lib.i18n import N_, _
from transformer_lib.teaching.exercises._compare import _expect, _number
from transformer_lib.teaching.exercises._core import Mistake, _passed, exercise
from transformer_lib.train.evaluate.alignment import alignment_error_rate

__all__ = ["check_alignment_error_rate"]


def _aer(
    predicted,
    sure,
    possible,
    *,
    union=True,
    use_possible=True,
    complement=True,
    denominator="s",
    empty=0.0,
):
    """AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|), written with one of the usual slips."""
    if union:
        possible = possible | sure
    if not use_possible:
        possible = sure
    size = len(predicted) + len(possible if denominator == "p" else sure)
    if size == 0 and empty is not None:
        return empty
    score = (len(predicted & sure) + len(predicted & possible)) / size
    return 1.0 - score if complement else score


def _precision_error(predicted, sure, possible):
    return 1.0 - len(predicted & (possible | sure)) / len(predicted)


def _recall_error(predicted, sure, possible):
    return 1.0 - len(predicted & sure) / len(sure)


_EMPTY = N_(
    "with no predicted and no sure links there is nothing to get wrong: return 0.0 instead "
    "of dividing by zero (if not predicted and not sure: return 0.0)."
)

# The empty case comes before precision and recall: their code divides by zero there too.
AER_MISTAKES = (
    Mistake(
        N_(
            "AER is an error rate: return 1 - (|A∩S| + |A∩P|) / (|A| + |S|); you returned the "
            "fraction of hits."
        ),
        partial(_aer, complement=False),
    ),
    Mistake(
        N_(
            "you ignored the possible links (that is 1 - F1 against S): count the hits on P too, "
            "1 - (|A∩S| + |A∩P|) / (|A| + |S|)."
        ),
        partial(_aer, use_possible=False),
    ),
    Mistake(
        N_("the denominator is |A| + |S| (predicted plus sure links), not |A| + |P|."),
        partial(_aer, denominator="p"),
    ),
    Mistake(
        _EMPTY,
        partial(_aer, empty=None),
    ),
    Mistake(
        N_(
            "that is 1 - precision, |A∩P| / |A|: AER also needs the sure links' recall, "
            "1 - (|A∩S| + |A∩P|) / (|A| + |S|)."
        ),
        _precision_error,
    ),
    Mistake(
        N_(
            "that is 1 - recall, |A∩S| / |S|: AER also counts hits on P, "
            "1 - (|A∩S| + |A∩P|) / (|A| + |S|)."
        ),
        _recall_error,
    ),
    Mistake(
        N_(
            "a sure link is always possible too: use P ∪ S for the possible links (possible may "
            "list only the extra ones), e.g. possible = possible | sure."
        ),
        partial(_aer, union=False),
    ),
)


def _library_aer(predicted: frozenset, sure: frozenset, possible: frozenset) -> float:
    """The library's ``alignment_error_rate`` for one sentence."""
    return alignment_error_rate(predicted, sure, possible)


@exercise(_library_aer, AER_MISTAKES)
def check_alignment_error_rate(fn: Callable) -> None:
    """fn(predicted, sure, possible) -> float, sets of (i_src, j_tgt) pairs (Och & Ney 2003)."""
    __tracebackhide__ = True
    predicted = frozenset({(0, 0), (1, 1), (2, 1), (3, 3)})
    sure = frozenset({(0, 0), (1, 2), (2, 1)})
    extra = frozenset({(1, 1), (3, 2)})
    cases = (
        (_("the AER with possible links including the sure ones"), predicted, sure, sure | extra),
        (_("the AER with possible listing only the extra links"), predicted, sure, extra),
        (_("the AER with no links at all"), frozenset(), frozenset(), frozenset()),
    )
    fallback = _("AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|) with P ∪ S as the possible links.")
    for what, *args in cases:  # frozensets: a student's `possible |= sure` cannot leak
        _expect(
            what,
            fn,
            tuple(args),
            _library_aer,
            AER_MISTAKES,
            validate=_number(_library_aer(*args), what, fallback),
            hints=(("division by zero", _EMPTY),),
        )
    _passed(
        _("alignment error rate: 1 - (|A∩S| + |A∩P|) / (|A| + |S|), a sure link is possible too.")
    )
