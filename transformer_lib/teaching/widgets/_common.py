"""What every widget shares: Axes from a Figure or given Axes, the controls-above-figure
panel with a readable plain-text form, and controls whose labels are never cut."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence

import ipywidgets as widgets
import numpy as np
from IPython import get_ipython
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
        fail("fig_or_axes", "a matplotlib Figure or {n} Axes", f"{len(axes)} objects", n=n)
    return axes[:n]


def shown(*items: object) -> tuple[dict, ...]:
    """``items`` as an Output widget's ``outputs``: a str as printed text, anything else (a
    Figure) as ``display`` shows it."""
    shell = get_ipython()  # None outside a kernel (tests): plain text then
    outputs = []
    for item in items:
        if isinstance(item, str):
            outputs.append({"output_type": "stream", "name": "stdout", "text": item + "\n"})
            continue
        data, metadata = shell.display_formatter.format(item) if shell else ({}, {})
        data = data or {"text/plain": repr(item)}
        outputs.append({"output_type": "display_data", "data": data, "metadata": metadata})
    return tuple(outputs)


def live_output(
    show: Callable[..., tuple[dict, ...]], controls: dict[str, widgets.Widget]
) -> widgets.Output:
    """An Output showing ``show(**values)`` (made with :func:`shown`), redrawn whenever a
    control's value changes; an error on a change is shown in its place.

    Like ``ipywidgets.interactive_output``, except that it sets the Output's ``outputs``
    instead of capturing them with ``with out:``. A client that stands in for the browser's
    Output widget (nbclient's, which runs notebooks for nbgrader, ``nbconvert --execute`` and
    the tests) answers every captured message with an update on the shell channel while it
    waits there for the cell's reply. jupyter_client sends it through a blocking shadow of
    its asyncio socket (``Session.send``; see jupyter_client PR 1059), and that send takes
    the socket's pending wake-up (libzmq's ``ZMQ_FD`` is edge-triggered) behind zmq.asyncio's
    back: on a loaded machine, a reply that had just arrived was read only when the cell's
    timeout ran out (``benchmarks/kernel_stalls.py``).
    """
    out = widgets.Output()

    def redraw() -> None:
        out.outputs = show(**{name: control.value for name, control in controls.items()})

    def on_change(_change: dict) -> None:
        try:
            redraw()
        except Exception as error:  # the slider's user sees it where the figure was
            message = "".join(traceback.format_exception_only(error))
            out.outputs = ({"output_type": "stream", "name": "stderr", "text": message},)

    for control in controls.values():
        control.observe(on_change, "value")
    redraw()  # the first figure: an error here fails the cell that builds the widget
    return out


def panel(name: str, render: Callable[..., Figure], controls: dict[str, widgets.Widget]) -> Panel:
    """Controls above an Output that shows ``render(**values)``, redrawn on every change.

    ``name`` says what the widget is, for its plain-text form (see :class:`Panel`).
    """
    box = Panel(name)

    def show(**values: object) -> tuple[dict, ...]:
        box.figure = render(**values)
        return shown(box.figure)

    out = live_output(show, controls)
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
