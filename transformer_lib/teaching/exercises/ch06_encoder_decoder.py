"""Notebook 06, encoder and decoder: layer norm and the feed-forward network (§3.3).

The residual connections (§3.1, §5.4) are in :mod:`~transformer_lib.teaching.exercises.ch06_residual`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F
from torch.func import functional_call

from transformer_lib.i18n import N_
from transformer_lib.model.layers import FeedForward
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import Mistake, _generator, _passed, exercise

__all__ = ["check_layer_norm", "check_feed_forward"]


def _layer_norm(x, gamma, beta, eps=1e-5) -> torch.Tensor:
    """``nn.LayerNorm`` over the last dimension, with weight ``gamma`` and bias ``beta``."""
    return F.layer_norm(x, x.shape[-1:], gamma, beta, eps)


def _tutorial_norm(x, gamma, beta, eps, unbiased=False, std_eps=False, dim=-1) -> torch.Tensor:
    """LayerNorm as tutorials write it by hand; the flags are their usual slips."""
    mean = x.mean(dim, keepdim=True)
    var = x.var(dim, keepdim=True, unbiased=unbiased)
    scale = var.sqrt() + eps if std_eps else torch.sqrt(var + eps)
    return (x - mean) / scale * gamma + beta


LAYER_NORM_MISTAKES = (
    Mistake(
        N_(
            "unbiased variance: torch.var and torch.std divide by D-1 by default; nn.LayerNorm "
            "divides by D. Use x.var(-1, unbiased=False, keepdim=True)."
        ),
        lambda x, g, b, eps=1e-5: _tutorial_norm(x, g, b, eps, unbiased=True),
    ),
    Mistake(
        N_("eps goes inside the square root: (x - mean) / sqrt(var + eps), not / (std + eps)."),
        lambda x, g, b, eps=1e-5: _tutorial_norm(x, g, b, eps, std_eps=True),
    ),
    Mistake(
        N_(
            "two mistakes from a well-known tutorial: unbiased std and std + eps. Use "
            "(x - mean) / sqrt(var(unbiased=False) + eps)."
        ),
        lambda x, g, b, eps=1e-5: _tutorial_norm(x, g, b, eps, unbiased=True, std_eps=True),
    ),
    Mistake(
        N_(
            "normalise over the last dimension (the features of one position), not over the "
            "batch: that is BatchNorm."
        ),
        lambda x, g, b, eps=1e-5: _tutorial_norm(x, g, b, eps, dim=0),
    ),
    Mistake(
        N_(
            "normalise each position's D features on their own: mean and variance over dim=-1 "
            "only, not over the whole (L, D) sentence."
        ),
        lambda x, g, b, eps=1e-5: F.layer_norm(x, x.shape[-2:], None, None, eps) * g + b,
    ),
    Mistake(
        N_("apply the learned scale and shift after normalising: * gamma + beta."),
        lambda x, g, b, eps=1e-5: _tutorial_norm(x, 1.0, 0.0, eps),
    ),
    Mistake(
        N_("gamma and beta are swapped: gamma scales (* gamma), beta shifts (+ beta)."),
        lambda x, g, b, eps=1e-5: _tutorial_norm(x, b, g, eps),
    ),
    Mistake(
        N_("use the eps argument you were given, not a fixed 1e-5."),
        lambda x, g, b, eps=1e-5: _tutorial_norm(x, g, b, 1e-5),
    ),
    Mistake(
        N_(
            "mean and std without keepdim=True drop the last axis, so they no longer broadcast "
            "against x: use x.mean(-1, keepdim=True)."
        ),
        lambda x, g, b, eps=1e-5: (x - x.mean(-1)) / x.std(-1),
    ),
)


@exercise(_layer_norm, LAYER_NORM_MISTAKES)
def check_layer_norm(fn: Callable) -> None:
    """fn(x (..., D), gamma (D,), beta (D,), eps=1e-5) -> same as nn.LayerNorm over D."""
    __tracebackhide__ = True
    g = _generator(10)
    # rows of very different scales: tiny rows make the place of eps visible
    x = torch.randn(2, 4, 8, generator=g) * torch.tensor([3.0, 1.0, 0.01, 0.003])[:, None]
    gamma, beta = torch.randn(8, generator=g), torch.randn(8, generator=g)
    hints = (("must match the size", N_("use keepdim=True in mean and var.")),)
    for eps in (1e-5, 0.1):
        what = f"layer_norm(x, gamma, beta, eps={eps})"
        _expect(
            what,
            fn,
            (x, gamma, beta, eps),
            _layer_norm,
            LAYER_NORM_MISTAKES,
            validate=partial(_tensor, what=what, shape=(2, 4, 8), letters="x.shape"),
            fallback=N_("y = (x - mean) / sqrt(var + eps) * gamma + beta over the last dimension."),
            hints=hints,
        )
    _passed(N_("layer norm: equals nn.LayerNorm (biased variance, eps inside the root)."))


def _feed_forward(x, w1, b1, w2, b2) -> torch.Tensor:
    """The library's ``FeedForward`` (no dropout) running on the given weights."""
    with torch.device("meta"):  # only the structure: the weights are the arguments
        ffn = FeedForward(w1.size(1), w1.size(0), dropout=0.0)
    weights = {"linear1.weight": w1, "linear1.bias": b1, "linear2.weight": w2, "linear2.bias": b2}
    return functional_call(ffn, weights, (x,))


