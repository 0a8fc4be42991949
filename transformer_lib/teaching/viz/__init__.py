"""Figures for the notebooks: heatmaps, masks, positional encodings, the architecture, curves.

Every function takes tensors (or arrays), accepts ``ax=None`` (a new figure is made
when none is given), returns the Axes (or an array of Axes) and never calls
``savefig`` or ``show``: the notebook decides what to do with the figure. Labels,
titles and colour bars are set large enough to read on a projector. Nothing here
assumes a number of heads or layers.

Modules: ``heatmaps`` (the heatmap core, attention), ``masks`` (masks, alignments), ``positional``
(the positional-encoding table), ``architecture`` (Figure 1), ``curves`` (loss and
learning rate, results over seeds); ``_common`` holds what they share.

Shapes:
    T query (target) length, S key (source) length, H heads, L positions, D d_model.
Attention plots put keys on the x axis and queries on the y axis: row t shows
where query t looks.
"""

from transformer_lib.teaching.viz._common import LABEL_SIZE, TICK_SIZE, TITLE_SIZE
from transformer_lib.teaching.viz.architecture import plot_architecture
from transformer_lib.teaching.viz.curves import plot_loss_curve, plot_lr_schedule, plot_seed_spread
from transformer_lib.teaching.viz.heatmaps import (
    plot_attention,
    plot_attention_heads,
    plot_heatmap,
    show_heatmaps,
)
from transformer_lib.teaching.viz.masks import MASK_CMAP, plot_alignment, plot_mask
from transformer_lib.teaching.viz.positional import plot_pe_curves, plot_positional_encoding

__all__ = [
    "LABEL_SIZE",
    "TICK_SIZE",
    "TITLE_SIZE",
    "MASK_CMAP",
    "plot_heatmap",
    "show_heatmaps",
    "plot_attention",
    "plot_attention_heads",
    "plot_mask",
    "plot_alignment",
    "plot_positional_encoding",
    "plot_pe_curves",
    "plot_architecture",
    "plot_loss_curve",
    "plot_lr_schedule",
    "plot_seed_spread",
]
