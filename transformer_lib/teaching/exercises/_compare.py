"""Comparing a student's result with the library's, and naming what differs: the known
mistake that gives the same result, else the type, shape, dtype, device or the first value
that is off. The checks' inputs live on the CPU, and so must a result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import torch

from transformer_lib.i18n import N_, _
from transformer_lib.teaching.exercises._core import (
    SHAPE_HINT,
    ExerciseFailed,
    Mistake,
    _call,
    _seeded_call,
    _shown,
)

RTOL, ATOL = 1e-4, 1e-5
DEVICE = torch.device("cpu")  # where every check builds its inputs
WRONG_DEVICE = N_(
    "wrong device: {what}: you returned a tensor on {device}; the check runs on {expected}, "
    "and your result must be there too. Create new tensors on the inputs' device "
    "(device=x.device) and don't move the result."
)


def _off_device(result) -> torch.device | None:
    """The device of the first tensor in ``result`` (nested in tuples, lists, dicts) that is
    not on the CPU; None when there is none."""
    if isinstance(result, torch.Tensor):
        return None if result.device == DEVICE else result.device
    if isinstance(result, dict):
        result = list(result.values())
    if isinstance(result, (tuple, list)):
        return next((d for d in map(_off_device, result) if d is not None), None)
    return None


def _check_device(got, what: str) -> None:
    """Raise :data:`WRONG_DEVICE` if a tensor in ``got`` is not on the CPU."""
    __tracebackhide__ = True
    device = _off_device(got)
    if device is not None:
        message = _(WRONG_DEVICE).format(what=_shown(what), device=device, expected=DEVICE)
        raise ExerciseFailed(message)


def _tensor(
    got,
    what: str,
    shape: tuple[int, ...],
    letters: str,
    dtype: torch.dtype | None = torch.float32,
    shape_hints: dict | None = None,
) -> torch.Tensor:
    """Check the type, shape, dtype and device of a result; return it detached."""
    __tracebackhide__ = True
    expected = f"{letters}={tuple(shape)}"
    if not isinstance(got, torch.Tensor):
        raise ExerciseFailed(
            _("{what} must be a torch.Tensor of shape {expected}; got {kind}.").format(
                what=_shown(what), expected=expected, kind=type(got).__name__
            )
        )
    if tuple(got.shape) != tuple(shape):
        hint = (shape_hints or {}).get(tuple(got.shape), SHAPE_HINT)
        raise ExerciseFailed(
            _("wrong shape: {what} must be {expected}; got {shape}. {hint}").format(
                what=_shown(what), expected=expected, shape=tuple(got.shape), hint=_shown(hint)
            )
        )
    if dtype is not None and got.dtype != dtype:
        raise ExerciseFailed(
            _("wrong dtype: {what} must be {expected}; got {dtype}.").format(
                what=_shown(what), expected=dtype, dtype=got.dtype
            )
        )
    _check_device(got, what)
    return got.detach()


def _same(got: torch.Tensor, expected: torch.Tensor) -> bool:
    if got.shape != expected.shape:
        return False
    if got.dtype == torch.bool or expected.dtype == torch.bool:
        return torch.equal(got.bool(), expected.bool())
    return torch.allclose(got.double(), expected.double(), rtol=RTOL, atol=ATOL, equal_nan=True)


def _diagnose(what: str, got: torch.Tensor, expected: torch.Tensor, fallback: str = "") -> None:
    """Pass if ``got`` matches ``expected``; else say where they differ, then ``fallback``."""
    __tracebackhide__ = True
    if _same(got, expected):
        return
    if torch.isnan(got.double()).any() and not torch.isnan(expected.double()).any():
        message = _("{what} contains NaN. {fallback}").format(
            what=_shown(what), fallback=_shown(fallback)
        )
        raise ExerciseFailed(message.strip())
    diff = (got.double() - expected.double()).abs().nan_to_num(float("inf"))
    index = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    message = _(
        "{what} differs from the reference: at index {index} you have {got}, "
        "expected {expected}. {fallback}"
    ).format(
        what=_shown(what),
        index=index,
        got=f"{got[index].item():.4g}",
        expected=f"{expected[index].item():.4g}",
        fallback=_shown(fallback),
    )
    raise ExerciseFailed(message.strip())


def _same_result(got, expected) -> bool:
    """Equal results: same structure, types, shapes and dtypes, values within tolerance."""
    if isinstance(got, (tuple, list)) or isinstance(expected, (tuple, list)):
        return (
            type(got) is type(expected)
            and len(got) == len(expected)
            and all(_same_result(a, b) for a, b in zip(got, expected))
        )
    if isinstance(got, torch.Tensor) and isinstance(expected, torch.Tensor):
        if (got.dtype, got.device) != (expected.dtype, expected.device):
            return False
        return _same(got.detach(), expected.detach())
    if isinstance(got, (int, float)) and isinstance(expected, (int, float)):
        same_kind = isinstance(got, bool) == isinstance(expected, bool) and (
            isinstance(got, float) == isinstance(expected, float)
        )
        if not same_kind:
            return False
        if isinstance(got, int):  # counts and flags compare exactly
            return got == expected
        return math.isclose(got, expected, rel_tol=RTOL, abs_tol=ATOL)
    if isinstance(got, np.ndarray) and isinstance(expected, np.ndarray):
        return (
            got.dtype == expected.dtype
            and got.shape == expected.shape
            and np.allclose(got, expected, rtol=RTOL, atol=ATOL, equal_nan=True)
        )
    return type(got) is type(expected) and got == expected


def _matching_mistake(got, mistakes: Sequence[Mistake], args: tuple) -> Mistake | None:
    """The first mistake that, run on ``args``, gives the student's result ``got``."""
    for mistake in mistakes:
        try:
            wrong = _seeded_call(mistake.fn, args)
        except Exception:  # a mistake that crashes on these inputs matches no result
            continue
        if _same_result(got, wrong):
            return mistake
    return None


