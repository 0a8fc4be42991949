"""What every figure shares: font sizes, tensors as arrays, a new Axes when none is given,
and labels looked up in the course's language."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
import torch
from matplotlib.axes import Axes

from transformer_lib._checks import fail
from transformer_lib.i18n import translated as translated  # the figures' labels (re-exported)

# Large enough to read on a projector.
TITLE_SIZE = 14
LABEL_SIZE = 12
TICK_SIZE = 11

# What the plot functions take: a tensor (any device, with or without grad), a numpy
# array, or nested lists of numbers.
ArrayLike = torch.Tensor | npt.ArrayLike


def as_array(name: str, x: ArrayLike, ndim: int | None = None, shape_hint: str = "") -> np.ndarray:
    """A float (or bool) numpy copy of a tensor, array or nested list."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        x = x.numpy() if x.dtype == torch.bool else x.float().numpy()
    try:
        array = np.asarray(x)
    except (TypeError, ValueError):
        expected = "a tensor {shape}" if shape_hint else "a tensor"
        fail(name, expected, type(x).__name__, error=TypeError, shape=shape_hint)
    if ndim is not None:
        # leading size-1 dimensions (a batch of one, a broadcast head axis) are dropped
        while array.ndim > ndim and array.shape[0] == 1:
            array = array[0]
        if array.ndim != ndim:
            fail(
                name,
                "a {ndim}-D tensor {shape}" if shape_hint else "a {ndim}-D tensor",
                f"shape {array.shape}",
                "Select one example (and one head) first, e.g. weights[0, 0].",
                ndim=ndim,
                shape=shape_hint,
            )
    return array


def new_axes(
    ax: Axes | None, shape: tuple[int, int] = (6, 6), size: tuple[float, float] | None = None
) -> Axes:
    """``ax`` itself, or the Axes of a new figure sized for a (rows, cols) matrix."""
    if ax is not None:
        return ax
    if size is None:
        rows, cols = shape
        size = (min(12.0, max(4.0, 0.5 * cols + 2.0)), min(10.0, max(3.0, 0.5 * rows + 1.5)))
    _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax
