"""Notebook 02, positional encoding: the sinusoid table and its relative shift (§3.5)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.i18n import N_
from transformer_lib.model.embeddings import sinusoidal_positional_encoding
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import Mistake, _passed, exercise

__all__ = ["check_positional_encoding", "check_pe_relative_shift"]


def _pe(
    max_len: int,
    d_model: int,
    *,
    swap: bool = False,
    concat: bool = False,
    two_i: bool = True,
    start: int = 0,
    multiply: bool = False,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """A table the way tutorial code builds it, with one of the usual slips switched on."""
    position = torch.arange(start, start + max_len, dtype=dtype)[:, None]  # (L, 1)
    index = torch.arange(0, d_model, 2) if two_i else torch.arange(d_model // 2)  # (D/2,)
    frequency = 10000.0 ** (index.to(dtype) / d_model)
    angle = position * frequency if multiply else position / frequency  # (L, D/2)
    first, second = (angle.cos(), angle.sin()) if swap else (angle.sin(), angle.cos())
    if concat:
        return torch.cat([first, second], dim=1)  # (L, D/2) + (L, D/2) -> (L, D)
    return torch.stack([first, second], dim=-1).reshape(max_len, d_model)  # interleaved


def _pe_own_frequency(max_len: int, d_model: int) -> torch.Tensor:
    """Every column j with its own exponent j/d_model instead of sharing one per pair."""
    position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (L, 1)
    angle = position / 10000.0 ** (torch.arange(d_model, dtype=torch.float32) / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, torch.sin(angle), torch.cos(angle))


def _pe_tensor2tensor(max_len: int, d_model: int) -> torch.Tensor:
    """tensor2tensor's get_timing_signal_1d: exponent i / (d_model/2 - 1), [sin | cos]."""
    half = d_model // 2
    position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (L, 1)
    increment = math.log(10000.0) / (half - 1)
    angle = position * torch.exp(-increment * torch.arange(half, dtype=torch.float32))
    return torch.cat([angle.sin(), angle.cos()], dim=1)  # (L, D/2) + (L, D/2) -> (L, D)


POSITIONAL_ENCODING_MISTAKES = (
    Mistake(
        N_("sin and cos are swapped: even columns 2i hold sin, odd columns 2i+1 hold cos."),
        partial(_pe, swap=True),
    ),
    Mistake(
        N_(
            "that is the concatenated layout [sin | cos]; the paper interleaves: "
            "table[:, 0::2] = sin, table[:, 1::2] = cos."
        ),
        partial(_pe, concat=True),
    ),
    Mistake(
        N_(
            "that is tensor2tensor's table: concatenated [sin | cos] and exponent i/(d_model/2 - 1). "
            "The paper interleaves (table[:, 0::2] = sin, table[:, 1::2] = cos) and uses the "
            "exponent 2i/d_model."
        ),
        _pe_tensor2tensor,
    ),
    Mistake(
        N_(
            "the exponent is 2i/d_model where 2i is the even column index: build it with "
            "torch.arange(0, d_model, 2), not torch.arange(d_model // 2)."
        ),
        partial(_pe, two_i=False),
    ),
    Mistake(
        N_(
            "columns 2i and 2i+1 share one frequency 1/10000^(2i/d_model); you gave each column "
            "its own: compute the angles once per pair, (max_len, d_model/2), and take sin and cos "
            "of the same angles."
        ),
        _pe_own_frequency,
    ),
    Mistake(
        N_("divide the position by 10000^(2i/d_model); you multiplied."),
        partial(_pe, multiply=True),
    ),
    Mistake(
        N_("positions start at 0: use torch.arange(max_len), not arange(1, max_len + 1)."),
        partial(_pe, start=1),
    ),
    Mistake(
        N_(
            "the table is transposed: one row per position, (max_len, d_model); broadcast "
            "position[:, None] against the frequencies, not the other way round."
        ),
        lambda max_len, d_model: _pe(max_len, d_model).T,
    ),
    Mistake(
        N_(
            "return float32 like the library: build the positions with dtype=torch.float32, "
            "not float64."
        ),
        partial(_pe, dtype=torch.float64),
    ),
)


@exercise(sinusoidal_positional_encoding, POSITIONAL_ENCODING_MISTAKES)
def check_positional_encoding(fn: Callable) -> None:
    """fn(max_len, d_model) -> (max_len, d_model) float32: sin on even, cos on odd columns."""
    __tracebackhide__ = True
    for max_len, d_model in ((50, 16), (7, 4)):
        _expect(
            N_("the table"),
            fn,
            (max_len, d_model),
            sinusoidal_positional_encoding,
            POSITIONAL_ENCODING_MISTAKES,
            validate=partial(
                _tensor,
                what=N_("the table"),
                shape=(max_len, d_model),
                letters="(max_len, d_model)",
            ),
            fallback=N_("PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(...)."),
        )
    _passed(N_("positional encoding: matches the paper's table (§3.5)."))


