"""The encoder–decoder Transformer drawn like the paper's Figure 1 (§3), and the
decoder-only model of notebook 09 drawn the same way."""

from __future__ import annotations

from matplotlib.axes import Axes
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle

from transformer_lib.i18n import N_, _
from transformer_lib.model.config import TransformerConfig
from transformer_lib.teaching.viz._common import LABEL_SIZE, TICK_SIZE, TITLE_SIZE, new_axes

_COLOURS = {
    "attn": "#fbd9a6",
    "ffn": "#c3e3f7",
    "norm": "#f4f1bb",
    "embed": "#f9c6c9",
    "linear": "#d9d2e9",
    "softmax": "#c9e8c4",
}
# Sub-layers bottom-up, as (box text, colour kind); the text is looked up where drawn.
_ENCODER = [(N_("Multi-Head\nAttention"), "attn"), (N_("Feed\nForward"), "ffn")]
_DECODER = [
    (N_("Masked Multi-Head\nAttention"), "attn"),
    (N_("Multi-Head\nAttention"), "attn"),
    (N_("Feed\nForward"), "ffn"),
]
# A decoder-only model's layer: the decoder's without cross-attention (notebook 09).
_DECODER_ONLY = [_DECODER[0], _DECODER[2]]


def _box(
    ax: Axes, x: float, y: float, text: str, kind: str, width: float = 3.0, height: float = 0.7
) -> None:
    """A rounded box centred on (x, y), coloured by its ``kind``, with ``text`` in it."""
    ax.add_patch(
        FancyBboxPatch(
            (x - width / 2, y - height / 2),
            width,
            height,
            boxstyle="round,pad=0.05",
            facecolor=_COLOURS[kind],
            edgecolor="black",
            linewidth=1.2,
        )
    )
    ax.text(x, y, text, ha="center", va="center", fontsize=LABEL_SIZE - 1)


