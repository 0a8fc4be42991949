"""Interactive widgets for the notebooks, built on plain drawing functions.

Each widget has two halves:

- a ``draw_*`` function that draws into a given Matplotlib Figure (or Axes) and returns
  what it drew, so tests call it directly, without a browser;
- a ``*_widget`` builder that wires ipywidgets controls to that function and returns a
  ``VBox`` (controls on top, the figure below). It works with the plain inline backend
  (JupyterLab 4, ipywidgets 8, no ipympl): every change draws a fresh ``Figure`` into an
  ``Output``. The box carries ``.controls`` (name -> control) and ``.figure`` (the last
  figure drawn), handy for tests and for driving a widget from code.

Widgets: PE explorer (02), attention temperature (03), mask builder (04), head picker (05).
Shapes: T query length, S key length, H heads, D d_model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import ipywidgets as widgets
import numpy as np
import torch
from IPython.display import display
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from transformer_lib import viz
from transformer_lib._checks import check_int, fail
from transformer_lib.embeddings import sinusoidal_positional_encoding
from transformer_lib.masks import causal_mask, padding_mask

DEFAULT_TOKENS = ["the", "small", "cat", "sat", "on", "the", "mat"]


def _axes(fig_or_axes, n: int, ncols: int | None = None) -> list[Axes]:
    """``n`` Axes: from a Figure (cleared, a new grid) or from a sequence of Axes."""
    if isinstance(fig_or_axes, Figure):
        fig_or_axes.clear()
        ncols = n if ncols is None else ncols
        grid = fig_or_axes.subplots(math.ceil(n / ncols), ncols, squeeze=False)
        for ax in grid.ravel()[n:]:
            ax.set_axis_off()
        return list(grid.ravel()[:n])
    axes = [fig_or_axes] if isinstance(fig_or_axes, Axes) else list(np.ravel(fig_or_axes))
    if len(axes) < n or not all(isinstance(ax, Axes) for ax in axes):
        fail("fig_or_axes", f"a matplotlib Figure or {n} Axes", f"{len(axes)} objects")
    return axes[:n]


def _panel(
    render: Callable[..., Figure],
    controls: dict[str, widgets.Widget],
    layout: Sequence[widgets.Widget] | None = None,
) -> widgets.VBox:
    """Controls above an Output that shows ``render(**values)``, redrawn on every change."""
    box = widgets.VBox()

    def show(**values) -> None:
        box.figure = render(**values)
        display(box.figure)

    out = widgets.interactive_output(show, controls)
    rows = list(layout) if layout is not None else list(controls.values())
    box.children = [widgets.HBox(rows, layout=widgets.Layout(flex_flow="row wrap")), out]
    box.controls = controls
    return box


def _slider(description: str, value: int, low: int, high: int, step: int = 1) -> widgets.IntSlider:
    return widgets.IntSlider(
        value=value,
        min=low,
        max=high,
        step=step,
        description=description,
        continuous_update=False,
        style={"description_width": "initial"},
    )


# -- 02 positional encoding explorer -------------------------------------------------------


def draw_pe_explorer(
    fig_or_axes,
    d_model: int = 64,
    position: int = 10,
    dims: Sequence[int] = (0, 1, 10, 11),
    max_len: int = 100,
) -> list[Axes]:
    """Table heatmap, curves of the chosen columns, and the vector PE[position] (§3.5).

    Shapes: builds a (max_len, d_model) table; ``dims`` are column indices < d_model.
    Returns [heatmap Axes, curves Axes, vector Axes].
    """
    check_int("position", position, minimum=0)
    if position >= max_len:
        fail("position", f"an int < max_len={max_len}", repr(position))
    table = sinusoidal_positional_encoding(max_len, d_model)  # (L, D)
    heat, curves, vector = _axes(fig_or_axes, 3)
    viz.plot_positional_encoding(table, ax=heat, title=f"PE table, d_model={d_model}")
    heat.axhline(position, color="black", linewidth=2)
    for d in dims:
        heat.axvline(d, color="black", linestyle=":", linewidth=1.5)
    viz.plot_pe_curves(table, dims, ax=curves, title="chosen dimensions")
    curves.axvline(position, color="black", linewidth=1.5)
    for d in dims:
        curves.plot([position], [float(table[position, d])], "o", color="black")
    vector.bar(np.arange(d_model), table[position].numpy(), color="tab:blue")
    vector.set_ylim(-1.1, 1.1)
    vector.set_xlabel("dimension i", fontsize=viz.LABEL_SIZE)
    vector.set_ylabel("value", fontsize=viz.LABEL_SIZE)
    vector.set_title(f"the vector PE[{position}]", fontsize=viz.TITLE_SIZE)
    return [heat, curves, vector]


def pe_explorer_widget(
    d_model: int = 64, position: int = 10, max_len: int = 100, max_d_model: int = 256
) -> widgets.VBox:
    """Sliders for d_model, position and two (sin, cos) column pairs of the PE table."""
    controls = {
        "d_model": _slider("d_model", d_model, 8, max_d_model, 8),
        "position": _slider("position", position, 0, max_len - 1),
        "dim_a": _slider("dimension pair a", 0, 0, d_model - 2, 2),
        "dim_b": _slider("dimension pair b", min(10, d_model - 2), 0, d_model - 2, 2),
    }

    def follow_width(change) -> None:  # the dimension sliders never exceed d_model
        for name in ("dim_a", "dim_b"):
            controls[name].max = change["new"] - 2

    controls["d_model"].observe(follow_width, "value")

    def render(d_model: int, position: int, dim_a: int, dim_b: int) -> Figure:
        fig = Figure(figsize=(15, 4.5), layout="constrained")
        dims = sorted({dim_a, dim_a + 1, dim_b, dim_b + 1})
        draw_pe_explorer(fig, d_model, position, [d for d in dims if d < d_model], max_len)
        return fig

    return _panel(render, controls)


# -- 03 attention temperature --------------------------------------------------------------


def draw_attention_temperature(
    ax: Axes,
    scores,
    temperature: float = 1.0,
    query_tokens: Sequence | None = None,
    key_tokens: Sequence | None = None,
) -> torch.Tensor:
    """Heatmap of softmax(scores / temperature): low temperature sharpens, high flattens.

    Dividing q·k by √d_k is this with temperature √d_k (§3.2.1).
    Shapes: scores (T, S) -> returns the drawn weights (T, S).
    """
    if not isinstance(temperature, (int, float)) or temperature <= 0:
        fail("temperature", "a number > 0", repr(temperature))
    scores = torch.as_tensor(scores, dtype=torch.float32)
    weights = torch.softmax(scores / temperature, dim=-1)  # (T, S), rows sum to 1
    top = weights.max(dim=-1).values.mean().item()
    viz.plot_attention(
        weights,
        query_tokens,
        key_tokens,
        ax=ax,
        vmax=1.0,
        title=f"temperature {temperature:.3g}: mean top weight {top:.2f}",
    )
    return weights


def attention_temperature_widget(
    scores=None,
    query_tokens: Sequence | None = None,
    key_tokens: Sequence | None = None,
    d_k: int = 64,
) -> widgets.VBox:
    """A log slider for the softmax temperature over fixed raw scores q·kᵀ.

    Without ``scores``, uses seeded random q, k of width ``d_k`` (so scores have variance
    d_k, and temperature √d_k is the paper's scaling). Shapes: scores (T, S).
    """
    if scores is None:
        tokens = query_tokens or DEFAULT_TOKENS
        g = torch.Generator().manual_seed(0)
        q = torch.randn(len(tokens), d_k, generator=g)  # (T, d_k)
        k = torch.randn(len(key_tokens or tokens), d_k, generator=g)  # (S, d_k)
        scores = q @ k.T  # (T, d_k) @ (d_k, S) -> (T, S)
        query_tokens, key_tokens = tokens, key_tokens or tokens
    controls = {
        "temperature": widgets.FloatLogSlider(
            value=math.sqrt(d_k),
            base=10,
            min=-1,
            max=2,
            step=0.05,
            description="temperature",
            continuous_update=False,
            readout_format=".2f",
        )
    }

    def render(temperature: float) -> Figure:
        fig = Figure(figsize=(7, 5.5), layout="constrained")
        draw_attention_temperature(fig.add_subplot(), scores, temperature, query_tokens, key_tokens)
        return fig

    return _panel(render, controls)


# -- 04 mask builder -----------------------------------------------------------------------


def draw_mask_builder(
    fig_or_axes,
    lengths: Sequence[int],
    causal: bool = True,
    pad: bool = True,
    tokens: Sequence[Sequence[str]] | None = None,
) -> torch.Tensor:
    """The mask of a padded batch, one panel per sequence: padding, causal, or both (AND).

    ``lengths`` are the real lengths; shorter sequences are padded to T = max(lengths).
    Shapes: returns the drawn masks (B, T, T), bool, True = may attend.
    """
    if not lengths:
        fail("lengths", "at least one sequence length", repr(lengths))
    for length in lengths:
        check_int("lengths", length, minimum=1)
    B, T = len(lengths), max(lengths)
    ids = torch.tensor([[1] * n + [0] * (T - n) for n in lengths])  # (B, T), 0 = <pad>
    mask = torch.ones(B, 1, T, T, dtype=torch.bool)
    if pad:
        mask = mask & padding_mask(ids, pad_id=0)  # (B, 1, 1, T): blocks padded keys
    if causal:
        mask = mask & causal_mask(T)  # (1, 1, T, T): blocks the future
    mask = mask[:, 0]  # (B, 1, T, T) -> (B, T, T)
    kind = " AND ".join(name for name, on in (("padding", pad), ("causal", causal)) if on)
    for b, ax in enumerate(_axes(fig_or_axes, B)):
        labels = (
            list(tokens[b])
            if tokens is not None
            else ([f"t{i}" for i in range(lengths[b])] + ["<pad>"] * (T - lengths[b]))
        )
        viz.plot_mask(
            mask[b],
            ax=ax,
            x_labels=labels,
            y_labels=labels,
            title=f"sequence {b} ({kind or 'no mask'})",
        )
    return mask


def mask_builder_widget(lengths: Sequence[int] = (5, 3, 4), max_len: int = 8) -> widgets.VBox:
    """Check boxes for the padding and causal parts, a length slider per sequence."""
    controls: dict[str, widgets.Widget] = {
        "pad": widgets.Checkbox(value=True, description="padding mask"),
        "causal": widgets.Checkbox(value=True, description="causal mask"),
    }
    for b, length in enumerate(lengths):
        controls[f"length_{b}"] = _slider(f"length of sequence {b}", length, 1, max_len)

    def render(pad: bool, causal: bool, **sizes: int) -> Figure:
        chosen = [sizes[f"length_{b}"] for b in range(len(lengths))]
        fig = Figure(figsize=(4.5 * len(chosen), 4.2), layout="constrained")
        draw_mask_builder(fig, chosen, causal=causal, pad=pad)
        return fig

    return _panel(render, controls)


# -- 05 head picker ------------------------------------------------------------------------


def _heads(weights) -> torch.Tensor:
    weights = torch.as_tensor(weights).detach().cpu()
    while weights.dim() > 3 and weights.size(0) == 1:
        weights = weights[0]  # (1, H, T, S) -> (H, T, S)
    if weights.dim() != 3:
        fail(
            "weights",
            "attention weights of shape (H, T, S) or (1, H, T, S)",
            f"shape {tuple(weights.shape)}",
            "Select one example first, e.g. weights[0].",
        )
    return weights


def draw_head_picker(
    ax: Axes,
    weights,
    head: int,
    query_tokens: Sequence | None = None,
    key_tokens: Sequence | None = None,
    title: str | None = None,
) -> torch.Tensor:
    """The attention map of one head, any number of heads.

    Shapes: weights (H, T, S) or (1, H, T, S) -> returns the drawn (T, S) map.
    """
    weights = _heads(weights)
    n_heads = weights.size(0)
    check_int("head", head, minimum=0)
    if head >= n_heads:
        fail("head", f"an int < n_heads={n_heads}", repr(head))
    viz.plot_attention(
        weights[head], query_tokens, key_tokens, ax=ax, title=title or f"head {head} of {n_heads}"
    )
    return weights[head]


def head_picker_widget(
    weights, query_tokens: Sequence | None = None, key_tokens: Sequence | None = None
) -> widgets.VBox:
    """A head slider (and a layer slider when given a list of layers) over attention maps.

    ``weights``: (H, T, S), (1, H, T, S), or a list with one such tensor per layer
    (as ``model.encode(..., return_attention=True)`` returns).
    """
    layers = (
        [_heads(w) for w in weights] if isinstance(weights, (list, tuple)) else [_heads(weights)]
    )
    n_heads = layers[0].size(0)
    controls = {"head": _slider("head", 0, 0, n_heads - 1)}
    if len(layers) > 1:
        controls["layer"] = _slider("layer", 0, 0, len(layers) - 1)

    def render(head: int, layer: int = 0) -> Figure:
        T, S = layers[layer].shape[1:]
        fig = Figure(figsize=(min(12, 0.5 * S + 3), min(10, 0.5 * T + 2)), layout="constrained")
        title = f"layer {layer}, head {head} of {n_heads}" if len(layers) > 1 else None
        draw_head_picker(fig.add_subplot(), layers[layer], head, query_tokens, key_tokens, title)
        return fig

    return _panel(render, controls)