def _ffn(x, w1, b1, w2, b2, activation=torch.relu) -> torch.Tensor:
    return activation(x @ w1.T + b1) @ w2.T + b2


FEED_FORWARD_MISTAKES = (
    Mistake(
        N_("apply ReLU between the two linear maps: FFN(x) = max(0, x W1 + b1) W2 + b2."),
        lambda x, w1, b1, w2, b2: (x @ w1.T + b1) @ w2.T + b2,
    ),
    Mistake(
        N_("no activation after the second linear map: ReLU only on the inner layer."),
        lambda x, w1, b1, w2, b2: torch.relu(_ffn(x, w1, b1, w2, b2)),
    ),
    Mistake(
        N_("the paper uses ReLU, not GELU (§3.3)."),
        lambda x, w1, b1, w2, b2: _ffn(x, w1, b1, w2, b2, activation=F.gelu),
    ),
    Mistake(
        N_(
            "nn.Linear stores its weight as (out_features, in_features): use x @ w1.T + b1, or "
            "F.linear(x, w1, b1)."
        ),
        lambda x, w1, b1, w2, b2: torch.relu(x @ w1 + b1) @ w2 + b2,
    ),
    Mistake(
        N_(
            "the FFN has no LayerNorm of its own: remove the norm on its input. Normalising "
            "belongs to the residual connection around the sub-layer (§3.1)."
        ),
        lambda x, w1, b1, w2, b2: _ffn(F.layer_norm(x, x.shape[-1:]), w1, b1, w2, b2),
    ),
    Mistake(
        N_(
            "the residual sum and the LayerNorm belong to the connection around the sub-layer "
            "(§3.1), not inside it: return only max(0, x W1 + b1) W2 + b2."
        ),
        lambda x, w1, b1, w2, b2: F.layer_norm(x + _ffn(x, w1, b1, w2, b2), x.shape[-1:]),
    ),
    Mistake(
        N_(
            "remove the dropout: this FFN has none, and F.dropout defaults to training=True, so "
            "it drops entries even when the model is evaluated. (The library's FeedForward uses "
            "an nn.Dropout module, which model.eval() switches off.)"
        ),
        lambda x, w1, b1, w2, b2: F.dropout(torch.relu(x @ w1.T + b1), 0.1) @ w2.T + b2,
    ),
)


@exercise(_feed_forward, FEED_FORWARD_MISTAKES)
def check_feed_forward(fn: Callable) -> None:
    """fn(x (B, L, D), w1 (d_ff, D), b1 (d_ff,), w2 (D, d_ff), b2 (D,)) -> (B, L, D)."""
    __tracebackhide__ = True
    g = _generator(11)
    x = torch.randn(2, 3, 8, generator=g)
    w1, b1 = torch.randn(16, 8, generator=g), torch.randn(16, generator=g)
    w2, b2 = torch.randn(8, 16, generator=g), torch.randn(8, generator=g)
    hints = (
        (
            "cannot be multiplied",
            N_(
                "nn.Linear stores weight as (out_features, in_features): use x @ w1.T + b1, "
                "or F.linear(x, w1, b1)."
            ),
        ),
    )
    what = N_("the output")
    _expect(
        what,
        fn,
        (x, w1, b1, w2, b2),
        _feed_forward,
        FEED_FORWARD_MISTAKES,
        validate=partial(_tensor, what=what, shape=(2, 3, 8), letters="(B, L, D)"),
        fallback=N_("FFN(x) = max(0, x W1ᵀ + b1) W2ᵀ + b2 with nn.Linear's weight layout."),
        hints=hints,
    )
    _passed(N_("feed-forward: two linear maps with a ReLU between them, at every position (§3.3)."))
