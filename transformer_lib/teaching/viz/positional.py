"""The sinusoidal positional encoding (§3.5): the table as a heatmap, columns as curves."""

from __future__ import annotations

from collections.abc import Sequence

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
)
from transformer_lib.teaching.viz.heatmaps import plot_heatmap

COLUMN = N_("column (2i: sin, 2i + 1: cos)")  # the x axis of the table: its columns
VALUE = N_("value")  # the colour bar of the table, the y axis of one row


def plot_positional_encoding(
    table: ArrayLike, ax: Axes | None = None, title: str | None = None
) -> Axes:
    """The positional-encoding table as a heatmap (§3.5): positions down, columns across.

    Column 2i is the sine and column 2i + 1 the cosine of pair i (frequency omega_i), so
    the x-axis counts columns, not the pair index i.

    Shapes: table (L, D).
    """
    values = as_array("table", table, ndim=2, shape_hint="(L, D)")
    ax = new_axes(ax, size=(9.0, 5.0))
    ax = plot_heatmap(
        values,
        ax=ax,
        xlabel=COLUMN,
        ylabel=_("position pos"),
        title=title or _("Positional encoding PE[pos, column]"),
        cmap="RdBu_r",
        vmin=-1.0,
        vmax=1.0,
        colorbar_label=VALUE,
    )
    return ax


def plot_pe_curves(
    table: ArrayLike,
    dims: Sequence[int],
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Chosen columns of the PE table as curves over positions: low columns oscillate fast.

    Shapes: table (L, D); dims are column indices in [0, D).
    """
    values = as_array("table", table, ndim=2, shape_hint="(L, D)")
    length, width = values.shape
    for d in dims:
        if not 0 <= int(d) < width:
            fail("dims", "column indices in [0, {width})", repr(list(dims)), width=width)
    ax = new_axes(ax, size=(9.0, 5.0))
    for d in dims:
        label = _("column {column} (pair {pair}, {function})").format(
            column=int(d), pair=int(d) // 2, function="cos" if int(d) % 2 else "sin"
        )
        ax.plot(np.arange(length), values[:, int(d)], label=label, linewidth=2)
    ax.set_xlabel(_("position pos"), fontsize=LABEL_SIZE)
    ax.set_ylabel(_("PE[pos, column]"), fontsize=LABEL_SIZE)
    ax.set_title(title or _("Positional-encoding curves"), fontsize=TITLE_SIZE)
    if len(dims):
        ax.legend(fontsize=TICK_SIZE, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    return ax