def _expect(
    what: str,
    fn: Callable,
    args: tuple,
    reference: Callable,
    mistakes: Sequence[Mistake] = (),
    validate: Callable | None = None,
    fallback: str = "",
    hints: tuple[tuple[str, str], ...] = (),
):
    """One case of a check: ``fn(*args)`` must equal ``reference(*args)``; return the result.

    When it does not, the first mistake giving the same result names the error; else a
    tensor off the CPU is named, then ``validate(got)`` (type, shape, dtype; it returns the
    tensor to compare) raises its message, and the values are compared (see
    :func:`_diagnose`) with ``fallback`` added.
    """
    __tracebackhide__ = True
    got = _call(fn, *args, hints=hints, mistakes=mistakes)
    expected = _seeded_call(reference, args)
    if _same_result(got, expected):
        return got
    mistake = _matching_mistake(got, mistakes, args)
    if mistake is not None:
        raise ExerciseFailed(_("{what}: {hint}").format(what=_shown(what), hint=_(mistake.hint)))
    _check_device(got, what)
    compared = validate(got) if validate else got
    if isinstance(compared, torch.Tensor) and isinstance(expected, torch.Tensor):
        _diagnose(what, compared.detach(), expected.detach(), fallback=fallback)
    message = _("{what} differs from the reference. {fallback}").format(
        what=_shown(what), fallback=_shown(fallback)
    )
    raise ExerciseFailed(message.strip())


def _number(expected: float, what: str, fallback: str) -> Callable:
    """A ``validate`` for checks whose answer is one number: says what came and what was due."""

    def validate(got) -> None:
        __tracebackhide__ = True
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            raise ExerciseFailed(
                _("{what} must be a number (float); got {kind}.").format(
                    what=_shown(what), kind=type(got).__name__
                )
            )
        raise ExerciseFailed(
            _("{what}: you returned {got}, expected {expected}. {fallback}").format(
                what=_shown(what),
                got=f"{got:.6g}",
                expected=f"{expected:.6g}",
                fallback=_shown(fallback),
            )
        )

    return validate
