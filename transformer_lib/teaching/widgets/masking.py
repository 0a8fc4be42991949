"""04: the mask builder: padding and causal masks of a padded batch."""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets
import torch
from matplotlib.figure import Figure

from transformer_lib._checks import check_int, fail
from transformer_lib.i18n import N_, _
from transformer_lib.model.masks import causal_mask, padding_mask
from transformer_lib.teaching import viz
from transformer_lib.teaching.widgets._common import (
    Canvas,
    Panel,
    checkbox,
    grid_axes,
    panel,
    slider,
)

__all__ = ["draw_mask_builder", "mask_builder_widget"]

# A panel's mask, by (padding, causal): its title says which.
_KINDS = {
    (True, True): N_("padding AND causal"),
    (True, False): N_("padding"),
    (False, True): N_("causal"),
    (False, False): N_("no mask"),
}


def draw_mask_builder(
    fig_or_axes: Canvas,
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
    kind = _(_KINDS[bool(pad), bool(causal)])
    for b, ax in enumerate(grid_axes(fig_or_axes, B)):
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
            title=_("sequence {index} ({kind})").format(index=b, kind=kind),
        )
    return mask


def mask_builder_widget(lengths: Sequence[int] = (5, 3, 4), max_len: int = 8) -> Panel:
    """Check boxes for the padding and causal parts, a length slider per sequence."""
    controls: dict[str, widgets.Widget] = {
        "pad": checkbox(_("padding mask"), True),
        "causal": checkbox(_("causal mask"), True),
    }
    for b, length in enumerate(lengths):
        label = _("length of sequence {index}").format(index=b)
        controls[f"length_{b}"] = slider(label, length, 1, max_len)

    def render(pad: bool, causal: bool, **sizes: int) -> Figure:
        chosen = [sizes[f"length_{b}"] for b in range(len(lengths))]
        fig = Figure(figsize=(4.5 * len(chosen), 4.2), layout="constrained")
        draw_mask_builder(fig, chosen, causal=causal, pad=pad)
        return fig

    return panel(_("mask builder: mask check boxes and length sliders"), render, controls)
