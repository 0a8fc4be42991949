"""Notebook 06, encoder and decoder: layer norm, the feed-forward network (§3.3) and the
residual connection with post- or pre-norm (§3.1)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from transformer_lib.exercises._core import Mistakes, _call, _diagnose, _generator, _passed, _tensor

__all__ = [
    "check_layer_norm",
    "check_feed_forward",
    "check_residual_post_norm",
    "check_residual_pre_norm",
]


def check_layer_norm(fn: Callable) -> None:
    """fn(x (..., D), gamma (D,), beta (D,), eps=1e-5) -> same as nn.LayerNorm over D."""
    __tracebackhide__ = True
    g = _generator(10)
    # rows of very different scales: tiny rows make the place of eps visible
    x = torch.randn(2, 4, 8, generator=g) * torch.tensor([3.0, 1.0, 0.01, 0.003])[:, None]
    gamma, beta = torch.randn(8, generator=g), torch.randn(8, generator=g)
    hints = (("must match the size", "Hint: use keepdim=True in mean and var."),)
    for eps in (1e-5, 0.1):
        what = f"layer_norm(x, gamma, beta, eps={eps})"
        got = _tensor(_call(fn, x, gamma, beta, eps, hints=hints), what, (2, 4, 8), "x.shape")
        _diagnose(
            what,
            got,
            F.layer_norm(x, (8,), gamma, beta, eps),
            partial(layer_norm_mistakes, x, gamma, beta, eps),
            "y = (x - mean) / sqrt(var + eps) * gamma + beta over the last dimension.",
        )
    _passed("layer norm: equals nn.LayerNorm (biased variance, eps inside the root).")


def _layer_norm(
    x, gamma, beta, eps, unbiased=False, std_eps=False, dim=-1, affine=True
) -> torch.Tensor:
    mean = x.mean(dim, keepdim=True)
    var = x.var(dim, keepdim=True, unbiased=unbiased)
    scale = var.sqrt() + eps if std_eps else torch.sqrt(var + eps)
    normed = (x - mean) / scale
    return normed * gamma + beta if affine else normed


def layer_norm_mistakes(
    x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float
) -> Mistakes:
    """Wrong layer norms: unbiased variance, std + eps, both, batch axis, no affine, eps."""
    return [
        (
            "unbiased variance: torch.var and torch.std divide by D-1 by default; nn.LayerNorm "
            "divides by D. Use x.var(-1, unbiased=False, keepdim=True).",
            _layer_norm(x, gamma, beta, eps, unbiased=True),
        ),
        (
            "eps goes inside the square root: (x - mean) / sqrt(var + eps), not / (std + eps).",
            _layer_norm(x, gamma, beta, eps, std_eps=True),
        ),
        (
            "two mistakes from a well-known tutorial: unbiased std and std + eps. Use "
            "(x - mean) / sqrt(var(unbiased=False) + eps).",
            _layer_norm(x, gamma, beta, eps, unbiased=True, std_eps=True),
        ),
        (
            "normalise over the last dimension (the features of one position), not over the "
            "batch: that is BatchNorm.",
            _layer_norm(x, gamma, beta, eps, dim=0),
        ),
        (
            "apply the learned scale and shift after normalising: * gamma + beta.",
            _layer_norm(x, gamma, beta, eps, affine=False),
        ),
        (
            "use the eps argument you were given, not a fixed 1e-5.",
            _layer_norm(x, gamma, beta, 1e-5),
        ),
    ]


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
            "Hint: nn.Linear stores weight as (out_features, "
            "in_features): use x @ w1.T + b1, or F.linear(x, w1, b1).",
        ),
    )
    got = _tensor(_call(fn, x, w1, b1, w2, b2, hints=hints), "the output", (2, 3, 8), "(B, L, D)")
    expected = F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)
    _diagnose(
        "the output",
        got,
        expected,
        partial(feed_forward_mistakes, x, w1, b1, w2, b2),
        "FFN(x) = max(0, x W1ᵀ + b1) W2ᵀ + b2 with nn.Linear's weight layout.",
    )
    _passed("feed-forward: max(0, x W1 + b1) W2 + b2 (§3.3).")


def feed_forward_mistakes(
    x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, b2: torch.Tensor
) -> Mistakes:
    """Wrong feed-forward networks: no ReLU, ReLU at the end too, GELU."""
    return [
        (
            "apply ReLU between the two linear maps: FFN(x) = max(0, x W1 + b1) W2 + b2.",
            F.linear(F.linear(x, w1, b1), w2, b2),
        ),
        (
            "no activation after the second linear map: ReLU only on the inner layer.",
            torch.relu(F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)),
        ),
        ("the paper uses ReLU, not GELU (§3.3).", F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)),
    ]


def _residual_inputs(seed: int):
    g = _generator(seed)
    x = torch.randn(2, 3, 8, generator=g) * 2 + 1
    w, b = torch.randn(8, 8, generator=g) / 3, torch.randn(8, generator=g)
    gamma, beta = torch.rand(8, generator=g) + 0.5, torch.randn(8, generator=g)

    def sublayer(h: torch.Tensor) -> torch.Tensor:
        return F.linear(h, w, b)

    def norm(h: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(h, (8,), gamma, beta)

    return x, sublayer, norm


def check_residual_post_norm(fn: Callable) -> None:
    """fn(x (B, L, D), sublayer, norm) -> norm(x + sublayer(x)), the paper's order (§3.1)."""
    __tracebackhide__ = True
    x, sublayer, norm = _residual_inputs(12)
    got = _tensor(_call(fn, x, sublayer, norm), "the output", (2, 3, 8), "(B, L, D)")
    _diagnose(
        "the output",
        got,
        norm(x + sublayer(x)),
        partial(residual_post_norm_mistakes, x, sublayer, norm),
    )
    _passed("post-norm residual: LayerNorm(x + Sublayer(x)).")


