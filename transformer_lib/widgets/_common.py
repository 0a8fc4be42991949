"""What every widget shares: Axes from a Figure or given Axes, the controls-above-figure
panel, and an integer slider."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ipywidgets as widgets
import numpy as np
from IPython.display import display
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from transformer_lib._checks import fail

# Where a draw_* function draws: a Figure (cleared first) or Axes (one, a list, an array).
Canvas = Figure | Axes | Sequence[Axes] | np.ndarray


def grid_axes(fig_or_axes: Canvas, n: int) -> list[Axes]:
    """``n`` Axes side by side: from a Figure (cleared first) or from a sequence of Axes."""
    if isinstance(fig_or_axes, Figure):
        fig_or_axes.clear()
        return list(fig_or_axes.subplots(1, n, squeeze=False).ravel())
    axes = [fig_or_axes] if isinstance(fig_or_axes, Axes) else list(np.ravel(fig_or_axes))
    if len(axes) < n or not all(isinstance(ax, Axes) for ax in axes):
        fail("fig_or_axes", f"a matplotlib Figure or {n} Axes", f"{len(axes)} objects")
    return axes[:n]


def panel(render: Callable[..., Figure], controls: dict[str, widgets.Widget]) -> widgets.VBox:
    """Controls above an Output that shows ``render(**values)``, redrawn on every change."""
    box = widgets.VBox()

    def show(**values: object) -> None:
        box.figure = render(**values)
        display(box.figure)

    out = widgets.interactive_output(show, controls)
    row = widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
    box.children = [row, out]
    box.controls = controls
    return box


def slider(description: str, value: int, low: int, high: int, step: int = 1) -> widgets.IntSlider:
    """An int slider that redraws when released, its whole description visible."""
    return widgets.IntSlider(
        value=value,
        min=low,
        max=high,
        step=step,
        description=description,
        continuous_update=False,
        style={"description_width": "initial"},
    )
