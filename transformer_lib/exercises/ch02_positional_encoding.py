"""Notebook 02, positional encoding: the sinusoid table and its relative shift (§3.5)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.embeddings import sinusoidal_positional_encoding
from transformer_lib.exercises._core import Mistakes, _call, _diagnose, _passed, _tensor

__all__ = ["check_positional_encoding", "check_pe_relative_shift"]


def check_positional_encoding(fn: Callable) -> None:
    """fn(max_len, d_model) -> (max_len, d_model) float32: sin on even, cos on odd columns."""
    __tracebackhide__ = True
    for max_len, d_model in ((50, 16), (7, 4)):
        got = _tensor(
            _call(fn, max_len, d_model),
            "the table",
            (max_len, d_model),
            "(max_len, d_model)",
            shape_hints={(d_model, max_len): "It looks transposed: one row per position."},
        )
        _diagnose(
            "the table",
            got,
            sinusoidal_positional_encoding(max_len, d_model),
            partial(positional_encoding_mistakes, max_len, d_model),
            "PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(...).",
        )
    _passed("positional encoding: matches the paper's table (§3.5).")


def _pe(
    max_len: int,
    d_model: int,
    *,
    swap: bool = False,
    concat: bool = False,
    exponent: str = "2i",
    start: int = 0,
    multiply: bool = False,
) -> torch.Tensor:
    position = torch.arange(start, start + max_len, dtype=torch.float32)[:, None]  # (L, 1)
    if exponent == "2i":
        power = torch.arange(0, d_model, 2, dtype=torch.float32) / d_model  # (D/2,)
    else:  # "i": forgot the factor 2
        power = torch.arange(d_model // 2, dtype=torch.float32) / d_model
    frequency = 10000.0**power
    angle = position * frequency if multiply else position / frequency  # (L, D/2)
    first, second = (
        (torch.cos(angle), torch.sin(angle)) if swap else (torch.sin(angle), torch.cos(angle))
    )
    if concat:
        return torch.cat([first, second], dim=1)  # (L, D/2) + (L, D/2) -> (L, D)
    table = torch.empty(max_len, d_model)
    table[:, 0::2], table[:, 1::2] = first, second
    return table


def _pe_own_frequency(max_len: int, d_model: int) -> torch.Tensor:
    """Every column j with its own exponent j/d_model instead of sharing one per pair."""
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    angle = position / 10000.0 ** (torch.arange(d_model, dtype=torch.float32) / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, torch.sin(angle), torch.cos(angle))


def positional_encoding_mistakes(max_len: int, d_model: int) -> Mistakes:
    """Wrong tables: swapped, concatenated, exponent i, per-column frequency, ×, from 1."""
    return [
        (
            "sin and cos are swapped: even columns 2i hold sin, odd columns 2i+1 hold cos.",
            _pe(max_len, d_model, swap=True),
        ),
        (
            "that is the concatenated layout [sin | cos] (tensor2tensor); the paper interleaves: "
            "table[:, 0::2] = sin, table[:, 1::2] = cos.",
            _pe(max_len, d_model, concat=True),
        ),
        (
            "the exponent is 2i/d_model where 2i is the even column index: build it with "
            "torch.arange(0, d_model, 2), not torch.arange(d_model // 2).",
            _pe(max_len, d_model, exponent="i"),
        ),
        (
            "columns 2i and 2i+1 share one frequency 1/10000^(2i/d_model); you gave each column "
            "its own.",
            _pe_own_frequency(max_len, d_model),
        ),
        (
            "divide the position by 10000^(2i/d_model); you multiplied.",
            _pe(max_len, d_model, multiply=True),
        ),
        (
            "positions start at 0: use torch.arange(max_len), not arange(1, max_len + 1).",
            _pe(max_len, d_model, start=1),
        ),
    ]


def check_pe_relative_shift(fn: Callable) -> None:
    """fn(offset, d_model) -> M (d_model, d_model) with PE[pos + offset] == M @ PE[pos]."""
    __tracebackhide__ = True
    for offset, d_model in ((3, 8), (1, 4)):
        got = _tensor(
            _call(fn, offset, d_model), "the matrix", (d_model, d_model), "(d_model, d_model)"
        )
        expected = _pe_rotation(offset, d_model, 1.0)
        _diagnose(
            "the matrix",
            got,
            expected,
            partial(pe_shift_mistakes, offset, d_model),
            "Each (sin, cos) pair rotates by offset·ω_i: sin(a + b) = sin a cos b + "
            "cos a sin b, cos(a + b) = cos a cos b - sin a sin b.",
        )
    _passed("relative shift: PE(pos + k) is a fixed rotation of PE(pos).")


def _pe_rotation(offset: int, d_model: int, sign: float) -> torch.Tensor:
    """The block-diagonal rotation by offset·ω_i; sign -1 shifts backwards."""
    frequency = 1.0 / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    cos, sin = torch.cos(offset * frequency), torch.sin(offset * frequency)
    matrix = torch.zeros(d_model, d_model, dtype=torch.float64)
    matrix[0::2, 0::2] = torch.diag(cos)
    matrix[1::2, 1::2] = torch.diag(cos)
    matrix[0::2, 1::2] = torch.diag(sign * sin)
    matrix[1::2, 0::2] = torch.diag(-sign * sin)
    return matrix.float()


def pe_shift_mistakes(offset: int, d_model: int) -> Mistakes:
    """Wrong shift matrices: the backwards rotation, a cos-only diagonal."""
    return [
        (
            "your matrix shifts backwards, to pos - offset: flip the sign of the sin terms "
            "(or transpose each 2×2 block).",
            _pe_rotation(offset, d_model, -1.0),
        ),
        (
            "the matrix must mix each (sin, cos) pair: a diagonal of cos(offset·ω) alone is "
            "not enough, add the ±sin(offset·ω) terms.",
            torch.diag(torch.cos(offset / 10000.0 ** (torch.arange(d_model) // 2 * 2 / d_model))),
        ),
    ]
