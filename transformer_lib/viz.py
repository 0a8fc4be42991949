"""Figures for the notebooks: heatmaps, masks, positional encodings, the architecture.

Every function takes tensors (or arrays), accepts ``ax=None`` (a new figure is made
when none is given), returns the Axes (or an array of Axes) and never calls
``savefig`` or ``show``: the notebook decides what to do with the figure. Labels,
titles and colour bars are set large enough to read on a projector. Nothing here
assumes a number of heads or layers.

Shapes:
    T query (target) length, S key (source) length, H heads, L positions, D d_model.
Attention plots put keys on the x axis and queries on the y axis: row t shows
where query t looks.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from transformer_lib._checks import fail

TITLE_SIZE = 14
LABEL_SIZE = 12
TICK_SIZE = 11
# Colours of a mask plot: blocked positions dark, allowed positions light.
MASK_CMAP = ListedColormap(["#3b3b58", "#f6d55c"])


def _as_array(name: str, x, ndim: int | None = None, shape_hint: str = "") -> np.ndarray:
    """A float (or bool) numpy copy of a tensor, array or nested list."""
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu()
        x = x.numpy() if x.dtype == torch.bool else x.float().numpy()
    try:
        array = np.asarray(x)
    except (TypeError, ValueError):
        fail(
            name,
            f"a tensor{' ' + shape_hint if shape_hint else ''}",
            type(x).__name__,
            error=TypeError,
        )
    if ndim is not None:
        # leading size-1 dimensions (a batch of one, a broadcast head axis) are dropped
        while array.ndim > ndim and array.shape[0] == 1:
            array = array[0]
        if array.ndim != ndim:
            fail(
                name,
                f"a {ndim}-D tensor {shape_hint}".rstrip(),
                f"shape {array.shape}",
                "Select one example (and one head) first, e.g. weights[0, 0].",
            )
    return array


def _new_axes(
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


def _labels(name: str, labels, length: int) -> list[str] | None:
    if labels is None:
        return None
    labels = [str(label) for label in labels]
    if len(labels) != length:
        fail(name, f"{length} labels (one per row/column of the matrix)", f"{len(labels)}")
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
    matrix,
    x_labels: Sequence | None = None,
    y_labels: Sequence | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    xlabel: str = "key",
    ylabel: str = "query",
    cmap="viridis",
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    annotate: bool = False,
    colorbar_label: str | None = None,
) -> Axes:
    """One matrix as a heatmap: row i at the top, column j on the x axis.

    ``annotate=True`` writes each value in its cell (for small matrices).
    Shapes: matrix (n, m) (leading size-1 dimensions are dropped).
    """
    values = _as_array("matrix", matrix, ndim=2, shape_hint="(n, m)").astype(float)
    n, m = values.shape
    x_labels = _labels("x_labels", x_labels, m)
    y_labels = _labels("y_labels", y_labels, n)
    ax = _new_axes(ax, (n, m))
    image = ax.imshow(
        values, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", interpolation="nearest"
    )
    _set_ticks(ax, x_labels, y_labels)
    ax.set_xlabel(xlabel, fontsize=LABEL_SIZE)
    ax.set_ylabel(ylabel, fontsize=LABEL_SIZE)
    if title:
        ax.set_title(title, fontsize=TITLE_SIZE)
    if annotate:
        middle = np.nanmean(values) if values.size else 0.0
        for (i, j), value in np.ndenumerate(values):
            ax.text(
                j,
                i,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=TICK_SIZE - 2,
                color="black" if value > middle else "white",
            )
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        if colorbar_label:
            bar.set_label(colorbar_label, fontsize=LABEL_SIZE)
    return ax


def _grid(matrices) -> list[list[np.ndarray]]:
    """Matrices as rows of 2-D arrays from (n, m), (k, n, m), (rows, cols, n, m) or lists."""
    if isinstance(matrices, (list, tuple)):
        if matrices and isinstance(matrices[0], (list, tuple)):
            return [[_as_array("matrices", m, ndim=2) for m in row] for row in matrices]
        return [[_as_array("matrices", m, ndim=2) for m in matrices]]
    values = _as_array("matrices", matrices)
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
    matrices,
    x_labels: Sequence | None = None,
    y_labels: Sequence | None = None,
    titles: Sequence | None = None,
    xlabel: str = "key",
    ylabel: str = "query",
    cmap="viridis",
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
        fail("titles", f"{len(flat)} titles (one per matrix)", str(len(titles)))
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
    weights,
    query_tokens: Sequence | None = None,
    key_tokens: Sequence | None = None,
    ax: Axes | None = None,
    title: str | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
) -> Axes:
    """Attention weights with keys on x (attended to) and queries on y (attending).

    Shapes: weights (T, S) (leading size-1 dimensions are dropped); query_tokens T,
    key_tokens S labels.
    """
    values = _as_array("weights", weights, ndim=2, shape_hint="(T, S)")
    return plot_heatmap(
        values,
        key_tokens,
        query_tokens,
        ax=ax,
        title=title,
        xlabel="key (attended to)",
        ylabel="query (attending)",
        vmin=0.0,
        vmax=vmax,
        colorbar=colorbar,
        colorbar_label="attention weight",
    )


def plot_attention_heads(
    weights,
    query_tokens: Sequence | None = None,
    key_tokens: Sequence | None = None,
    title: str | None = None,
    ncols: int | None = None,
) -> np.ndarray:
    """One attention heatmap per head, any number of heads, one shared colour bar.

    Shapes: weights (H, T, S) (or (1, H, T, S)). Returns the array of Axes.
    """
    values = _as_array("weights", weights, ndim=3, shape_hint="(H, T, S)")
    n_heads = values.shape[0]
    ncols = min(n_heads, 4) if ncols is None else ncols
    nrows = math.ceil(n_heads / ncols)
    grid = [list(values[r * ncols : (r + 1) * ncols]) for r in range(nrows)]
    titles = [f"head {h}" for h in range(n_heads)]
    axes = show_heatmaps(
        grid,
        key_tokens,
        query_tokens,
        titles=titles,
        xlabel="key (attended to)",
        ylabel="query (attending)",
        vmin=0.0,
        suptitle=title,
    )
    return axes


def plot_mask(
    mask,
    ax: Axes | None = None,
    title: str | None = None,
    x_labels: Sequence | None = None,
    y_labels: Sequence | None = None,
    xlabel: str = "key",
    ylabel: str = "query",
    shape: tuple[int, int] | None = None,
) -> Axes:
    """A bool mask: light cells may attend (True), dark cells are blocked (False).

    Shapes: mask (T, S), or anything with leading size-1 dimensions such as
    (1, 1, T, T) or (1, 1, 1, S); ``shape=(T, S)`` broadcasts it first, e.g. to draw a
    padding mask as the square the attention scores see.
    """
    values = _as_array("mask", mask)
    if shape is not None:
        values = (
            np.broadcast_to(values, values.shape[:-2] + tuple(shape))
            if values.ndim >= 2
            else np.broadcast_to(values, tuple(shape))
        )
    values = _as_array("mask", values, ndim=2, shape_hint="(T, S)")
    if values.ndim == 2 and values.dtype != bool and not np.isin(values, (0, 1)).all():
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
    bar.ax.set_yticklabels(["blocked\n(False)", "may attend\n(True)"], fontsize=TICK_SIZE)
    return ax


def plot_positional_encoding(table, ax: Axes | None = None, title: str | None = None) -> Axes:
    """The positional-encoding table as a heatmap (§3.5): positions down, dimensions across.

    Shapes: table (L, D).
    """
    values = _as_array("table", table, ndim=2, shape_hint="(L, D)")
    ax = _new_axes(ax, size=(9.0, 5.0))
    ax = plot_heatmap(
        values,
        ax=ax,
        xlabel="dimension i",
        ylabel="position pos",
        title=title or "Positional encoding PE[pos, i]",
        cmap="RdBu_r",
        vmin=-1.0,
        vmax=1.0,
        colorbar_label="value",
    )
    return ax


def plot_pe_curves(
    table,
    dims: Sequence[int],
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Chosen columns of the PE table as curves over positions: low dims oscillate fast.

    Shapes: table (L, D); dims are column indices in [0, D).
    """
    values = _as_array("table", table, ndim=2, shape_hint="(L, D)")
    length, width = values.shape
    for d in dims:
        if not 0 <= int(d) < width:
            fail("dims", f"column indices in [0, {width})", repr(list(dims)))
    ax = _new_axes(ax, size=(9.0, 5.0))
    for d in dims:
        ax.plot(np.arange(length), values[:, int(d)], label=f"dim {int(d)}", linewidth=2)
    ax.set_xlabel("position pos", fontsize=LABEL_SIZE)
    ax.set_ylabel("PE[pos, dim]", fontsize=LABEL_SIZE)
    ax.set_title(title or "Positional-encoding curves", fontsize=TITLE_SIZE)
    if len(dims):
        ax.legend(fontsize=TICK_SIZE, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.grid(alpha=0.3)
    return ax


# -- the architecture (Figure 1) ----------------------------------------------------------

_COLOURS = {
    "attn": "#fbd9a6",
    "ffn": "#c3e3f7",
    "norm": "#f4f1bb",
    "embed": "#f9c6c9",
    "linear": "#d9d2e9",
    "softmax": "#c9e8c4",
}


def _box(
    ax: Axes, x: float, y: float, text: str, kind: str, width: float = 3.0, height: float = 0.7
) -> tuple[float, float]:
    ax.add_patch(
        FancyBboxPatch(
            (x - width / 2, y - height / 2),
            width,
            height,
            boxstyle="round,pad=0.05",
            facecolor=_COLOURS[kind],
            edgecolor="black",
            linewidth=1.2,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=LABEL_SIZE - 1)
    return x, y


def _arrow(
    ax: Axes, start: tuple[float, float], end: tuple[float, float], style: str = "-|>"
) -> None:
    ax.add_patch(
        FancyArrowPatch(
            start, end, arrowstyle=style, mutation_scale=14, linewidth=1.3, color="black"
        )
    )


def _stack(
    ax: Axes, x: float, sublayers: list[tuple[str, str]], y0: float, label: str
) -> list[float]:
    """Sub-layers bottom-up with Add & Norm after each; returns the y of each sub-layer."""
    ys, y = [], y0
    for text, kind in sublayers:
        ys.append(y)
        _box(ax, x, y, text, kind)
        _box(ax, x, y + 0.9, "Add & Norm", "norm", height=0.5)
        _arrow(ax, (x, y + 0.35), (x, y + 0.65))
        y += 1.8
        _arrow(ax, (x, y - 1.8 + 1.15), (x, y - 0.35))
    top = y - 1.8 + 1.2
    ax.add_patch(
        Rectangle(
            (x - 1.9, y0 - 0.75),
            3.8,
            top - y0 + 0.95,
            fill=False,
            linestyle="--",
            linewidth=1.2,
            edgecolor="grey",
        )
    )
    ax.text(
        x + (-2.2 if x < 5 else 2.2),
        (y0 + top) / 2,
        label,
        ha="center",
        va="center",
        fontsize=TITLE_SIZE,
    )
    return ys


def plot_architecture(ax: Axes | None = None, config=None) -> Axes:
    """The encoder–decoder Transformer drawn like the paper's Figure 1.

    With a ``TransformerConfig`` the stack sizes, d_model, heads and d_ff are written in.
    """
    ax = _new_axes(ax, size=(10.0, 10.0))
    n_enc = getattr(config, "n_encoder_layers", "N")
    n_dec = getattr(config, "n_decoder_layers", "N")
    enc_x, dec_x = 3.0, 8.0
    for x, text in ((enc_x, "Input\nEmbedding"), (dec_x, "Output Embedding\n(shifted right)")):
        _box(ax, x, 0.5, text, "embed", height=0.9)
        ax.add_patch(plt.Circle((x, 1.7), 0.22, facecolor="white", edgecolor="black"))
        ax.text(x, 1.7, "+", ha="center", va="center", fontsize=LABEL_SIZE)
        side = -1 if x < 5 else 1  # label on the outer side of each stack
        ax.text(
            x + 0.4 * side,
            1.7,
            "Positional\nEncoding",
            ha="right" if side < 0 else "left",
            va="center",
            fontsize=TICK_SIZE - 1,
        )
        _arrow(ax, (x, 0.95), (x, 1.48))
        _arrow(ax, (x, 1.92), (x, 2.75))
    enc = _stack(
        ax, enc_x, [("Multi-Head\nAttention", "attn"), ("Feed\nForward", "ffn")], 3.1, f"{n_enc}×"
    )
    dec = _stack(
        ax,
        dec_x,
        [
            ("Masked Multi-Head\nAttention", "attn"),
            ("Multi-Head\nAttention", "attn"),
            ("Feed\nForward", "ffn"),
        ],
        3.1,
        f"{n_dec}×",
    )
    enc_top = enc[-1] + 1.15
    # the encoder output (memory) supplies keys and values to every cross-attention
    lane_x, lane_y = (enc_x + dec_x) / 2, enc_top + 0.5
    ax.plot(
        [enc_x, enc_x, lane_x, lane_x],
        [enc_top, lane_y, lane_y, dec[1]],
        color="black",
        linewidth=1.3,
    )
    _arrow(ax, (lane_x, dec[1]), (dec_x - 1.5, dec[1]))
    ax.text(
        (enc_x + lane_x) / 2,
        lane_y + 0.1,
        "memory (keys, values)",
        ha="center",
        va="bottom",
        fontsize=TICK_SIZE - 1,
    )
    top = dec[-1] + 1.15
    _box(ax, dec_x, top + 0.9, "Linear", "linear", height=0.6)
    _box(ax, dec_x, top + 1.9, "Softmax", "softmax", height=0.6)
    _arrow(ax, (dec_x, top), (dec_x, top + 0.6))
    _arrow(ax, (dec_x, top + 1.2), (dec_x, top + 1.6))
    ax.text(dec_x, top + 2.6, "Output probabilities", ha="center", fontsize=LABEL_SIZE)
    ax.text(
        dec_x + 1.7,
        top + 1.4,
        "(the model returns\nlogits; softmax lives\nin the loss)",
        ha="left",
        va="center",
        fontsize=TICK_SIZE - 2,
        style="italic",
    )
    ax.text(enc_x, 0.5 - 0.9, "Inputs", ha="center", fontsize=LABEL_SIZE)
    ax.text(dec_x, 0.5 - 0.9, "Outputs", ha="center", fontsize=LABEL_SIZE)
    if config is not None:
        ax.text(
            enc_x,
            top + 2.0,
            f"d_model={config.d_model}, h={config.n_heads},\n"
            f"d_k={config.d_model // config.n_heads}, d_ff={config.d_ff}",
            ha="center",
            fontsize=LABEL_SIZE - 1,
        )
    ax.set_xlim(-0.5, 11.5)
    ax.text(
        5.5,
        top + 3.3,
        "The Transformer (Vaswani et al., 2017, Figure 1)",
        ha="center",
        fontsize=TITLE_SIZE,
    )
    ax.set_ylim(-0.8, top + 3.9)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return ax


# -- training curves -----------------------------------------------------------------------


def _series(history) -> tuple[np.ndarray | None, dict[str, np.ndarray]]:
    """(steps or None, {name: values}) from a list of numbers, a dict, records or a dataclass."""
    if dataclasses.is_dataclass(history) and not isinstance(history, type):
        history = dataclasses.asdict(history)
    if isinstance(history, Sequence) and history and isinstance(history[0], Mapping):
        keys = [k for k in history[0] if all(k in record for record in history)]
        history = {k: [record[k] for record in history] for k in keys}
    if isinstance(history, Mapping):
        steps = history.get("step", history.get("steps"))
        series = {}
        for name, values in history.items():
            if name in ("step", "steps") or isinstance(values, (str, bytes)):
                continue
            array = _as_array(name, values) if np.ndim(values) == 1 else None
            if array is not None and array.dtype.kind in "fiu" and array.size:
                series[name] = array.astype(float)
        return (None if steps is None else np.asarray(steps, dtype=float)), series
    return None, {"loss": _as_array("history", history, ndim=1).astype(float)}


def plot_loss_curve(
    history, ax: Axes | None = None, title: str | None = None, log_scale: bool = False
) -> Axes:
    """Loss (and any other numeric series) against the training step.

    ``history``: a list of losses; a dict such as ``{"step": [...], "train_loss": [...],
    "valid_loss": [...]}``; a list of per-step dicts; or a dataclass of lists. A series
    as long as ``step`` is plotted against it, others against their own index.
    For a live curve, call ``ax.clear()`` and plot again.
    """
    steps, series = _series(history)
    if not series:
        fail("history", "a list of losses or a dict of numeric lists", type(history).__name__)
    ax = _new_axes(ax, size=(8.0, 4.5))
    for name, values in series.items():
        x = steps if steps is not None and len(steps) == len(values) else np.arange(len(values))
        ax.plot(x, values, label=name, linewidth=2, marker="o" if len(values) < 30 else None)
    ax.set_xlabel("step", fontsize=LABEL_SIZE)
    ax.set_ylabel("loss", fontsize=LABEL_SIZE)
    if log_scale:
        ax.set_yscale("log")
    ax.set_title(title or "Training loss", fontsize=TITLE_SIZE)
    ax.legend(fontsize=TICK_SIZE)
    ax.grid(alpha=0.3)
    return ax


def plot_lr_schedule(
    steps, lrs, ax: Axes | None = None, title: str | None = None, warmup_steps: int | None = None
) -> Axes:
    """Learning rate against step, e.g. the paper's warm-up schedule (§5.3).

    Shapes: steps (N,), lrs (N,) or a dict {label: (N,)} to compare schedules.
    """
    x = _as_array("steps", steps, ndim=1)
    curves = lrs if isinstance(lrs, Mapping) else {"learning rate": lrs}
    ax = _new_axes(ax, size=(8.0, 4.5))
    for label, values in curves.items():
        y = _as_array("lrs", values, ndim=1)
        if len(y) != len(x):
            fail("lrs", f"{len(x)} values (one per step)", str(len(y)))
        ax.plot(x, y, label=str(label), linewidth=2)
    if warmup_steps is not None:
        ax.axvline(
            warmup_steps, color="grey", linestyle="--", label=f"warmup_steps = {warmup_steps}"
        )
    ax.set_xlabel("step", fontsize=LABEL_SIZE)
    ax.set_ylabel("learning rate", fontsize=LABEL_SIZE)
    ax.set_title(title or "Learning-rate schedule", fontsize=TITLE_SIZE)
    ax.legend(fontsize=TICK_SIZE)
    ax.grid(alpha=0.3)
    return ax


def plot_alignment(
    weights,
    gold: Sequence[tuple[int, int]],
    src_tokens: Sequence,
    tgt_tokens: Sequence,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Cross-attention (target rows, source columns) with gold alignments boxed in red.

    ``gold`` holds Pharaoh pairs (i_src, j_tgt), so pair (i, j) is drawn at column i, row j.
    Shapes: weights (T, S).
    """
    values = _as_array("weights", weights, ndim=2, shape_hint="(T, S)")
    T, S = values.shape
    for i, j in gold:
        if not (0 <= i < S and 0 <= j < T):
            fail(
                "gold",
                f"(i_src, j_tgt) pairs with i < S={S} and j < T={T}",
                repr((i, j)),
                "Pairs are (source index, target index), Pharaoh order.",
            )
    ax = plot_heatmap(
        values,
        src_tokens,
        tgt_tokens,
        ax=ax,
        title=title or "Cross-attention (red boxes: gold alignment)",
        xlabel="source token (key)",
        ylabel="target token (query)",
        vmin=0.0,
        colorbar_label="attention weight",
    )
    for n, (i, j) in enumerate(gold):
        ax.add_patch(
            Rectangle(
                (i - 0.5, j - 0.5),
                1,
                1,
                fill=False,
                edgecolor="red",
                linewidth=2.5,
                label="gold alignment" if n == 0 else None,
            )
        )
    return ax
