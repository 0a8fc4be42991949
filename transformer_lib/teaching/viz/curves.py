"""Training curves: the loss history that ``train()`` returns, the learning-rate schedule."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.axes import Axes

from transformer_lib._checks import fail
from transformer_lib.i18n import N_, _
from transformer_lib.teaching.viz._common import (
    LABEL_SIZE,
    TICK_SIZE,
    TITLE_SIZE,
    ArrayLike,
    as_array,
    new_axes,
    translated,
)

_HISTORY_HINT = N_(
    'Pass the dict train() returns (state.history), or wrap a list of losses: {{"loss": losses}}.'
)


def _describe(value) -> str:
    """What arrived: its type and, for a non-empty list or tuple, the type of its first item."""
    if isinstance(value, (list, tuple)) and value:
        return f"{type(value).__name__} of {type(value[0]).__name__}"
    return type(value).__name__


def _numbers(name: str, values) -> np.ndarray:
    """One series as a float array; the house error unless it is a non-empty list of numbers."""
    array = as_array(name, values)
    if array.ndim != 1 or not array.size or array.dtype.kind not in "fiu":
        fail(name, "a non-empty 1-D list of numbers", _describe(values), _HISTORY_HINT)
    return array.astype(float)


def _series(history) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
    """(x values or None, {name: values}) from a mapping of series name -> list of numbers."""
    if not isinstance(history, Mapping):
        fail(
            "history",
            'a mapping of series name -> list of numbers (optional "step" key: the x values)',
            _describe(history),
            _HISTORY_HINT,
            error=TypeError,
        )
    series = {name: _numbers(f"history[{name!r}]", values) for name, values in history.items()}
    steps = series.pop("step", None)
    if not series:
        fail(
            "history", 'at least one series besides "step"', f"keys {list(history)}", _HISTORY_HINT
        )
    for name, values in series.items():
        if steps is not None and len(values) != len(steps):
            expected = '{n} numbers (one per "step")'
            fail(f"history[{name!r}]", expected, str(len(values)), n=len(steps))
    return steps, series


def plot_loss_curve(
    history: Mapping, ax: Axes | None = None, title: str | None = None, log_scale: bool = False
) -> Axes:
    """Each series of a training history against the step (§5: training).

    ``history`` maps series names to lists of numbers, like the dict ``train()`` returns:
    ``{"step": [10, 20], "loss": [3.1, 2.4]}``; the optional ``"step"`` series gives the x
    values (else 0, 1, 2, ...). A series name the catalogue holds ("loss") is shown in the
    course's language. For a live curve, call ``ax.clear()`` and plot again.
    Shapes: every series (N,), as long as ``"step"``.
    """
    steps, series = _series(history)
    ax = new_axes(ax, size=(8.0, 4.5))
    for name, values in series.items():
        x = np.arange(len(values)) if steps is None else steps
        marker = "o" if len(values) < 30 else None
        ax.plot(x, values, label=translated(name), linewidth=2, marker=marker)
    ax.set_xlabel(_("step"), fontsize=LABEL_SIZE)
    ax.set_ylabel(_("loss"), fontsize=LABEL_SIZE)
    if log_scale:
        ax.set_yscale("log")
    ax.set_title(title or _("Training loss"), fontsize=TITLE_SIZE)
    ax.legend(fontsize=TICK_SIZE)
    ax.grid(alpha=0.3)
    return ax


def plot_lr_schedule(
    steps: ArrayLike,
    lrs: ArrayLike | Mapping[str, ArrayLike],
    ax: Axes | None = None,
    title: str | None = None,
    warmup_steps: int | None = None,
) -> Axes:
    """Learning rate against step, e.g. the paper's warm-up schedule (§5.3).

    Shapes: steps (N,), lrs (N,) or a dict {label: (N,)} to compare schedules.
    """
    x = as_array("steps", steps, ndim=1)
    curves = lrs if isinstance(lrs, Mapping) else {N_("learning rate"): lrs}
    ax = new_axes(ax, size=(8.0, 4.5))
    for label, values in curves.items():
        y = as_array("lrs", values, ndim=1)
        if len(y) != len(x):
            fail("lrs", "{n} values (one per step)", str(len(y)), n=len(x))
        ax.plot(x, y, label=translated(str(label)), linewidth=2)
    if warmup_steps is not None:
        ax.axvline(
            warmup_steps, color="grey", linestyle="--", label=f"warmup_steps = {warmup_steps}"
        )
    ax.set_xlabel(_("step"), fontsize=LABEL_SIZE)
    ax.set_ylabel(_("learning rate"), fontsize=LABEL_SIZE)
    ax.set_title(title or _("Learning-rate schedule"), fontsize=TITLE_SIZE)
    ax.legend(fontsize=TICK_SIZE)
    ax.grid(alpha=0.3)
    return ax


def plot_seed_spread(
    results: Mapping[str, ArrayLike],
    ax: Axes | None = None,
    title: str = "",
    xlabel: str = N_("valid BLEU"),
    baseline: str | None = None,
) -> Axes:
    """One row per variant: each seed's result as a dot, the mean as a bar, the min-max
    range as a line, so a difference can be read against the spread between seeds.

    ``results`` maps variant name -> one number per seed (any number of variants and
    seeds); rows are drawn top to bottom in the mapping's order. ``baseline`` names the
    variant whose mean gets a dashed vertical line.
    """
    if not isinstance(results, Mapping) or not results:
        fail("results", "a non-empty mapping of variant name -> one number per seed",
             _describe(results), error=TypeError)  # fmt: skip
    if baseline is not None and baseline not in results:
        fail("baseline", "one of {choices}", repr(baseline), choices=list(results))
    ax = new_axes(ax, size=(7, 0.8 + 0.45 * len(results)))
    for row, (name, values) in enumerate(results.items()):
        values = _numbers(f"results[{name!r}]", values)
        ax.plot([values.min(), values.max()], [row, row], color="grey", linewidth=2)
        ax.scatter(values, np.full(len(values), row), color="tab:blue", zorder=3, s=30)
        ax.plot([values.mean()] * 2, [row - 0.3, row + 0.3], color="black", linewidth=2)
    if baseline is not None:
        ax.axvline(np.mean(_numbers("baseline", results[baseline])), color="grey", linestyle="--")
    ax.set_yticks(range(len(results)), list(results), fontsize=TICK_SIZE)
    ax.set_ylim(len(results) - 0.5, -0.5)  # the first variant on top
    ax.set_xlabel(translated(xlabel), fontsize=LABEL_SIZE)
    ax.tick_params(axis="x", labelsize=TICK_SIZE)
    if title:
        ax.set_title(title, fontsize=TITLE_SIZE)
    return ax
