"""05: the head picker: one attention map per head (and per layer)."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from transformer_lib._checks import check_int, fail
from transformer_lib.i18n import _
from transformer_lib.teaching import viz
from transformer_lib.teaching.viz._common import ArrayLike
from transformer_lib.teaching.widgets._common import Panel, panel, slider

__all__ = ["draw_head_picker", "head_picker_widget"]


def _heads(weights: ArrayLike) -> torch.Tensor:
    """One example's weights as an (H, T, S) CPU tensor; leading size-1 axes are dropped."""
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
    weights: ArrayLike,
    head: int,
    query_tokens: Sequence[str] | None = None,
    key_tokens: Sequence[str] | None = None,
    title: str | None = None,
) -> torch.Tensor:
    """The attention map of one head, any number of heads.

    Shapes: weights (H, T, S) or (1, H, T, S) -> returns the drawn (T, S) map.
    """
    weights = _heads(weights)
    n_heads = weights.size(0)
    check_int("head", head, minimum=0)
    if head >= n_heads:
        fail("head", "an int < n_heads={n_heads}", repr(head), n_heads=n_heads)
    viz.plot_attention(
        weights[head],
        query_tokens,
        key_tokens,
        ax=ax,
        title=title or _("head {head} of {n_heads}").format(head=head, n_heads=n_heads),
    )
    return weights[head]


def head_picker_widget(
    weights: ArrayLike | Sequence[ArrayLike],
    query_tokens: Sequence[str] | None = None,
    key_tokens: Sequence[str] | None = None,
) -> Panel:
    """A head slider (and a layer slider when given a list of layers) over attention maps.

    ``weights``: (H, T, S), (1, H, T, S), or a list with one such tensor per layer
    (as ``AttentionWeights.encoder`` holds them).
    """
    layers = (
        [_heads(w) for w in weights] if isinstance(weights, (list, tuple)) else [_heads(weights)]
    )
    n_heads = layers[0].size(0)
    controls = {"head": slider(_("head"), 0, 0, n_heads - 1)}
    if len(layers) > 1:
        controls["layer"] = slider(_("layer"), 0, 0, len(layers) - 1)

    def render(head: int, layer: int = 0) -> Figure:
        T, S = layers[layer].shape[1:]
        fig = Figure(figsize=(min(12, 0.5 * S + 3), min(10, 0.5 * T + 2)), layout="constrained")
        title = None
        if len(layers) > 1:
            title = _("layer {layer}, head {head} of {n_heads}").format(
                layer=layer, head=head, n_heads=n_heads
            )
        draw_head_picker(fig.add_subplot(), layers[layer], head, query_tokens, key_tokens, title)
        return fig

    if len(layers) > 1:
        name = _("head picker: head and layer sliders")
    else:
        name = _("head picker: head slider")
    return panel(name, render, controls)
