"""02: the positional-encoding explorer (§3.5)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from transformer_lib._checks import check_int, fail
from transformer_lib.i18n import _
from transformer_lib.model.embeddings import sinusoidal_positional_encoding
from transformer_lib.teaching import viz
from transformer_lib.teaching.viz.positional import COLUMN, VALUE
from transformer_lib.teaching.widgets._common import Canvas, Panel, grid_axes, panel, slider

__all__ = ["draw_pe_explorer", "pe_explorer_widget"]


def draw_pe_explorer(
    fig_or_axes: Canvas,
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
        fail("position", "an int < max_len={max_len}", repr(position), max_len=max_len)
    table = sinusoidal_positional_encoding(max_len, d_model)  # (L, D)
    heat, curves, vector = grid_axes(fig_or_axes, 3)
    title = _("PE table, d_model={d_model}").format(d_model=d_model)
    viz.plot_positional_encoding(table, ax=heat, title=title)
    heat.axhline(position, color="black", linewidth=2)
    for d in dims:
        heat.axvline(d, color="black", linestyle=":", linewidth=1.5)
    viz.plot_pe_curves(table, dims, ax=curves, title=_("chosen dimensions"))
    curves.axvline(position, color="black", linewidth=1.5)
    for d in dims:
        curves.plot([position], [float(table[position, d])], "o", color="black")
    vector.bar(np.arange(d_model), table[position].numpy(), color="tab:blue")
    vector.set_ylim(-1.1, 1.1)
    vector.set_xlabel(_(COLUMN), fontsize=viz.LABEL_SIZE)
    vector.set_ylabel(_(VALUE), fontsize=viz.LABEL_SIZE)
    title = _("the vector PE[{position}]").format(position=position)
    vector.set_title(title, fontsize=viz.TITLE_SIZE)
    return [heat, curves, vector]


def pe_explorer_widget(
    d_model: int = 64, position: int = 10, max_len: int = 100, max_d_model: int = 256
) -> Panel:
    """Sliders for d_model, position and two (sin, cos) column pairs of the PE table."""
    controls = {
        "d_model": slider("d_model", d_model, 8, max_d_model, 8),
        "position": slider(_("position"), position, 0, max_len - 1),
        "dim_a": slider(_("dimension pair a"), 0, 0, d_model - 2, 2),
        "dim_b": slider(_("dimension pair b"), min(10, d_model - 2), 0, d_model - 2, 2),
    }

    def follow_width(change: dict) -> None:  # the dimension sliders never exceed d_model
        for name in ("dim_a", "dim_b"):
            controls[name].max = change["new"] - 2

    controls["d_model"].observe(follow_width, "value")

    def render(d_model: int, position: int, dim_a: int, dim_b: int) -> Figure:
        fig = Figure(figsize=(15, 4.5), layout="constrained")
        dims = sorted({dim_a, dim_a + 1, dim_b, dim_b + 1})
        draw_pe_explorer(fig, d_model, position, [d for d in dims if d < d_model], max_len)
        return fig

    name = _("positional-encoding explorer: d_model, position and pair sliders")
    return panel(name, render, controls)
