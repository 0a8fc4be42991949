"""Notebook 03, attention: softmax and the scaled scores (§3.2.1); the whole attention
function is checked in ``ch03_scaled_attention``.

The expected answers come from the library: ``torch.softmax`` (the library has no softmax of
its own) and ``transformer_lib.model.attention.attention_scores``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import torch

from transformer_lib.i18n import N_, _
from transformer_lib.model.attention import attention_scores
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import Mistake, _generator, _passed, exercise

__all__ = ["check_softmax", "check_attention_scores"]


def _stable_exp(x: torch.Tensor, dim: int) -> torch.Tensor:
    return (x - x.max(dim, keepdim=True).values).exp()


def _softmax_naive(x: torch.Tensor, dim: int) -> torch.Tensor:
    return x.exp() / x.exp().sum(dim, keepdim=True)  # exp overflows for x > 88


SOFTMAX_MISTAKES = (
    Mistake(
        N_(
            "you normalised over the last axis whatever `dim` was; use the `dim` argument you were "
            "given in both the max and the sum."
        ),
        lambda x, dim: torch.softmax(x, -1),
    ),
    Mistake(
        N_(
            "keep the reduced axis: x.max(dim, keepdim=True) and exp.sum(dim, keepdim=True), so "
            "they broadcast back along `dim`."
        ),
        lambda x, dim: _stable_exp(x, dim) / _stable_exp(x, dim).sum(dim),
    ),
    Mistake(
        N_("divide by the sum along `dim` only (keepdim=True), not by the sum of all entries."),
        lambda x, dim: (x - x.max()).exp() / (x - x.max()).exp().sum(),
    ),
    Mistake(
        N_(
            "softmax of large values gives NaN or inf: exp overflows. Subtract the max along dim "
            "first, x - x.max(dim, keepdim=True).values; the result does not change."
        ),
        _softmax_naive,
    ),
    Mistake(
        N_(
            "subtract the max along `dim` (x.max(dim, keepdim=True).values), not the max of the "
            "whole tensor x.max(): a row far below the global max underflows to 0 / 0 = NaN."
        ),
        lambda x, dim: (x - x.max()).exp() / (x - x.max()).exp().sum(dim, keepdim=True),
    ),
)


SOFTMAX_FALLBACK = N_("Subtract the max along dim, exponentiate, divide by the sum along dim.")


@exercise(torch.softmax, SOFTMAX_MISTAKES)
def check_softmax(fn: Callable) -> None:
    """fn(x, dim) -> softmax of x along dim; stable for large inputs."""
    __tracebackhide__ = True
    g = _generator(3)
    x3, square = torch.randn(3, 4, 5, generator=g) * 3, torch.randn(4, 4, generator=g) * 3
    big = torch.randn(4, 6, generator=g) * 1000  # exp(1000) overflows float32
    cases = [(x3, -1, False), (x3, 1, False), (x3, 0, False), (square, -1, False), (big, -1, True)]
    for x, dim, large in cases:
        what = _("softmax(x, dim={dim}) (large)") if large else "softmax(x, dim={dim})"
        what = what.format(dim=dim)
        validate = functools.partial(_tensor, what=what, shape=tuple(x.shape), letters="x.shape")
        _expect(what, fn, (x, dim), torch.softmax, SOFTMAX_MISTAKES, validate, SOFTMAX_FALLBACK)
    _passed(N_("softmax: right along any dim, and stable for large inputs."))


_MATMUL_HINTS = tuple(
    (
        key,
        N_("Hint: scores = q @ k.transpose(-2, -1): (..., T, d_k) @ (..., d_k, S) -> (..., T, S)."),
    )
    for key in ("batch2", "cannot be multiplied", "must match the size")
)


def _raw(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """The unscaled q kᵀ of the mistakes (never the expected answer)."""
    return q @ k.transpose(-2, -1)  # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)


ATTENTION_SCORES_MISTAKES = (
    Mistake(
        N_("you forgot to divide by √d_k (§3.2.1): return q @ k.transpose(-2, -1) / √d_k."), _raw
    ),
    Mistake(
        N_("divide by √d_k = √q.size(-1), not by d_k itself."), lambda q, k: _raw(q, k) / q.size(-1)
    ),
    Mistake(N_("divide by √d_k, don't multiply."), lambda q, k: _raw(q, k) * q.size(-1) ** 0.5),
    Mistake(
        N_("d_k is q.size(-1); k.size(-2) is the number of keys S."),
        lambda q, k: _raw(q, k) / k.size(-2) ** 0.5,
    ),
    Mistake(
        N_(
            "transpose the keys, not the queries: q @ k.transpose(-2, -1), "
            "(..., T, d_k) @ (..., d_k, S)."
        ),
        lambda q, k: q.transpose(-2, -1) @ k / math.sqrt(q.size(-1)),
    ),
    Mistake(
        N_(
            "k.transpose(1, 2) and k.T only swap the right axes of a 3-D (B, L, d) tensor; on "
            "(B, H, S, d_k) use k.transpose(-2, -1), the last two axes."
        ),
        lambda q, k: q @ k.transpose(1, 2) / math.sqrt(q.size(-1)),
    ),
    Mistake(
        N_("k.t() only transposes 2-D matrices; use k.transpose(-2, -1) for any leading dims."),
        lambda q, k: q @ k.t() / math.sqrt(q.size(-1)),
    ),
)


def _attention_inputs(seed: int):
    g = _generator(seed)
    q = torch.randn(2, 3, 4, 8, generator=g)  # (B, H, T, d_k)
    k = torch.randn(2, 3, 5, 8, generator=g)  # (B, H, S, d_k)
    v = torch.randn(2, 3, 5, 6, generator=g)  # (B, H, S, d_v)
    mask = torch.rand(2, 1, 4, 5, generator=g) < 0.6  # (B, 1, T, S)
    mask[..., 0], mask[..., -1] = True, False  # no row fully blocked, even when inverted
    return q, k, v, mask


@exercise(attention_scores, ATTENTION_SCORES_MISTAKES)
def check_attention_scores(fn: Callable) -> None:
    """fn(q (..., T, d_k), k (..., S, d_k)) -> scores q kᵀ / √d_k of shape (..., T, S)."""
    __tracebackhide__ = True
    q, k, _, _ = _attention_inputs(4)
    validate = lambda got: _tensor(got, N_("the scores"), (2, 3, 4, 5), "(B, H, T, S)")  # noqa: E731
    mistakes, hints = ATTENTION_SCORES_MISTAKES, _MATMUL_HINTS
    _expect(N_("the scores"), fn, (q, k), attention_scores, mistakes, validate, hints=hints)
    _passed(N_("attention scores: match the library's."))
