"""Notebook 05, multi-head attention: splitting and merging heads, counting parameters (§3.2.2)."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.exercises._core import (
    TRANSPOSE_HINT,
    ExerciseFailed,
    Mistakes,
    _call,
    _diagnose,
    _generator,
    _passed,
    _tensor,
)

__all__ = ["check_split_heads", "check_merge_heads", "check_mha_parameter_count"]


def check_split_heads(fn: Callable) -> None:
    """fn(x (B, L, D), n_heads) -> (B, H, L, Dh) with Dh = D / H."""
    __tracebackhide__ = True
    x = torch.randn(2, 5, 12, generator=_generator(8))
    for n_heads in (3, 4):
        Dh = 12 // n_heads
        got = _tensor(
            _call(fn, x, n_heads),
            f"split_heads(x, n_heads={n_heads})",
            (2, n_heads, 5, Dh),
            "(B, H, L, Dh)",
            shape_hints={
                (2, 5, n_heads, Dh): "You forgot .transpose(1, 2): (B, L, H, Dh) -> (B, H, L, Dh)."
            },
        )
        expected = x.view(2, 5, n_heads, Dh).transpose(1, 2)  # (B, L, H, Dh) -> (B, H, L, Dh)
        _diagnose(
            f"split_heads(x, n_heads={n_heads})",
            got,
            expected,
            partial(split_heads_mistakes, x, n_heads),
        )
    _passed("split heads: x.view(B, L, H, Dh).transpose(1, 2).")


def split_heads_mistakes(x: torch.Tensor, n_heads: int) -> Mistakes:
    """Wrong splits: view(B, H, L, Dh) without transpose, features cut in (Dh, H) order."""
    B, L, D = x.shape
    Dh = D // n_heads
    return [
        (
            "heads split with the wrong view: x.view(B, n_heads, L, Dh) mixes positions. Cut "
            "each position's D features into heads first, x.view(B, L, n_heads, Dh), then "
            ".transpose(1, 2).",
            x.reshape(B, n_heads, L, Dh),
        ),
        (
            "features cut in the wrong order: view(B, L, n_heads, Dh) gives head h the "
            "contiguous slice h*Dh:(h+1)*Dh; view(B, L, Dh, n_heads) interleaves them.",
            x.reshape(B, L, Dh, n_heads).permute(0, 3, 1, 2),
        ),
    ]


def check_merge_heads(fn: Callable) -> None:
    """fn(x (B, H, L, Dh)) -> (B, L, D) with D = H * Dh: the inverse of split_heads."""
    __tracebackhide__ = True
    x = torch.randn(2, 3, 5, 4, generator=_generator(9))
    got = _tensor(
        _call(fn, x, hints=(("view size", TRANSPOSE_HINT),)),
        "merge_heads(x)",
        (2, 5, 12),
        "(B, L, D)",
        shape_hints={(2, 5, 3, 4): "Now reshape (B, L, H, Dh) to (B, L, H * Dh)."},
    )
    expected = x.transpose(1, 2).reshape(2, 5, 12)  # (B, H, L, Dh) -> (B, L, D)
    _diagnose("merge_heads(x)", got, expected, partial(merge_heads_mistakes, x))
    _passed("merge heads: x.transpose(1, 2).reshape(B, L, D).")


def merge_heads_mistakes(x: torch.Tensor) -> Mistakes:
    """Wrong merges: reshape without transpose, features ordered (Dh, H)."""
    B, H, L, Dh = x.shape
    return [
        (
            "transpose(1, 2) back to (B, L, H, Dh) before reshaping to (B, L, D); reshaping "
            "(B, H, L, Dh) directly mixes positions.",
            x.reshape(B, L, H * Dh),
        ),
        (
            "concatenate head after head: the D features must be ordered (H, Dh), i.e. "
            "x.transpose(1, 2).reshape(B, L, D).",
            x.permute(0, 2, 3, 1).reshape(B, L, H * Dh),
        ),
    ]


def check_mha_parameter_count(fn: Callable) -> None:
    """fn(d_model, n_heads) -> int: parameters of MultiHeadAttention with biases."""
    __tracebackhide__ = True
    for d_model, n_heads in ((512, 8), (128, 4)):
        got = _call(fn, d_model, n_heads)
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = got.item()
        if not isinstance(got, numbers.Integral) or isinstance(got, bool):
            raise ExerciseFailed(f"return an int; got {type(got).__name__} {got!r}.")
        expected = 4 * (d_model * d_model + d_model)
        if got != expected:
            hint = next(
                (h for h, n in mha_parameter_count_mistakes(d_model, n_heads) if n == got),
                "Count weights and biases of W^Q, W^K, W^V and W^O.",
            )
            raise ExerciseFailed(
                f"for d_model={d_model}, n_heads={n_heads} you counted {got:,}"
                f"; expected {expected:,}. {hint}"
            )
    _passed("parameter count: 4 (D² + D), whatever the number of heads.")


def mha_parameter_count_mistakes(d_model: int, n_heads: int) -> list[tuple[str, int]]:
    """Wrong counts: no biases, no W^O, × n_heads."""
    D = d_model
    return [
        ("count the biases too: each of the 4 nn.Linear(D, D) layers has D of them.", 4 * D * D),
        ("there are 4 projections: W^Q, W^K, W^V and the output W^O.", 3 * (D * D + D)),
        (
            "the heads share the D×D matrices: H heads of width D/H together have D×D per "
            "projection, so n_heads does not change the count.",
            n_heads * 4 * (D * D + D),
        ),
    ]
