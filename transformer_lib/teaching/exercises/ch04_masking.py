"""Notebook 04, masking: the causal mask (bool, True = may attend), and the diagnosis of a
mask that every mask check shares. The padding and target masks are in
:mod:`~transformer_lib.teaching.exercises.ch04_padding`.

The expected answers are ``transformer_lib.model.masks``' own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from transformer_lib.i18n import N_, _
from transformer_lib.model import masks
from transformer_lib.teaching.exercises._compare import _expect, _same, _tensor
from transformer_lib.teaching.exercises._core import ExerciseFailed, Mistake, _passed, exercise

__all__ = ["check_causal_mask"]


def _bool_mask(got, what: str, expected: torch.Tensor, letters: str, shape_hints=None):
    """The generic diagnosis of a mask: shape, then a float, additive or other non-bool dtype."""
    __tracebackhide__ = True
    got = _tensor(got, what, tuple(expected.shape), letters, None, shape_hints)
    if got.dtype != torch.bool:
        if _same(got, expected.float()):
            raise ExerciseFailed(
                _(
                    "{what}: the pattern is right but the dtype is {dtype}; "
                    "masks are torch.bool (use .bool() or dtype=torch.bool)."
                ).format(what=what, dtype=got.dtype)
            )
        if torch.isinf(got.double()).any():
            raise ExerciseFailed(
                _(
                    "{what}: that is an additive float mask (0 / -inf, the nn.Transformer "
                    "convention); here masks are torch.bool, True = may attend."
                ).format(what=what)
            )
        raise ExerciseFailed(
            _("wrong dtype: {what} must be torch.bool; got {dtype}.").format(
                what=what, dtype=got.dtype
            )
        )
    return got


def _reshaped(fn: Callable, shape: tuple, accepted: tuple = (), broadcast: bool = False):
    """``fn`` whose tensor result, in one of the ``accepted`` layouts, comes back as ``shape``.

    ``broadcast``: any result that broadcasts to ``shape`` (a smaller mask that is right
    would have to be the same everywhere, which a right target mask never is).
    """

    @functools.wraps(fn)
    def shaped(*args):
        got = fn(*args)
        if isinstance(got, torch.Tensor) and tuple(got.shape) in accepted:
            return got.reshape(shape)
        if broadcast and isinstance(got, torch.Tensor) and got.dim() <= len(shape):
            try:
                return torch.broadcast_to(got, shape)
            except RuntimeError:
                return got
        return got

    return shaped if callable(fn) else fn


def _positions(size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(query t as a column (T, 1), key s as a row (1, T)): the exercise's own terms."""
    positions = torch.arange(size)
    return positions[:, None], positions[None, :]


def _compare(op: Callable, size: int) -> torch.Tensor:
    t, s = _positions(size)
    return op(s, t)  # (1, T) vs (T, 1) -> (T, T)


CAUSAL_MASK_MISTAKES = (
    Mistake(
        N_(
            "your mask is inverted: True must mean 'may attend', i.e. key s <= query t (the past "
            "and the position itself); you marked the future s > t."
        ),
        lambda size: _compare(torch.gt, size),
    ),
    Mistake(
        N_(
            "diagonal excluded: a position may attend to itself, so compare key s <= query t "
            "with `<=`, not `<`."
        ),
        lambda size: _compare(torch.lt, size),
    ),
    Mistake(
        N_(
            "that is the upper triangle (key s >= query t): query t would see the future. Rows "
            "are queries (positions[:, None]), columns keys (positions[None, :]): key <= query."
        ),
        lambda size: _compare(torch.ge, size),
    ),
    Mistake(
        N_("nothing is masked: query t must not see the keys s > t after it."),
        lambda size: torch.ones(size, size, dtype=torch.bool),
    ),
    Mistake(
        N_(
            "the pattern is right but the mask is a float 0/1 tensor: masks are torch.bool "
            "(dtype torch.float32 is wrong); a comparison like key <= query already gives bool."
        ),
        lambda size: _compare(torch.le, size).float(),
    ),
    Mistake(
        N_(
            "that is nn.Transformer's additive float mask (0 allowed, -inf blocked, as from "
            "generate_square_subsequent_mask); here masks are torch.bool, True = may attend."
        ),
        lambda size: torch.triu(torch.full((size, size), float("-inf")), 1),
    ),
)


@exercise(masks.causal_mask, CAUSAL_MASK_MISTAKES)
def check_causal_mask(fn: Callable) -> None:
    """fn(T) -> bool mask (T, T) or (1, 1, T, T), True where query t may see key s (s <= t)."""
    __tracebackhide__ = True
    for size in (5, 1):
        shape = (1, 1, size, size)
        _expect(
            f"causal_mask({size})",
            _reshaped(fn, shape, accepted=((size, size), (1, size, size))),
            (size,),
            masks.causal_mask,
            [
                Mistake(m.hint, _reshaped(m.fn, shape, ((size, size),)))
                for m in CAUSAL_MASK_MISTAKES
            ],
            validate=lambda got, size=size: _bool_mask(
                got, f"causal_mask({size})", masks.causal_mask(size), _("(T, T) or (1, 1, T, T)")
            ),
        )
    _passed(N_("causal mask: each position sees itself and the past, never the future."))
