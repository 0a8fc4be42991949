"""Notebook 03, attention: softmax, the scaled scores and scaled dot-product attention (§3.2.1)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.attention import scaled_dot_product_attention
from transformer_lib.exercises._core import (
    ExerciseFailed,
    Mistakes,
    _call,
    _diagnose,
    _generator,
    _name,
    _passed,
    _tensor,
)

__all__ = ["check_softmax", "check_attention_scores", "check_scaled_dot_product_attention"]


def check_softmax(fn: Callable) -> None:
    """fn(x, dim) -> softmax of x along dim; stable for large inputs."""
    __tracebackhide__ = True
    g = _generator(3)
    x3, square = torch.randn(3, 4, 5, generator=g) * 3, torch.randn(4, 4, generator=g) * 3
    cases = [(x3, -1), (x3, 1), (x3, 0), (square, -1)]
    hints = (("must match the size", "Hint: sum with keepdim=True so it broadcasts back."),)
    for x, dim in cases:
        got = _tensor(
            _call(fn, x, dim, hints=hints), f"softmax(x, dim={dim})", tuple(x.shape), "x.shape"
        )
        _diagnose(
            f"softmax(x, dim={dim})", got, torch.softmax(x, dim), partial(softmax_mistakes, x, dim)
        )
    big = torch.randn(4, 6, generator=g) * 1000
    got = _tensor(_call(fn, big, -1), "softmax of large values", (4, 6), "x.shape")
    if not torch.isfinite(got).all():
        raise ExerciseFailed(
            "softmax of large values gives NaN or inf: exp overflows. Subtract "
            "the max along dim first, x - x.max(dim, keepdim=True).values; "
            "the result does not change."
        )
    _diagnose("softmax of large values", got, torch.softmax(big, -1))
    _passed("softmax: right along any dim, and stable for large inputs.")


def softmax_mistakes(x: torch.Tensor, dim: int) -> Mistakes:
    """Wrong softmaxes: another dim, a sum without keepdim, the sum of all entries."""
    dim = dim % x.dim()
    exp = torch.exp(x - x.max())
    wrong = [
        (
            f"you normalised over dim={d}; use the `dim` argument you were given.",
            torch.softmax(x, dim=d),
        )
        for d in range(x.dim())
        if d != dim
    ]
    try:  # without keepdim the sum broadcasts against the *last* axis
        no_keepdim = exp / exp.sum(dim)
        wrong.append(("sum with keepdim=True so the sum broadcasts back along `dim`.", no_keepdim))
    except RuntimeError:
        pass
    wrong.append(
        (
            "divide by the sum along `dim` only (keepdim=True), not by the sum of all entries.",
            exp / exp.sum(),
        )
    )
    return wrong


_MATMUL_HINTS = tuple(
    (key, "Hint: scores = q @ k.transpose(-2, -1): (..., T, d_k) @ (..., d_k, S) -> (..., T, S).")
    for key in ("batch2", "cannot be multiplied", "must match the size")
)


def _attention_inputs(seed: int):
    g = _generator(seed)
    q = torch.randn(2, 3, 4, 8, generator=g)  # (B, H, T, d_k)
    k = torch.randn(2, 3, 5, 8, generator=g)  # (B, H, S, d_k)
    v = torch.randn(2, 3, 5, 6, generator=g)  # (B, H, S, d_v)
    mask = torch.rand(2, 1, 4, 5, generator=g) < 0.6  # (B, 1, T, S)
    mask[..., 0], mask[..., -1] = True, False  # no row fully blocked, even when inverted
    return q, k, v, mask


def check_attention_scores(fn: Callable) -> None:
    """fn(q (..., T, d_k), k (..., S, d_k)) -> scores q kᵀ / √d_k of shape (..., T, S)."""
    __tracebackhide__ = True
    q, k, _, _ = _attention_inputs(4)
    got = _tensor(_call(fn, q, k, hints=_MATMUL_HINTS), "the scores", (2, 3, 4, 5), "(B, H, T, S)")
    _diagnose(
        "the scores",
        got,
        q @ k.transpose(-2, -1) / math.sqrt(8),
        partial(attention_scores_mistakes, q, k),
    )
    _passed("attention scores: q kᵀ / √d_k.")


def attention_scores_mistakes(q: torch.Tensor, k: torch.Tensor) -> Mistakes:
    """Wrong scales of q kᵀ: none, / d_k, × √d_k, √length."""
    d_k, length = q.size(-1), k.size(-2)
    raw = q @ k.transpose(-2, -1)  # (..., T, S)
    return [
        ("you forgot to divide by √d_k (§3.2.1).", raw),
        ("divide by √d_k, the square root of d_k = q.size(-1), not by d_k itself.", raw / d_k),
        ("divide by √d_k, don't multiply.", raw * math.sqrt(d_k)),
        (
            "d_k is the last dimension q.size(-1); q.size(-2) / k.size(-2) are lengths.",
            raw / math.sqrt(length),
        ),
    ]


def _pair(got, fn) -> tuple:
    __tracebackhide__ = True
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise ExerciseFailed(
            f"{_name(fn)} must return a tuple (output, weights); got {type(got).__name__}."
        )
    return tuple(got)


def check_scaled_dot_product_attention(fn: Callable) -> None:
    """fn(q, k, v, mask=None) -> (output (..., T, d_v), weights (..., T, S))."""
    __tracebackhide__ = True
    q, k, v, mask = _attention_inputs(5)
    for m in (None, mask):
        out, weights = _pair(
            _call(fn, q, k, v, hints=_MATMUL_HINTS)
            if m is None
            else _call(fn, q, k, v, m, hints=_MATMUL_HINTS),
            fn,
        )
        if isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 3, 4, 5):
            raise ExerciseFailed(
                "return (output, weights) in this order; you returned the weights first."
            )
        when = "without a mask" if m is None else "with a mask"
        weights = _tensor(
            weights,
            f"the weights ({when})",
            (2, 3, 4, 5),
            "(B, H, T, S)",
            shape_hints={
                (2, 3, 5, 4): "Queries are rows and keys columns: scores = q @ k.transpose(-2, -1)."
            },
        )
        expected_out, expected_weights = scaled_dot_product_attention(q, k, v, m)
        _diagnose(
            f"the weights ({when})",
            weights,
            expected_weights,
            partial(attention_weights_mistakes, q, k, v, m),
            _weights_property(weights, m),
        )
        out = _tensor(
            out,
            f"the output ({when})",
            (2, 3, 4, 6),
            "(B, H, T, d_v)",
            shape_hints={
                (2, 3, 4, 8): "The output's last dimension is d_v = "
                "v.size(-1): multiply the weights by v."
            },
        )
        _diagnose(
            f"the output ({when})",
            out,
            expected_out,
            fallback="The weights are right; the output is weights @ v.",
        )
    _passed("scaled dot-product attention: output and weights match, with and without a mask.")


def _weights_property(weights: torch.Tensor, mask: torch.Tensor | None) -> str:
    """A hint from what the weights look like, when no single known mistake matches."""
    if not torch.allclose(weights.sum(-1), torch.ones(()), atol=1e-4):
        return "Each query row must sum to 1 over the keys: softmax(scores, dim=-1)."
    if mask is not None and (weights.masked_select(~mask.expand_as(weights)) != 0).any():
        return "Blocked keys (mask False) must get weight 0: fill their scores with -inf."
    return "Check the scale: scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))."


def _attention(
    q, k, v, mask=None, scale=None, dim=-1, fill=float("-inf"), after=False
) -> tuple[torch.Tensor, torch.Tensor]:
    scores = q @ k.transpose(-2, -1)  # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    scores = scores / (math.sqrt(q.size(-1)) if scale is None else scale)
    if mask is not None and not after:
        scores = scores.masked_fill(~mask, fill)
    weights = torch.softmax(scores, dim=dim)
    if mask is not None and after:
        weights = weights * mask
    return weights @ v, weights


def attention_mistakes(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> list[tuple[str, tuple[torch.Tensor, torch.Tensor]]]:
    """Wrong (output, weights) pairs: scale, softmax axis and, with a mask, its use."""
    d_k, d_v = q.size(-1), v.size(-1)
    variants: list[tuple[str, tuple[torch.Tensor, torch.Tensor]]] = [
        (
            "you forgot to divide the scores by √d_k (§3.2.1): without it softmax saturates "
            "as d_k grows.",
            _attention(q, k, v, mask, scale=1.0),
        ),
        ("divide the scores by √d_k, not by d_k.", _attention(q, k, v, mask, scale=d_k)),
        (
            "divide the scores by √d_k, don't multiply.",
            _attention(q, k, v, mask, scale=1 / math.sqrt(d_k)),
        ),
        (
            "scale by √d_k with d_k = q.size(-1), not by v's width d_v.",
            _attention(q, k, v, mask, scale=math.sqrt(d_v)),
        ),
        (
            "scale by √d_k with d_k = q.size(-1), not by a sequence length.",
            _attention(q, k, v, mask, scale=math.sqrt(k.size(-2))),
        ),
        (
            "softmax over the wrong axis: each query's weights over the keys must sum to 1, "
            "so use dim=-1 (you normalised over the queries, dim=-2).",
            _attention(q, k, v, mask, dim=-2),
        ),
    ]
    if mask is not None:
        variants += [
            (
                "your mask is inverted: True means 'may attend', so fill the scores where the "
                "mask is False: scores.masked_fill(~mask, float('-inf')).",
                _attention(q, k, v, ~mask),
            ),
            (
                "you ignored the mask: fill the scores where mask is False with -inf before "
                "the softmax.",
                _attention(q, k, v),
            ),
            (
                "apply the mask to the scores before the softmax; multiplying the weights "
                "afterwards leaves rows that no longer sum to 1.",
                _attention(q, k, v, mask, after=True),
            ),
            (
                "masked scores must be -inf (so exp gives 0), not 0.",
                _attention(q, k, v, mask, fill=0.0),
            ),
        ]
    return variants


def attention_weights_mistakes(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> Mistakes:
    """The weights of :func:`attention_mistakes`: the check compares the weights first."""
    return [(hint, weights) for hint, (_, weights) in attention_mistakes(q, k, v, mask)]
