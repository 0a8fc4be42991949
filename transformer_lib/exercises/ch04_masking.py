"""Notebook 04, masking: the causal, padding and target masks (bool, True = may attend)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.exercises._core import (
    ExerciseFailed,
    Mistakes,
    _call,
    _diagnose,
    _generator,
    _passed,
    _same,
    _tensor,
)

__all__ = ["check_causal_mask", "check_padding_mask", "check_target_mask"]


def _bool_mask(
    got,
    what: str,
    expected: torch.Tensor,
    shapes: tuple,
    letters: str,
    shape_hints: dict | None = None,
) -> torch.Tensor:
    """Accept any of ``shapes``; name a float or additive mask; return a bool tensor."""
    __tracebackhide__ = True
    if isinstance(got, torch.Tensor) and tuple(got.shape) in shapes[1:]:
        got = got.reshape(shapes[0])
    got = _tensor(got, what, shapes[0], letters, dtype=None, shape_hints=shape_hints)
    if got.dtype != torch.bool:
        if _same(got, expected.float()):
            raise ExerciseFailed(
                f"{what}: the pattern is right but the dtype is {got.dtype}; "
                "masks are torch.bool (use .bool() or dtype=torch.bool)."
            )
        if torch.isinf(got.double()).any():
            raise ExerciseFailed(
                f"{what}: that is an additive float mask (0 / -inf, the "
                "nn.Transformer convention); here masks are torch.bool, "
                "True = may attend."
            )
        raise ExerciseFailed(f"wrong dtype: {what} must be torch.bool; got {got.dtype}.")
    return got


def check_causal_mask(fn: Callable) -> None:
    """fn(T) -> bool mask (T, T) or (1, 1, T, T), True where query t may see key s (s <= t)."""
    __tracebackhide__ = True
    for size in (5, 1):
        expected = torch.tril(torch.ones(size, size, dtype=torch.bool))
        shapes = ((size, size), (1, size, size), (1, 1, size, size))
        got = _bool_mask(_call(fn, size), f"causal_mask({size})", expected, shapes, "(T, T)")
        _diagnose(f"causal_mask({size})", got, expected, partial(causal_mask_mistakes, size))
    _passed("causal mask: each position sees itself and the past, never the future.")


def causal_mask_mistakes(size: int) -> Mistakes:
    """Wrong causal masks: inverted, diagonal excluded, upper triangle, nothing masked."""
    ones = torch.ones(size, size, dtype=torch.bool)
    return [
        (
            "your mask is inverted: True must mean 'may attend', so the lower triangle "
            "(the past and the position itself) is True.",
            ~torch.tril(ones),
        ),
        (
            "diagonal excluded: a position may attend to itself, so keep the diagonal: "
            "torch.tril(ones) (diagonal=0), not tril(ones, diagonal=-1).",
            torch.tril(ones, -1),
        ),
        (
            "that is the upper triangle: position t would see the future. Use torch.tril.",
            torch.triu(ones),
        ),
        ("nothing is masked: position t must not see positions after t.", ones),
    ]


def _padded_tokens(seed: int, pad_id: int = 0) -> torch.Tensor:
    """(3, 6) ids with rows of length 3, 5 and 6; id 0 is a real token when pad_id != 0."""
    g = _generator(seed)
    tokens = torch.randint(4, 20, (3, 6), generator=g)
    tokens[0, 3:], tokens[1, 5:] = pad_id, pad_id
    if pad_id:
        tokens[2, 0] = 0
    return tokens


def check_padding_mask(fn: Callable) -> None:
    """fn(tokens (B, S), pad_id) -> bool (B, 1, 1, S), True at real (non-pad) tokens."""
    __tracebackhide__ = True
    missing_axes = "Add the head and query axes: mask[:, None, None, :] -> (B, 1, 1, S)."
    keys_last = "Padding masks keys: the S axis goes last, (B, 1, 1, S)."
    shape_hints = {
        (3, 6): missing_axes,
        (3, 1, 6): missing_axes,
        (3, 6, 1, 1): keys_last,
        (3, 1, 6, 1): keys_last,
    }
    for pad_id in (0, 3):
        tokens = _padded_tokens(6, pad_id)
        expected = (tokens != pad_id)[:, None, None, :]  # (B, S) -> (B, 1, 1, S)
        what = f"padding_mask(tokens, pad_id={pad_id})"
        got = _bool_mask(
            _call(fn, tokens, pad_id), what, expected, ((3, 1, 1, 6),), "(B, 1, 1, S)", shape_hints
        )
        _diagnose(what, got, expected, partial(padding_mask_mistakes, tokens, pad_id))
    _passed("padding mask: real tokens True, <pad> False, shaped (B, 1, 1, S).")


def padding_mask_mistakes(tokens: torch.Tensor, pad_id: int) -> Mistakes:
    """Wrong padding masks: inverted, hard-coded pad 0, queries masked instead of keys."""
    key_mask = tokens != pad_id  # (B, S)
    return [
        (
            "your mask is inverted: True must mean 'may attend', i.e. tokens != pad_id.",
            (tokens == pad_id)[:, None, None, :],
        ),
        ("use the pad_id argument, not a hard-coded 0.", (tokens != 0)[:, None, None, :]),
        (
            "padding is a property of the keys: the S axis goes last, (B, 1, 1, S), so it masks "
            "columns of the (T, S) scores.",
            key_mask[:, None, :, None],
        ),
    ]


def check_target_mask(fn: Callable) -> None:
    """fn(tgt (B, T), pad_id) -> bool (B, 1, T, T): causal AND not padding (keys)."""
    __tracebackhide__ = True
    tgt = _padded_tokens(7)
    causal = torch.tril(torch.ones(6, 6, dtype=torch.bool))[None, None]  # (1, 1, T, T)
    expected = (tgt != 0)[:, None, None, :] & causal  # (B, 1, 1, T) & (1, 1, T, T)
    shape_hints = {
        (1, 1, 6, 6): "That is the causal mask alone; combine it with the padding mask "
        "(B, 1, 1, T) using & -> (B, 1, T, T).",
        (3, 1, 1, 6): "That is the padding mask alone; combine it with the causal mask "
        "(1, 1, T, T) using & -> (B, 1, T, T).",
        (3, 6, 6): "Keep the head axis: (B, 1, T, T).",
    }
    got = _bool_mask(
        _call(fn, tgt, 0),
        "target_mask(tgt, 0)",
        expected,
        ((3, 1, 6, 6),),
        "(B, 1, T, T)",
        shape_hints,
    )
    _diagnose("target_mask(tgt, 0)", got, expected, partial(target_mask_mistakes, tgt, 0))
    _passed("target mask: causal AND padding, shaped (B, 1, T, T).")


def target_mask_mistakes(tgt: torch.Tensor, pad_id: int) -> Mistakes:
    """Wrong target masks: causal only, padding only, OR, padded query rows masked."""
    T = tgt.size(1)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]  # (1, 1, T, T)
    keys = (tgt != pad_id)[:, None, None, :]  # (B, 1, 1, T)
    queries = (tgt != pad_id)[:, None, :, None]  # (B, 1, T, 1)
    shape = (tgt.size(0), 1, T, T)
    return [
        (
            "only the causal part: also block the padded keys (AND with the padding mask).",
            causal.expand(shape),
        ),
        (
            "only the padding part: also block the future (AND with the causal mask).",
            keys.expand(shape),
        ),
        (
            "combine with AND (&): a key must be both in the past and not padding; OR lets "
            "too much through.",
            (causal | keys).expand(shape),
        ),
        (
            "mask padded keys (columns), not padded queries (rows): padding_mask goes to "
            "(B, 1, 1, T).",
            (causal & queries).expand(shape),
        ),
        (
            "mask only the padded keys: masking the padded query rows too leaves fully masked "
            "rows (NaN after softmax).",
            (causal & keys & queries).expand(shape),
        ),
    ]
