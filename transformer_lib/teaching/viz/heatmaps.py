"""Heatmaps: the core ``plot_heatmap``, grids of them, attention weights, masks, alignments.

Attention plots put keys on the x axis and queries on the y axis: row t shows where
query t looks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import Colormap

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

# Axis labels and colour floor of every attention plot (the labels looked up where drawn).
_ATTENTION_STYLE = {
    "xlabel": N_("key (attended to)"),
    "ylabel": N_("query (attending)"),
    "vmin": 0.0,
}
ATTENTION_WEIGHT = N_("attention weight")  # the colour bar of an attention plot
# A grid of matrices: one (n, m), (k, n, m) or (rows, cols, n, m) array, a list of (n, m)
# matrices, or a list of such lists (one per row).
Matrices = ArrayLike | Sequence[ArrayLike] | Sequence[Sequence[ArrayLike]]


def _labels(name: str, labels: Sequence[str] | None, length: int) -> list[str] | None:
    if labels is None:
        return None
    labels = [str(label) for label in labels]
    if len(labels) != length:
        fail(name, "{n} labels (one per row/column of the matrix)", f"{len(labels)}", n=length)
    return labels


def _set_ticks(ax: Axes, x_labels: list[str] | None, y_labels: list[str] | None) -> None:
    if x_labels is not None:
        rotate = max((len(label) for label in x_labels), default=0) > 2
        ax.set_xticks(range(len(x_labels)))
        ax.set_xticklabels(x_labels, rotation=90 if rotate else 0, fontsize=TICK_SIZE)
    if y_labels is not None:
        ax.set_yticks(range(len(y_labels)))
        ax.set_yticklabels(y_labels, fontsize=TICK_SIZE)


def plot_heatmap(
    matrix: ArrayLike,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str = N_("key"),
    ylabel: str = N_("query"),
    cmap: str | Colormap = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    annotate: bool = False,
    colorbar_label: str | None = None,
) -> Axes:
    """One matrix as a heatmap: row i at the top, column j on the x axis.

    ``annotate=True`` writes each value in its cell (for small matrices). The axis and
    colour-bar labels are looked up in the course's language where the catalogue holds them
    (the defaults do; a label it lacks is drawn as given).
    Shapes: matrix (n, m) (leading size-1 dimensions are dropped).
    """
    values = as_array("matrix", matrix, ndim=2, shape_hint="(n, m)").astype(float)
    n, m = values.shape
    x_labels = _labels("x_labels", x_labels, m)
    y_labels = _labels("y_labels", y_labels, n)
    ax = new_axes(ax, (n, m))
    image = ax.imshow(
        values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest"
    )
    _set_ticks(ax, x_labels, y_labels)
    ax.set_xlabel(translated(xlabel), fontsize=LABEL_SIZE)
    ax.set_ylabel(translated(ylabel), fontsize=LABEL_SIZE)
    if title:
        ax.set_title(title, fontsize=TITLE_SIZE)
    if annotate:
        middle = np.nanmean(values) if values.size else 0.0
        for (i, j), value in np.ndenumerate(values):
            colour = "black" if value > middle else "white"
            ax.text(
                j, i, f"{value:.2f}", ha="center", va="center", fontsize=TICK_SIZE - 2, color=colour
            )
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        if colorbar_label:
            bar.set_label(translated(colorbar_label), fontsize=LABEL_SIZE)
    return ax


def _grid(matrices: Matrices) -> list[list[np.ndarray]]:
    """Matrices as rows of 2-D arrays from (n, m), (k, n, m), (rows, cols, n, m) or lists."""
    if isinstance(matrices, (list, tuple)):
        if matrices and isinstance(matrices[0], (list, tuple)):
            return [[as_array("matrices", m, ndim=2) for m in row] for row in matrices]
        return [[as_array("matrices", m, ndim=2) for m in matrices]]
    values = as_array("matrices", matrices)
    if values.ndim == 2:
        return [[values]]
    if values.ndim == 3:
        return [list(values)]
    if values.ndim == 4:
        return [list(row) for row in values]
    fail(
        "matrices",
        "a (n, m), (k, n, m) or (rows, cols, n, m) tensor or a list of matrices",
        f"shape {values.shape}",
    )


def show_heatmaps(
    matrices: Matrices,
    x_labels: Sequence[str] | None = None,
    y_labels: Sequence[str] | None = None,
    titles: Sequence[str] | Sequence[Sequence[str]] | None = None,
    xlabel: str = N_("key"),
    ylabel: str = N_("query"),
    cmap: str | Colormap = "viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    suptitle: str | None = None,
    figsize: tuple[float, float] | None = None,
    colorbar: bool = True,
) -> np.ndarray:
    """A grid of heatmaps sharing one colour scale (after d2l's ``show_heatmaps``).

    Shapes: matrices (n, m), (k, n, m) (one row), (rows, cols, n, m), a list of (n, m)
    or a list of lists. ``titles`` is flat (row by row) or nested like the grid.
    Returns the (rows, cols) array of Axes.
    """
    grid = _grid(matrices)
    rows, cols = len(grid), max(len(row) for row in grid)
    flat = [m for row in grid for m in row]
    vmin = min(float(np.nanmin(m)) for m in flat) if vmin is None else vmin
    vmax = max(float(np.nanmax(m)) for m in flat) if vmax is None else vmax
    if titles is not None and titles and isinstance(titles[0], (list, tuple)):
        titles = [t for row in titles for t in row]
    if titles is not None and len(titles) != len(flat):
        fail("titles", "{n} titles (one per matrix)", str(len(titles)), n=len(flat))
    n, m = flat[0].shape
    if figsize is None:
        cell = min(4.0, max(2.2, 0.35 * max(n, m) + 1.0))
        figsize = (cell * cols + (1.0 if colorbar else 0.0), cell * rows + 0.5)
    fig, axes = plt.subplots(rows, cols, figsize=figsize, squeeze=False, layout="constrained")
    index = 0
    for r, row in enumerate(grid):
        for c in range(cols):
            ax = axes[r, c]
            if c >= len(row):
                ax.set_axis_off()
                continue
            plot_heatmap(
                row[c],
                x_labels,
                y_labels,
                ax=ax,
                title=None if titles is None else titles[index],
                xlabel=xlabel if r == rows - 1 else "",
                ylabel=ylabel if c == 0 else "",
                cmap=cmap,
                vmin=vmin,
                vmax=vmax,
                colorbar=False,
            )
            index += 1
    if colorbar:
        fig.colorbar(axes[0, 0].images[0], ax=axes.ravel().tolist(), shrink=0.8)
    if suptitle:
        fig.suptitle(suptitle, fontsize=TITLE_SIZE)
    return axes


def plot_attention(
    weights: ArrayLike,
    query_tokens: Sequence[str] | None = None,
    key_tokens: Sequence[str] | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
) -> Axes:
    """Attention weights with keys on x (attended to) and queries on y (attending).

    Shapes: weights (T, S) (leading size-1 dimensions are dropped); query_tokens T,
    key_tokens S labels.
    """
    values = as_array("weights", weights, ndim=2, shape_hint="(T, S)")
    return plot_heatmap(
        values,
        key_tokens,
        query_tokens,
        ax=ax,
        title=title,
        **_ATTENTION_STYLE,
        vmax=vmax,
        colorbar=colorbar,
        colorbar_label=ATTENTION_WEIGHT,
    )


def plot_attention_heads(
    weights: ArrayLike,
    query_tokens: Sequence[str] | None = None,
    key_tokens: Sequence[str] | None = None,
    title: str | None = None,
    ncols: int | None = None,
) -> np.ndarray:
    """One attention heatmap per head, any number of heads, one shared colour bar.

    Shapes: weights (H, T, S) (or (1, H, T, S)). Returns the array of Axes.
    """
    values = as_array("weights", weights, ndim=3, shape_hint="(H, T, S)")
    n_heads = values.shape[0]
    ncols = min(n_heads, 4) if ncols is None else ncols
    nrows = math.ceil(n_heads / ncols)
    grid = [list(values[r * ncols : (r + 1) * ncols]) for r in range(nrows)]
    return show_heatmaps(
        grid,
        key_tokens,
        query_tokens,
        titles=[_("head {h}").format(h=h) for h in range(n_heads)],
        **_ATTENTION_STYLE,
        suptitle=title,
    )