def _arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A black arrow from ``start`` to ``end``."""
    ax.add_patch(
        FancyArrowPatch(
            start, end, arrowstyle="-|>", mutation_scale=14, linewidth=1.3, color="black"
        )
    )


def _stack(
    ax: Axes, x: float, sublayers: list[tuple[str, str]], y0: float, label: str
) -> list[float]:
    """Sub-layers bottom-up with Add & Norm after each; returns the y of each sub-layer."""
    ys, y = [], y0
    for text, kind in sublayers:
        ys.append(y)
        _box(ax, x, y, _(text), kind)
        _box(ax, x, y + 0.9, _("Add & Norm"), "norm", height=0.5)
        _arrow(ax, (x, y + 0.35), (x, y + 0.65))
        y += 1.8
        _arrow(ax, (x, y - 1.8 + 1.15), (x, y - 0.35))
    top = y - 1.8 + 1.2
    ax.add_patch(
        Rectangle(
            (x - 1.9, y0 - 0.75),
            3.8,
            top - y0 + 0.95,
            fill=False,
            linestyle="--",
            linewidth=1.2,
            edgecolor="grey",
        )
    )
    ax.text(
        x + (-2.2 if x < 5 else 2.2),
        (y0 + top) / 2,
        label,
        ha="center",
        va="center",
        fontsize=TITLE_SIZE,
    )
    return ys


def _embedding(ax: Axes, x: float, text: str) -> None:
    """An embedding box, the ⊕ that adds the positional encoding, and their arrows."""
    _box(ax, x, 0.5, text, "embed", height=0.9)
    ax.add_patch(Circle((x, 1.7), 0.22, facecolor="white", edgecolor="black"))
    ax.text(x, 1.7, "+", ha="center", va="center", fontsize=LABEL_SIZE)
    side = -1 if x < 5 else 1  # label on the outer side of each stack
    ax.text(
        x + 0.4 * side,
        1.7,
        _("Positional\nEncoding"),
        ha="right" if side < 0 else "left",
        va="center",
        fontsize=TICK_SIZE - 1,
    )
    _arrow(ax, (x, 0.95), (x, 1.48))
    _arrow(ax, (x, 1.92), (x, 2.75))


def _memory(ax: Axes, enc_x: float, dec_x: float, enc_top: float, cross_y: float) -> None:
    """The encoder output (memory) supplies keys and values to every cross-attention."""
    lane_x, lane_y = (enc_x + dec_x) / 2, enc_top + 0.5
    ax.plot(
        [enc_x, enc_x, lane_x, lane_x],
        [enc_top, lane_y, lane_y, cross_y],
        color="black",
        linewidth=1.3,
    )
    _arrow(ax, (lane_x, cross_y), (dec_x - 1.5, cross_y))
    ax.text(
        (enc_x + lane_x) / 2,
        lane_y + 0.1,
        _("memory (keys, values)"),
        ha="center",
        va="bottom",
        fontsize=TICK_SIZE - 1,
    )


def _output_head(ax: Axes, x: float, top: float) -> None:
    """Linear and softmax above the decoder stack, whose top is at ``top``."""
    _box(ax, x, top + 0.9, _("Linear"), "linear", height=0.6)
    _box(ax, x, top + 1.9, _("Softmax"), "softmax", height=0.6)
    _arrow(ax, (x, top), (x, top + 0.6))
    _arrow(ax, (x, top + 1.2), (x, top + 1.6))
    ax.text(x, top + 2.6, _("Output probabilities"), ha="center", fontsize=LABEL_SIZE)
    ax.text(
        x + 1.7,
        top + 1.4,
        _("(the model returns\nlogits; softmax lives\nin the loss)"),
        ha="left",
        va="center",
        fontsize=TICK_SIZE - 2,
        style="italic",
    )


def plot_architecture(ax: Axes | None = None, config: TransformerConfig | None = None) -> Axes:
    """The encoder–decoder Transformer drawn like the paper's Figure 1 (§3).

    With a ``TransformerConfig`` the stack sizes, d_model, heads and d_ff are written in.
    A config without an encoder (``n_encoder_layers=0``, ``TransformerConfig.decoder_only``)
    draws the decoder-only model of notebook 09 instead: one stack of masked self-attention
    and feed-forward layers, no encoder and no cross-attention.
    """
    if config is not None and config.n_encoder_layers == 0:
        return _plot_decoder_only(ax, config)
    ax = new_axes(ax, size=(10.0, 10.0))
    n_enc = "N" if config is None else config.n_encoder_layers
    n_dec = "N" if config is None else config.n_decoder_layers
    enc_x, dec_x = 3.0, 8.0
    _embedding(ax, enc_x, _("Input\nEmbedding"))
    _embedding(ax, dec_x, _("Output Embedding\n(shifted right)"))
    enc = _stack(ax, enc_x, _ENCODER, 3.1, f"{n_enc}×")
    dec = _stack(ax, dec_x, _DECODER, 3.1, f"{n_dec}×")
    _memory(ax, enc_x, dec_x, enc[-1] + 1.15, dec[1])
    top = dec[-1] + 1.15
    _output_head(ax, dec_x, top)
    ax.text(enc_x, 0.5 - 0.9, _("Inputs"), ha="center", fontsize=LABEL_SIZE)
    ax.text(dec_x, 0.5 - 0.9, _("Outputs"), ha="center", fontsize=LABEL_SIZE)
    if config is not None:
        ax.text(
            enc_x,
            top + 2.0,
            f"d_model={config.d_model}, h={config.n_heads},\n"
            f"d_k={config.d_model // config.n_heads}, d_ff={config.d_ff}",
            ha="center",
            fontsize=LABEL_SIZE - 1,
        )
    title = _("The Transformer (Vaswani et al., 2017, Figure 1)")
    ax.text(5.5, top + 3.3, title, ha="center", fontsize=TITLE_SIZE)
    ax.set_xlim(-0.5, 11.5)
    ax.set_ylim(-0.8, top + 3.9)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return ax


def _plot_decoder_only(ax: Axes | None, config: TransformerConfig) -> Axes:
    """The decoder-only model (notebook 09): the decoder's stack without cross-attention,
    drawn at the same scale as :func:`plot_architecture`'s encoder–decoder."""
    ax = new_axes(ax, size=(6.5, 10.0))
    x = 3.0
    _embedding(ax, x, _("Token Embedding\n(shifted right)"))
    layer_ys = _stack(ax, x, _DECODER_ONLY, 3.1, f"{config.n_decoder_layers}×")
    top = layer_ys[-1] + 1.15
    _output_head(ax, x, top)
    ax.text(x, 0.5 - 0.9, _("Tokens"), ha="center", fontsize=LABEL_SIZE)
    ax.text(
        x,
        top + 3.4,
        f"d_model={config.d_model}, h={config.n_heads}, "
        f"d_k={config.d_model // config.n_heads}, d_ff={config.d_ff}",
        ha="center",
        fontsize=LABEL_SIZE - 1,
    )
    ax.text(x + 1.0, top + 4.2, _("Decoder-only: no encoder, no cross-attention"),
            ha="center", fontsize=TITLE_SIZE)  # fmt: skip
    ax.set_xlim(-1.5, 8.0)
    ax.set_ylim(-0.8, top + 4.8)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return ax