def _shift_from_table(offset: int, d_model: int) -> torch.Tensor:
    """M with PE[pos + offset] = M @ PE[pos], read off the library's table.

    Row ``offset`` of the table holds sin(offset·ω_i) and cos(offset·ω_i), the entries of
    the 2×2 rotation of pair i (the angle-addition formulas).
    """
    row = sinusoidal_positional_encoding(offset + 1, d_model)[offset]  # (D,)
    sin, cos = row[0::2], row[1::2]  # (D/2,) each
    matrix = torch.zeros(d_model, d_model)
    matrix[0::2, 0::2] = torch.diag(cos)  # new sin = cos·sin + sin·cos
    matrix[0::2, 1::2] = torch.diag(sin)
    matrix[1::2, 0::2] = torch.diag(-sin)  # new cos = -sin·sin + cos·cos
    matrix[1::2, 1::2] = torch.diag(cos)
    return matrix


def _rotation(angle: torch.Tensor, sign: float = 1.0) -> torch.Tensor:
    """Block-diagonal 2×2 rotations by ``angle`` (D/2,), as tutorial code writes them."""
    blocks = [
        torch.tensor([[math.cos(a), sign * math.sin(a)], [-sign * math.sin(a), math.cos(a)]])
        for a in angle.tolist()
    ]
    return torch.block_diag(*blocks)


def _omega(d_model: int) -> torch.Tensor:
    return 1.0 / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)


def _concatenated_blocks(offset: int, d_model: int) -> torch.Tensor:
    """The rotation of pair i placed at rows/columns i and i + d_model/2 ([sin | cos] layout)."""
    order = torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])  # sin, cos
    return _rotation(offset * _omega(d_model))[order][:, order]  # (D, D), rows and columns


PE_RELATIVE_SHIFT_MISTAKES = (
    Mistake(
        N_(
            "your matrix shifts backwards, to pos - offset: flip the sign of the sin terms "
            "(or transpose each 2×2 block)."
        ),
        lambda offset, d_model: _rotation(offset * _omega(d_model), sign=-1.0),
    ),
    Mistake(
        N_(
            "the matrix must mix each (sin, cos) pair: a diagonal of cos(offset·ω) alone is "
            "not enough, add the ±sin(offset·ω) terms."
        ),
        lambda offset, d_model: torch.diag(
            torch.cos(offset / 10000.0 ** (torch.arange(d_model) // 2 * 2 / d_model))
        ),
    ),
    Mistake(
        N_("the rotation angle of pair i is offset·ω_i; you rotated by ω_i alone (a shift by 1)."),
        lambda offset, d_model: _rotation(_omega(d_model)),
    ),
    Mistake(
        N_(
            "the course's table interleaves: pair i sits at rows and columns 2i and 2i+1, not at "
            "i and i + d_model/2 (that is the concatenated [sin | cos] layout)."
        ),
        _concatenated_blocks,
    ),
)


def _in_float32(fn: Callable) -> Callable:
    """``fn`` with a float64 matrix result cast to float32: either precision is right here."""

    @functools.wraps(fn)
    def matrix(*args):
        result = fn(*args)
        is_double = isinstance(result, torch.Tensor) and result.dtype == torch.float64
        return result.float() if is_double else result

    return matrix


@exercise(_shift_from_table, PE_RELATIVE_SHIFT_MISTAKES)
def check_pe_relative_shift(fn: Callable) -> None:
    """fn(offset, d_model) -> M (d_model, d_model) with PE[pos + offset] == M @ PE[pos]."""
    __tracebackhide__ = True
    student = _in_float32(fn) if callable(fn) else fn
    for offset, d_model in ((3, 8), (1, 4)):
        _expect(
            N_("the matrix"),
            student,
            (offset, d_model),
            _shift_from_table,
            PE_RELATIVE_SHIFT_MISTAKES,
            validate=partial(
                _tensor,
                what=N_("the matrix"),
                shape=(d_model, d_model),
                letters="(d_model, d_model)",
            ),
            fallback=N_(
                "Each (sin, cos) pair rotates by offset·ω_i: sin(a + b) = sin a cos b + "
                "cos a sin b, cos(a + b) = cos a cos b - sin a sin b."
            ),
        )
    _passed(N_("relative shift: PE(pos + k) is a fixed rotation of PE(pos)."))
