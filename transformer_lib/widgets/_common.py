"""What every widget shares: Axes from a Figure or given Axes, the controls-above-figure
panel with a readable plain-text form, and controls whose labels are never cut."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ipywidgets as widgets
import numpy as np
from IPython.display import display
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from transformer_lib._checks import fail
from transformer_lib.i18n import _

# Where a draw_* function draws: a Figure (cleared first) or Axes (one, a list, an array).
Canvas = Figure | Axes | Sequence[Axes] | np.ndarray

# ipywidgets gives every label a fixed 80 px and cuts longer ones ("temperat…");
# "initial" sizes each label to its text.
LABEL_STYLE = {"description_width": "initial"}


class Panel(widgets.VBox):
    """A VBox whose plain-text form says what it is.

    A notebook opened before it runs shows a widget's text/plain output, which ipywidgets
    makes from ``repr``: the default would be ``VBox(children=(…``.
    """

    def __init__(self, name: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.name = name

    def __repr__(self) -> str:
        return _("Interactive widget ({name}): run the cell to use it.").format(name=self.name)


def grid_axes(fig_or_axes: Canvas, n: int) -> list[Axes]:
    """``n`` Axes side by side: from a Figure (cleared first) or from a sequence of Axes."""
    if isinstance(fig_or_axes, Figure):
        fig_or_axes.clear()
        return list(fig_or_axes.subplots(1, n, squeeze=False).ravel())
    axes = [fig_or_axes] if isinstance(fig_or_axes, Axes) else list(np.ravel(fig_or_axes))
    if len(axes) < n or not all(isinstance(ax, Axes) for ax in axes):
        fail("fig_or_axes", f"a matplotlib Figure or {n} Axes", f"{len(axes)} objects")
    return axes[:n]


def panel(name: str, render: Callable[..., Figure], controls: dict[str, widgets.Widget]) -> Panel:
    """Controls above an Output that shows ``render(**values)``, redrawn on every change.

    ``name`` says what the widget is, for its plain-text form (see :class:`Panel`).
    """
    box = Panel(name)

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
        style=LABEL_STYLE,
    )


def checkbox(description: str, value: bool) -> widgets.Checkbox:
    """A check box with its label right beside it (no empty 80 px indent before it) and no
    wider than the two."""
    return widgets.Checkbox(
        value=value,
        description=description,
        indent=False,
        layout=widgets.Layout(width="auto", margin="2px 2em 2px 2px"),
    )
