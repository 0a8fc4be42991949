"""Notebook 05, multi-head attention: splitting and merging heads, counting parameters (§3.2.2).

The whole layer, checked against ``nn.MultiheadAttention``, is in
:mod:`~transformer_lib.teaching.exercises.ch05_attention_layer`.
"""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.i18n import N_, _
from transformer_lib.model.attention import MultiHeadAttention
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import (
    ExerciseFailed,
    Mistake,
    _generator,
    _passed,
    exercise,
)

__all__ = ["check_split_heads", "check_merge_heads", "check_mha_parameter_count"]


def _library_layer(d_model: int, n_heads: int) -> MultiHeadAttention:
    """The library's layer on the meta device: its shapes and methods, no weights to draw."""
    with torch.device("meta"):
        return MultiHeadAttention(d_model, n_heads)


def _split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """The library's ``MultiHeadAttention.split_heads``: (B, L, D) -> (B, H, L, Dh)."""
    return _library_layer(x.size(-1), n_heads).split_heads(x)


def _merge_heads(x: torch.Tensor) -> torch.Tensor:
    """The library's ``MultiHeadAttention.merge_heads``: (B, H, L, Dh) -> (B, L, D)."""
    B, H, L, Dh = x.shape
    return _library_layer(H * Dh, H).merge_heads(x)


def _parameter_count(d_model: int, n_heads: int) -> int:
    """The number of parameters of the library's ``MultiHeadAttention(d_model, n_heads)``."""
    return sum(p.numel() for p in _library_layer(d_model, n_heads).parameters())


SPLIT_HEADS_MISTAKES = (
    Mistake(
        N_(
            "heads split with the wrong view: x.view(B, n_heads, L, Dh) has the right shape but "
            "mixes positions. Cut each position's D features into heads first, "
            "x.view(B, L, n_heads, Dh), then .transpose(1, 2)."
        ),
        lambda x, h: x.view(x.size(0), h, x.size(1), -1),
    ),
    Mistake(
        N_(
            "you forgot .transpose(1, 2): x.view(B, L, n_heads, Dh) is (B, L, H, Dh); the head "
            "axis must come second, (B, H, L, Dh)."
        ),
        lambda x, h: x.view(x.size(0), x.size(1), h, -1),
    ),
    Mistake(
        N_(
            "features cut in the wrong order: view(B, L, n_heads, Dh) gives head h the contiguous "
            "slice h*Dh:(h+1)*Dh; view(B, L, Dh, n_heads) interleaves the heads."
        ),
        lambda x, h: x.view(*x.shape[:2], -1, h).permute(0, 3, 1, 2),
    ),
    Mistake(
        N_(
            "that is (B, H, Dh, L), the layout of Kᵀ: split_heads returns (B, H, L, Dh); use "
            ".transpose(1, 2) and leave the last two axes in place."
        ),
        lambda x, h: x.view(x.size(0), x.size(1), h, -1).permute(0, 2, 3, 1),
    ),
)


