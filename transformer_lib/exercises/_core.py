"""The machinery every exercise check shares: calling the student's function, checking
the type, shape and dtype of its result, and naming the first known mistake it matches.

A check builds its inputs with :func:`_generator` (seeded, on the CPU, never the global
seed), calls the student's function through :func:`_call`, validates the result with
:func:`_tensor`, compares it with :func:`_diagnose` and ends with :func:`_passed`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

Mistakes = list[tuple[str, torch.Tensor]]  # (hint, wrong output) pairs: see the package docstring

RTOL, ATOL = 1e-4, 1e-5
SHAPE_HINT = "Hint: print the shapes of the tensors you combine."
TRANSPOSE_HINT = (
    "Hint: after .transpose() a tensor is not contiguous; use .reshape(...) or "
    ".contiguous().view(...)."
)


class ExerciseFailed(AssertionError):
    """A check found a mistake; the message says which and how to fix it."""

    def _render_traceback_(self) -> list[str]:
        # Jupyter calls this instead of printing a traceback: the student sees one message.
        return [f"\x1b[1;31mExerciseFailed\x1b[0m: {self}"]


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _name(fn) -> str:
    name = getattr(fn, "__name__", "")
    return f"`{name}`" if name and name != "<lambda>" else "your function"


def _call(fn: Callable, *args, hints: tuple[tuple[str, str], ...] = ()):
    """Call the student's function on copies of the inputs; its errors become short messages."""
    __tracebackhide__ = True
    if not callable(fn):
        raise ExerciseFailed(
            f"pass your function itself, e.g. check(my_function), not the "
            f"result of calling it; got {type(fn).__name__}."
        )
    args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseFailed(
            f"{_name(fn)} is not implemented yet: replace the "
            "`raise NotImplementedError(...)` line with your solution and run "
            "the cell again."
        ) from None
    except Exception as error:  # any bug in the student's code, reported briefly
        text = str(error)
        extra = next((hint for key, hint in hints if key in text), "")
        if not extra and "view size is not compatible" in text:
            extra = TRANSPOSE_HINT
        raise ExerciseFailed(
            f"{_name(fn)} raised {type(error).__name__}: {text} {extra}".strip()
        ) from None


def _tensor(
    got,
    what: str,
    shape: tuple[int, ...],
    letters: str,
    dtype: torch.dtype | None = torch.float32,
    shape_hints: dict | None = None,
) -> torch.Tensor:
    """Check the type, shape and dtype of a result; return it detached on the CPU."""
    __tracebackhide__ = True
    expected = f"{letters}={tuple(shape)}"
    if not isinstance(got, torch.Tensor):
        raise ExerciseFailed(
            f"{what} must be a torch.Tensor of shape {expected}; got {type(got).__name__}."
        )
    if tuple(got.shape) != tuple(shape):
        hint = (shape_hints or {}).get(tuple(got.shape), SHAPE_HINT)
        raise ExerciseFailed(
            f"wrong shape: {what} must be {expected}; got {tuple(got.shape)}. {hint}"
        )
    if dtype is not None and got.dtype != dtype:
        raise ExerciseFailed(f"wrong dtype: {what} must be {dtype}; got {got.dtype}.")
    return got.detach().cpu()


def _same(got: torch.Tensor, expected: torch.Tensor) -> bool:
    if got.shape != expected.shape:
        return False
    if got.dtype == torch.bool or expected.dtype == torch.bool:
        return torch.equal(got.bool(), expected.bool())
    return torch.allclose(got.double(), expected.double(), rtol=RTOL, atol=ATOL, equal_nan=True)


def _diagnose(
    what: str,
    got: torch.Tensor,
    expected: torch.Tensor,
    wrong: Callable[[], Mistakes] | None = None,
    fallback: str = "",
) -> None:
    """Pass if ``got`` matches; else name the first known mistake it matches.

    ``wrong`` builds the (hint, wrong value) pairs only when needed: right answers stay fast.
    """
    __tracebackhide__ = True
    if _same(got, expected):
        return
    for hint, wrong_value in wrong() if wrong else []:
        if _same(got, wrong_value.detach()):
            raise ExerciseFailed(f"{what}: {hint}")
    if torch.isnan(got.double()).any() and not torch.isnan(expected.double()).any():
        raise ExerciseFailed(f"{what} contains NaN. {fallback}".strip())
    diff = (got.double() - expected.double()).abs().nan_to_num(float("inf"))
    index = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    raise ExerciseFailed(
        f"{what} differs from the reference: at index {index} you have "
        f"{got[index].item():.4g}, expected {expected[index].item():.4g}. "
        f"{fallback}".strip()
    )


def _passed(message: str) -> None:
    print(f"✓ {message}")
