"""Notebook 07, the toy translator: the warm-up learning-rate schedule (§5.3) as PyTorch's
``LambdaLR`` sees it: a function of the update's index, counted from 0."""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.i18n import N_, _
from transformer_lib.teaching.exercises._compare import _expect, _number
from transformer_lib.teaching.exercises._core import Mistake, _passed, exercise
from transformer_lib.train.schedule import make_scheduler

__all__ = ["check_lr_schedule"]


def _library_lr(index: int, d_model: int, warmup: int) -> float:
    """The multiplier the library's ``make_scheduler`` hands to ``LambdaLR``, at ``index``."""
    parameter = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([parameter], lr=1.0)
    return make_scheduler(optimizer, d_model, warmup).lr_lambdas[0](index)


def _rate(
    index: int,
    d_model: int,
    warmup: int,
    *,
    shift: int = 1,
    fn: Callable = min,
    warmup_power: float = -1.5,
    model_power: float = -0.5,
) -> float:
    """The paper's rate at step = index + ``shift``, with one of the usual slips switched on."""
    step = index + shift
    return d_model**model_power * fn(step**-0.5, step * warmup**warmup_power)


def _annotated_rate(index: int, d_model: int, warmup: int) -> float:
    """The Annotated Transformer's guard: step 0 becomes step 1, later steps are not shifted."""
    step = 1 if index == 0 else index
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def _zero_first_rate(index: int, d_model: int, warmup: int) -> float:
    """A warm-up that starts from 0: the first update is wasted, the ramp runs a step late."""
    if index == 0:
        return 0.0
    return d_model**-0.5 * min(index**-0.5, index * warmup**-1.5)


_STEP_ZERO = N_(
    "LambdaLR calls the multiplier with 0 before the first update, and step 0 divides by zero "
    "(0^-0.5). The paper counts steps from 1: use step = index + 1."
)

# Order matters where two slips give the same number: the first case (warmup 1, step 1)
# tells the step-counting slips apart, the second (after the warm-up) catches max, the
# third (inside the warm-up) the exponents.
LR_SCHEDULE_MISTAKES = (
    Mistake(
        N_(
            "replacing step 0 by 1 (the Annotated Transformer's guard) gives the first two updates "
            "the same rate and every later one the rate of the step before: use step = index + 1."
        ),
        _annotated_rate,
    ),
    Mistake(_STEP_ZERO, partial(_rate, shift=0)),
    Mistake(
        N_(
            "your first update gets learning rate 0 and the ramp runs one step late: LambdaLR's "
            "index 0 is the paper's step 1, so use step = index + 1."
        ),
        _zero_first_rate,
    ),
    Mistake(
        N_(
            "the exponent of warmup is -1.5: step · warmup**-1.5 (= step / warmup**1.5), not "
            "step · warmup**1.5."
        ),
        partial(_rate, warmup_power=1.5),
    ),
    Mistake(
        N_(
            "min, not max: the rate is the smaller of the ramp step·warmup^-1.5 and the decay "
            "step^-0.5, so it rises, peaks at step = warmup, then falls."
        ),
        partial(_rate, fn=max),
    ),
    Mistake(
        N_(
            "the ramp is step · warmup^-1.5 (then both branches meet at step = warmup); you used "
            "warmup^-0.5."
        ),
        partial(_rate, warmup_power=-0.5),
    ),
    Mistake(
        N_("you forgot the factor d_model^-0.5 in front of the min."),
        partial(_rate, model_power=0.0),
    ),
    Mistake(
        N_("the factor is d_model^-0.5 = 1/√d_model, not √d_model."),
        partial(_rate, model_power=0.5),
    ),
)

_CRASH_HINTS = tuple(
    (text, _STEP_ZERO)
    for text in ("cannot be raised to a negative power", "division by zero", "math domain error")
)


def _as_float(fn: Callable) -> Callable:
    """``fn`` with a 0-dim CPU tensor (or NumPy) result turned into a Python float."""

    @functools.wraps(fn)
    def wrapper(*args):
        value = fn(*args)
        if isinstance(value, torch.Tensor) and value.numel() == 1 and value.device.type == "cpu":
            return float(value.item())
        return float(value) if type(value).__module__ == "numpy" else value

    return wrapper


@exercise(_library_lr, LR_SCHEDULE_MISTAKES)
def check_lr_schedule(fn: Callable) -> None:
    """fn(index, d_model, warmup) -> float, the rate LambdaLR sets for update index (from 0)."""
    __tracebackhide__ = True
    # small d_model and warmup keep every rate above 0.01, far from the absolute tolerance
    cases = [(0, 16, 1), (1, 16, 1)] + [(i, 16, 4) for i in (0, 1, 2, 3, 4, 20)]
    cases += [(9, 64, 10), (40, 64, 10)]
    fallback = _("Return d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) with step = index + 1.")
    for index, d_model, warmup in cases:
        what = f"{_name_of(fn)}({index}, d_model={d_model}, warmup={warmup})"
        _expect(
            what,
            _as_float(fn),
            (index, d_model, warmup),
            _library_lr,
            LR_SCHEDULE_MISTAKES,
            validate=_number(_library_lr(index, d_model, warmup), what, fallback),
            hints=_CRASH_HINTS,
        )
    _passed(
        _(
            "learning-rate schedule: d_model^-0.5 · min(step^-0.5, step · warmup^-1.5) with "
            "step = index + 1; it peaks at index warmup - 1, the paper's step warmup."
        )
    )


def _name_of(fn: Callable) -> str:
    name = getattr(fn, "__name__", "")
    return name if name and name != "<lambda>" else "lr"
