"""Position-wise feed-forward network and the encoder/decoder layers (paper §3.1, §3.3).

Each layer is a few sub-layers, each with its residual connection, dropout and LayerNorm
(:func:`sublayer_connection`, notebook 06), written out in ``forward`` as §3.1 states
them. Attention weights come out only when an
:class:`~transformer_lib.model.attention.AttentionWeights` is passed in.

Shapes:
    B batch, S source length, T target length, L either length (S or T), D d_model,
    H heads.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from transformer_lib._checks import check_int, check_mask, check_probability, check_width, fail
from transformer_lib.model.attention import AttentionWeights, MultiHeadAttention

# The FFN's non-linearity: the paper's max(0, ·), or GPT-2's GELU (notebook 09). F.gelu is
# the exact x·Φ(x), as nn.TransformerEncoderLayer(activation="gelu") computes it; GPT-2's
# code uses a tanh approximation of it.
ACTIVATIONS = {"relu": torch.relu, "gelu": nn.functional.gelu}


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to each position alone (§3.3).
    ``activation="gelu"`` puts GELU in the place of max(0, ·)."""

    def __init__(
        self, d_model: int, d_ff: int, dropout: float = 0.1, activation: str = "relu"
    ) -> None:
        super().__init__()
        check_int("d_ff", d_ff, minimum=1)
        check_probability("dropout", dropout)
        if activation not in ACTIVATIONS:
            fail("activation", "one of {choices}", repr(activation), choices=tuple(ACTIVATIONS))
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Shapes: (B, L, D) -> (B, L, d_ff) -> (B, L, D)."""
        hidden = ACTIVATIONS[self.activation](self.linear1(x))
        return self.linear2(self.dropout(hidden))

    def extra_repr(self) -> str:
        return f"activation={self.activation}"


def sublayer_connection(
    x: torch.Tensor,
    sublayer: Callable[[torch.Tensor], torch.Tensor],
    norm: nn.Module,
    dropout: nn.Module,
    norm_first: bool = False,
) -> torch.Tensor:
    """One sub-layer with its residual connection (§3.1, §5.4).

    Post-norm (paper): LayerNorm(x + Dropout(Sublayer(x))).
    Pre-norm (option): x + Dropout(Sublayer(LayerNorm(x))), easier to train deep.
    Dropout sits on the sub-layer's output, before the sum, never after the norm.

    Shapes: x (B, L, D) -> (B, L, D).
    """
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


def attend(
    attention: MultiHeadAttention,
    query: torch.Tensor,
    memory: torch.Tensor,
    mask: torch.Tensor | None,
    record: list[torch.Tensor] | None,
) -> torch.Tensor:
    """Attention from ``query`` over ``memory`` (keys and values); its weights are appended
    to ``record`` if given. Only then are they computed: without, attention may take
    PyTorch's fused path, which never forms the (B, H, T, S) weights. The layer has
    checked the inputs under its own argument names: ``attention`` does not again."""
    if record is None:
        return attention(query, memory, memory, mask, checked=True)
    output, weights = attention(query, memory, memory, mask, return_attention=True, checked=True)
    record.append(weights)
    return output


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each with residual + LayerNorm (§3.1)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
        attention_dropout: float = 0.0,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: x (B, S, D), mask broadcastable to (B, H, S, S), e.g. padding (B, 1, 1, S)
        -> (B, S, D). With ``attention``, appends (B, H, S, S) to ``attention.encoder``."""
        self._check_inputs(x, mask)
        weights = attention.encoder if attention is not None else None
        if self.norm_first:  # pre-norm: x + Dropout(Sublayer(LayerNorm(x)))
            h = self.norm1(x)
            x = x + self.dropout(attend(self.self_attn, h, h, mask, weights))
            h = self.norm2(x)
            return x + self.dropout(self.feed_forward(h))
        # post-norm, the paper's: LayerNorm(x + Dropout(Sublayer(x)))
        x = self.norm1(x + self.dropout(attend(self.self_attn, x, x, mask, weights)))
        return self.norm2(x + self.dropout(self.feed_forward(x)))

    def _check_inputs(self, x, mask) -> None:
        check_width("x", x, self.d_model, "(B, S, D)")
        B, S, H = x.size(0), x.size(1), self.self_attn.n_heads
        check_mask("mask", mask, (B, H, S, S), "(B, H, S, S)")

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder output, feed-forward (§3.1)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
        attention_dropout: float = 0.0,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        src_mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: x (B, T, D), memory (B, S, D), tgt_mask broadcastable to (B, H, T, T)
        (causal AND padding), src_mask to (B, H, T, S) -> (B, T, D). With ``attention``,
        appends (B, H, T, T) to ``attention.decoder_self`` and (B, H, T, S) to ``.cross``.

        Cross-attention: queries from the decoder (T), keys and values from the encoder (S).
        """
        self._check_inputs(x, memory, tgt_mask, src_mask)
        own, cross = (attention.decoder_self, attention.cross) if attention else (None, None)
        if self.norm_first:  # pre-norm: x + Dropout(Sublayer(LayerNorm(x)))
            h = self.norm1(x)
            x = x + self.dropout(attend(self.self_attn, h, h, tgt_mask, own))
            h = self.norm2(x)
            x = x + self.dropout(attend(self.cross_attn, h, memory, src_mask, cross))
            h = self.norm3(x)
            return x + self.dropout(self.feed_forward(h))
        # post-norm, the paper's: LayerNorm(x + Dropout(Sublayer(x)))
        x = self.norm1(x + self.dropout(attend(self.self_attn, x, x, tgt_mask, own)))
        x = self.norm2(x + self.dropout(attend(self.cross_attn, x, memory, src_mask, cross)))
        return self.norm3(x + self.dropout(self.feed_forward(x)))

    def _check_inputs(self, x, memory, tgt_mask, src_mask) -> None:
        check_width("x", x, self.d_model, "(B, T, D)")
        check_width("memory", memory, self.d_model, "(B, S, D)")
        B, T, S, H = x.size(0), x.size(1), memory.size(1), self.self_attn.n_heads
        if memory.size(0) != B:
            fail("memory", "the same batch size B={B} as x", f"shape {tuple(memory.shape)}", B=B)
        check_mask("tgt_mask", tgt_mask, (B, H, T, T), "(B, H, T, T)")
        check_mask("src_mask", src_mask, (B, H, T, S), "(B, H, T, S)")

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"
