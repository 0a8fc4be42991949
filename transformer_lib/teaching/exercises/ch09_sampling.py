"""Notebook 09, the decoder-only model: the distribution one sampling step draws from.

The expected answer is the library's: the distribution ``generation.sample_next`` draws
from (``language_model.next_token_distribution``).

Shapes:
    N rows, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from transformer_lib.i18n import N_, _
from transformer_lib.model.language_model import next_token_distribution
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import Mistake, _generator, _passed, exercise

__all__ = ["check_next_token_distribution"]


def _top_k(scaled: torch.Tensor, top_k: int | None, fill: float = float("-inf"), index: int = -1):
    """``scaled`` with every logit below the k-th largest of its row set to ``fill``."""
    if top_k is None:
        return scaled
    kth = scaled.sort(dim=-1, descending=True).values[:, top_k + index, None]  # (N, 1)
    return scaled.masked_fill(scaled < kth, fill)


def _distribution(logits: torch.Tensor, temperature: float, top_k: int | None) -> torch.Tensor:
    """What ``sample_next`` draws from, in the student's signature.

    Shapes: logits (N, V) -> probabilities (N, V).
    """
    return next_token_distribution(logits, temperature, top_k)


def _zeroed_after_softmax(logits, temperature, top_k):
    probs = torch.softmax(logits / temperature, dim=-1)  # (N, V)
    return _top_k(probs, top_k, fill=0.0)  # not renormalised


def _one_fewer(logits, temperature, top_k):
    scaled = logits / temperature
    if top_k is None:
        return torch.softmax(scaled, dim=-1)
    kth = scaled.topk(top_k, dim=-1).values[:, -1:]
    return torch.softmax(scaled.masked_fill(scaled <= kth, float("-inf")), dim=-1)


NEXT_TOKEN_DISTRIBUTION_MISTAKES = (
    Mistake(
        N_(
            "divide the logits by the temperature, don't multiply: a temperature below 1 must "
            "sharpen the distribution (logits / 0.5 doubles the gaps), above 1 flatten it."
        ),
        lambda z, t, k: torch.softmax(_top_k(z * t, k), dim=-1),
    ),
    Mistake(
        N_(
            "the temperature divides the logits before the softmax: probabilities divided by "
            "it no longer sum to 1. Use softmax(logits / temperature)."
        ),
        lambda z, t, k: torch.softmax(_top_k(z, k), dim=-1) / t,
    ),
    Mistake(
        N_(
            "after zeroing all but the top k probabilities, the kept ones no longer sum to 1: "
            "set the other logits to -inf before the softmax (or renormalise)."
        ),
        _zeroed_after_softmax,
    ),
    Mistake(
        N_(
            "you keep k + 1 tokens: the threshold is the k-th largest logit, "
            "topk(k).values[:, -1:] (index k - 1 when counting from 0)."
        ),
        lambda z, t, k: torch.softmax(_top_k(z / t, k, index=0), dim=-1),
    ),
    Mistake(
        N_(
            "you keep k - 1 tokens: drop only the logits strictly below the k-th largest "
            "(scaled < kth); with <= the k-th goes too."
        ),
        _one_fewer,
    ),
    Mistake(
        N_(
            "a logit of 0 is not a probability of 0 (exp(0) = 1): fill the logits outside the "
            "top k with float('-inf'), so that the softmax gives them exactly 0."
        ),
        lambda z, t, k: torch.softmax(_top_k(z / t, k, fill=0.0), dim=-1),
    ),
    Mistake(
        N_(
            "that is greedy decoding, all the probability on the largest logit: sampling "
            "draws from softmax(logits / temperature), so other tokens keep their chances."
        ),
        lambda z, t, k: F.one_hot(z.argmax(dim=-1), z.size(-1)).float(),
    ),
    Mistake(
        N_(
            "top_k is ignored: keep the k largest logits of each row and set the others to "
            "-inf before the softmax (when top_k is not None)."
        ),
        lambda z, t, k: torch.softmax(z / t, dim=-1),
    ),
    Mistake(
        N_("temperature is ignored: divide the logits by it before the softmax."),
        lambda z, t, k: torch.softmax(_top_k(z, k), dim=-1),
    ),
)


@exercise(_distribution, NEXT_TOKEN_DISTRIBUTION_MISTAKES)
def check_next_token_distribution(fn: Callable) -> None:
    """fn(logits (N, V), temperature, top_k) -> probabilities (N, V), sample_next's."""
    __tracebackhide__ = True
    logits = torch.randn(3, 10, generator=_generator(94)) * 2  # no ties: exactly k kept
    for temperature, top_k in ((0.8, 4), (1.7, None), (1.0, 1)):
        what = _("the distribution (temperature={temperature}, top_k={top_k})").format(
            temperature=temperature, top_k=top_k
        )
        _expect(
            what,
            fn,
            (logits, temperature, top_k),
            _distribution,
            NEXT_TOKEN_DISTRIBUTION_MISTAKES,
            validate=partial(_tensor, what=what, shape=(3, 10), letters="(N, V)"),
            fallback=N_(
                "softmax(logits / temperature), after setting every logit below the k-th "
                "largest of its row to -inf (when top_k is not None)."
            ),
        )
    _passed(
        N_(
            "sampling distribution: softmax(logits / temperature) over the top k logits of "
            "each row (the others exactly 0), the distribution sample_next draws from."
        )
    )
