"""Heatmaps of bool grids and pairs: attention masks, and attention beside gold alignments.

Shapes:
    T query (target) length, S key (source) length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.patches import Rectangle

from transformer_lib._checks import fail
from transformer_lib.i18n import N_, _
from transformer_lib.teaching.viz._common import TICK_SIZE, ArrayLike, as_array
from transformer_lib.teaching.viz.heatmaps import ATTENTION_WEIGHT, plot_heatmap

# Colours of a mask plot: blocked positions dark, allowed positions light.
MASK_CMAP = ListedColormap(["#3b3b58", "#f6d55c"])


def plot_mask(
    mask: ArrayLike,
    ax: Axes | None = None,
    title: str | None = None,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    xlabel: str = N_("key"),
    ylabel: str = N_("query"),
    shape: tuple[int, int] | None = None,
) -> Axes:
    """A bool mask: light cells may attend (True), dark cells are blocked (False).

    Shapes: mask (T, S), or anything with leading size-1 dimensions such as
    (1, 1, T, T) or (1, 1, 1, S); ``shape=(T, S)`` broadcasts it first, e.g. to draw a
    padding mask as the square the attention scores see.
    """
    values = as_array("mask", mask)
    if shape is not None:
        values = np.broadcast_to(values, values.shape[:-2] + tuple(shape))
    values = as_array("mask", values, ndim=2, shape_hint="(T, S)")
    if values.dtype != bool and not np.isin(values, (0, 1)).all():
        fail("mask", "bool (True = may attend)", f"values of type {values.dtype}", error=TypeError)
    ax = plot_heatmap(
        values.astype(float),
        x_labels,
        y_labels,
        ax=ax,
        title=title,
        xlabel=xlabel,
        ylabel=ylabel,
        cmap=MASK_CMAP,
        vmin=0,
        vmax=1,
        colorbar=False,
    )
    n, m = values.shape
    ax.set_xticks(np.arange(-0.5, m), minor=True)
    ax.set_yticks(np.arange(-0.5, n), minor=True)
    ax.grid(which="minor", color="white", linewidth=1)
    ax.tick_params(which="minor", length=0)
    bar = ax.figure.colorbar(ax.images[-1], ax=ax, ticks=[0.25, 0.75], fraction=0.046, pad=0.04)
    ticks = [_("blocked\n(False)"), _("may attend\n(True)")]
    bar.ax.set_yticklabels(ticks, fontsize=TICK_SIZE)
    return ax


def plot_alignment(
    weights: ArrayLike,
    gold: Sequence[tuple[int, int]],
    src_tokens: Sequence[str],
    tgt_tokens: Sequence[str],
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Cross-attention (target rows, source columns) with gold alignments boxed in red.

    ``gold`` holds Pharaoh pairs (i_src, j_tgt), so pair (i, j) is drawn at column i, row j.
    Shapes: weights (T, S).
    """
    values = as_array("weights", weights, ndim=2, shape_hint="(T, S)")
    T, S = values.shape
    for i, j in gold:
        if not (0 <= i < S and 0 <= j < T):
            fail(
                "gold",
                "(i_src, j_tgt) pairs with i < S={S} and j < T={T}",
                repr((i, j)),
                "Pairs are (source index, target index), Pharaoh order.",
                S=S,
                T=T,
            )
    ax = plot_heatmap(
        values,
        src_tokens,
        tgt_tokens,
        ax=ax,
        title=title or _("Cross-attention (red boxes: gold alignment)"),
        xlabel=_("source token (key)"),
        ylabel=_("target token (query)"),
        vmin=0.0,
        colorbar_label=ATTENTION_WEIGHT,
    )
    for n, (i, j) in enumerate(gold):
        label = _("gold alignment") if n == 0 else None  # one legend entry for all boxes
        box = Rectangle(
            (i - 0.5, j - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.5, label=label
        )
        ax.add_patch(box)
    return ax