@exercise(_split_heads, SPLIT_HEADS_MISTAKES)
def check_split_heads(fn: Callable) -> None:
    """fn(x (B, L, D), n_heads) -> (B, H, L, Dh) with Dh = D / H."""
    __tracebackhide__ = True
    x = torch.randn(2, 5, 12, generator=_generator(8))
    for n_heads in (3, 4):
        what = f"split_heads(x, n_heads={n_heads})"
        _expect(
            what,
            fn,
            (x, n_heads),
            _split_heads,
            SPLIT_HEADS_MISTAKES,
            validate=partial(
                _tensor, what=what, shape=(2, n_heads, 5, 12 // n_heads), letters="(B, H, L, Dh)"
            ),
            fallback=N_("Head h must hold features h*Dh:(h+1)*Dh of every position."),
        )
    _passed(N_("split heads: each head holds its own slice of every position's features."))


MERGE_HEADS_MISTAKES = (
    Mistake(
        N_(
            "transpose(1, 2) back to (B, L, H, Dh) before reshaping to (B, L, D); reshaping "
            "(B, H, L, Dh) directly mixes positions."
        ),
        lambda x: x.reshape(x.size(0), x.size(2), -1),
    ),
    Mistake(
        N_(
            "after .transpose() a tensor is not contiguous, so .view(...) refuses: use "
            ".reshape(B, L, D) (or .contiguous().view(B, L, D))."
        ),
        lambda x: x.transpose(1, 2).view(x.size(0), x.size(2), -1),
    ),
    Mistake(
        N_(
            "concatenate head after head: the D features must be ordered (H, Dh), i.e. "
            "x.transpose(1, 2).reshape(B, L, D), not (Dh, H)."
        ),
        lambda x: x.permute(0, 2, 3, 1).reshape(x.size(0), x.size(2), -1),
    ),
    Mistake(
        N_("that is (B, L, H, Dh): now flatten the last two axes, .reshape(B, L, H * Dh)."),
        lambda x: x.transpose(1, 2),
    ),
)


@exercise(_merge_heads, MERGE_HEADS_MISTAKES)
def check_merge_heads(fn: Callable) -> None:
    """fn(x (B, H, L, Dh)) -> (B, L, D) with D = H * Dh: the inverse of split_heads."""
    __tracebackhide__ = True
    x = torch.randn(2, 3, 5, 4, generator=_generator(9))
    _expect(
        "merge_heads(x)",
        fn,
        (x,),
        _merge_heads,
        MERGE_HEADS_MISTAKES,
        validate=partial(_tensor, what="merge_heads(x)", shape=(2, 5, 12), letters="(B, L, D)"),
        fallback=N_("The heads must come back side by side: features h*Dh:(h+1)*Dh are head h."),
    )
    _passed(N_("merge heads: the heads concatenated feature-wise, the inverse of the split."))


def _one_head(d: int, h: int) -> int:
    return 4 * (d * (d // h) + d // h)  # W^Q, W^K, W^V, W^O as if one head had them all


MHA_PARAMETER_COUNT_MISTAKES = (
    Mistake(
        N_("count the biases too: each of the 4 nn.Linear(D, D) layers has D of them."),
        lambda d, h: 4 * d * d,
    ),
    Mistake(
        N_("there are 4 projections: W^Q, W^K, W^V and the output W^O."),
        lambda d, h: 3 * (d * d + d),
    ),
    Mistake(
        N_(
            "the heads share the D×D matrices: H heads of width D/H together have D×D per "
            "projection, so n_heads does not change the count."
        ),
        lambda d, h: h * 4 * (d * d + d),
    ),
    Mistake(
        N_(
            "that is one head's share (D × D/H per projection): the H heads together fill D × D, "
            "so multiply back by n_heads."
        ),
        _one_head,
    ),
    Mistake(
        N_("return an int: a parameter count is a whole number (use // or int(...), not /)."),
        lambda d, h: 4.0 * (d * d + d),
    ),
)


_NO_BIASES = N_("The biases are missing: each of the 4 nn.Linear(D, D) layers has D of them.")
_NO_W_O = N_("W^O is missing: there are 4 projections, W^Q, W^K, W^V and the output W^O.")
_ADDED_NORM = N_(
    "You added a LayerNorm's 2·D parameters (gamma and beta): multi-head attention has none; "
    "the norm belongs to the residual connection around it (§3.1)."
)


def _wrong_parts(got: int, d: int) -> list[str]:
    """The hints for what the count ``got`` left out or added, if it is the right count
    without the biases, without W^O or with a LayerNorm, or several of these; else []."""
    for no_biases, no_w_o, norm in itertools.product((False, True), repeat=3):
        projections = 3 if no_w_o else 4
        count = projections * (d * d + (0 if no_biases else d)) + (2 * d if norm else 0)
        if count == got:
            wrong = (no_biases, no_w_o, norm)
            return [hint for hint, on in zip((_NO_BIASES, _NO_W_O, _ADDED_NORM), wrong) if on]
    return []


def _count(got, expected: int, d_model: int, what: str):
    """Explain a wrong count: not an int, the parts left out or added, or another number."""
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        raise ExerciseFailed(
            _("{what}: return a Python int; call .item() on your tensor.").format(what=what)
        )
    if not isinstance(got, numbers.Integral) or isinstance(got, bool):
        raise ExerciseFailed(
            _("{what}: return an int; got {type} {value}.").format(
                what=what, type=type(got).__name__, value=repr(got)
            )
        )
    hints = " ".join(_(hint) for hint in _wrong_parts(got, d_model))
    hints = hints or _("Count the weights and biases of W^Q, W^K, W^V and W^O.")
    raise ExerciseFailed(
        _("{what}: you counted {got}; expected {expected}. {hints}").format(
            what=what, got=f"{got:,}", expected=f"{expected:,}", hints=hints
        )
    )


@exercise(_parameter_count, MHA_PARAMETER_COUNT_MISTAKES)
def check_mha_parameter_count(fn: Callable) -> None:
    """fn(d_model, n_heads) -> int: parameters of MultiHeadAttention with biases."""
    __tracebackhide__ = True
    for d_model, n_heads in ((512, 8), (128, 4)):
        what = _("for d_model={d_model}, n_heads={n_heads}").format(
            d_model=d_model, n_heads=n_heads
        )
        _expect(
            what,
            fn,
            (d_model, n_heads),
            _parameter_count,
            MHA_PARAMETER_COUNT_MISTAKES,
            validate=partial(
                _count, expected=_parameter_count(d_model, n_heads), d_model=d_model, what=what
            ),
        )
    _passed(N_("parameter count: right, and the same for any number of heads."))
