"""Interactive widgets for the notebooks, built on plain drawing functions.

Each widget has two halves:

- a ``draw_*`` function that draws into a given Matplotlib Figure (or Axes) and returns
  what it drew, so tests call it directly, without a browser;
- a ``*_widget`` builder that wires ipywidgets controls to that function and returns a
  ``Panel`` (a ``VBox``: controls on top, the figure below). It works with the plain
  inline backend (JupyterLab 4, ipywidgets 8, no ipympl): every change draws a fresh
  ``Figure`` into an ``Output``. The box carries ``.controls`` (name -> control) and
  ``.figure`` (the last figure drawn), handy for tests and for driving a widget from code.
  Every label is shown whole, and the plain-text form (what a notebook shows before it
  runs) names the widget instead of listing its children.

Widgets: PE explorer (02), attention temperature (03), mask builder (04), head picker (05).
Shapes: T query length, S key length, H heads, D d_model.

Modules, one per widget: ``positional``, ``temperature``, ``masking``, ``heads``;
``_common`` holds what they share.
"""

from transformer_lib.teaching.widgets.heads import draw_head_picker, head_picker_widget
from transformer_lib.teaching.widgets.masking import draw_mask_builder, mask_builder_widget
from transformer_lib.teaching.widgets.positional import draw_pe_explorer, pe_explorer_widget
from transformer_lib.teaching.widgets.temperature import (
    DEFAULT_TOKENS,
    attention_temperature_widget,
    draw_attention_temperature,
)

__all__ = [
    "DEFAULT_TOKENS",
    "draw_pe_explorer",
    "pe_explorer_widget",
    "draw_attention_temperature",
    "attention_temperature_widget",
    "draw_mask_builder",
    "mask_builder_widget",
    "draw_head_picker",
    "head_picker_widget",
]