def residual_post_norm_mistakes(x: torch.Tensor, sublayer: Callable, norm: Callable) -> Mistakes:
    """Wrong post-norm residuals: pre-norm, no residual, no norm, norm on the sub-layer only."""
    return [
        (
            "that is pre-norm, x + Sublayer(LayerNorm(x)); the paper's post-norm is "
            "LayerNorm(x + Sublayer(x)) (§3.1).",
            x + sublayer(norm(x)),
        ),
        ("you forgot the residual connection: add x before the norm.", norm(sublayer(x))),
        ("apply the LayerNorm after the sum.", x + sublayer(x)),
        (
            "normalise the sum x + Sublayer(x), not only the sub-layer's output.",
            x + norm(sublayer(x)),
        ),
    ]


def check_residual_pre_norm(fn: Callable) -> None:
    """fn(x (B, L, D), sublayer, norm) -> x + sublayer(norm(x))."""
    __tracebackhide__ = True
    x, sublayer, norm = _residual_inputs(13)
    got = _tensor(_call(fn, x, sublayer, norm), "the output", (2, 3, 8), "(B, L, D)")
    _diagnose(
        "the output",
        got,
        x + sublayer(norm(x)),
        partial(residual_pre_norm_mistakes, x, sublayer, norm),
    )
    _passed("pre-norm residual: x + Sublayer(LayerNorm(x)).")


def residual_pre_norm_mistakes(x: torch.Tensor, sublayer: Callable, norm: Callable) -> Mistakes:
    """Wrong pre-norm residuals: post-norm, no residual, normalised x added, norm misplaced."""
    return [
        (
            "that is post-norm, LayerNorm(x + Sublayer(x)); pre-norm is "
            "x + Sublayer(LayerNorm(x)).",
            norm(x + sublayer(x)),
        ),
        ("you forgot the residual connection: add x to the sub-layer's output.", sublayer(norm(x))),
        (
            "add the un-normalised x: x + Sublayer(LayerNorm(x)), not LayerNorm(x) + ...",
            norm(x) + sublayer(norm(x)),
        ),
        ("apply the LayerNorm to the sub-layer's input, before the sub-layer.", x + sublayer(x)),
    ]
