"""03: the softmax temperature of attention scores (§3.2.1)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import ipywidgets as widgets
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from transformer_lib._checks import fail
from transformer_lib.i18n import _
from transformer_lib.teaching import viz
from transformer_lib.teaching.viz._common import ArrayLike
from transformer_lib.teaching.widgets._common import LABEL_STYLE, Panel, panel

__all__ = ["DEFAULT_TOKENS", "draw_attention_temperature", "attention_temperature_widget"]

DEFAULT_TOKENS = ["the", "small", "cat", "sat", "on", "the", "mat"]


def draw_attention_temperature(
    ax: Axes,
    scores: ArrayLike,
    temperature: float = 1.0,
    query_tokens: Sequence[str] | None = None,
    key_tokens: Sequence[str] | None = None,
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
        title=_("temperature {temperature:.3g}: mean top weight {top:.2f}").format(
            temperature=temperature, top=top
        ),
    )
    return weights


def attention_temperature_widget(
    scores: ArrayLike | None = None,
    query_tokens: Sequence[str] | None = None,
    key_tokens: Sequence[str] | None = None,
    d_k: int = 64,
) -> Panel:
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
            description=_("temperature"),
            continuous_update=False,
            readout_format=".2f",
            style=LABEL_STYLE,
        )
    }

    def render(temperature: float) -> Figure:
        fig = Figure(figsize=(7, 5.5), layout="constrained")
        draw_attention_temperature(fig.add_subplot(), scores, temperature, query_tokens, key_tokens)
        return fig

    return panel(_("attention temperature slider"), render, controls)
