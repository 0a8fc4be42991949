"""Position-wise feed-forward network and the encoder/decoder layers (paper §3.1, §3.3).

Each layer is a few sub-layers, each wrapped by :func:`sublayer_connection` (residual,
dropout and LayerNorm), exactly as notebook 06 builds them. Attention weights come out
only when an :class:`~transformer_lib.attention.AttentionWeights` is passed in.

Shapes:
    B batch, S source length, T target length, D d_model, H heads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import nn

from transformer_lib._checks import check_int, check_probability, check_width
from transformer_lib.attention import AttentionWeights, KVCache, MultiHeadAttention
from transformer_lib.dropout import Dropout


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to each position alone (§3.3)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        check_int("d_ff", d_ff, minimum=1)
        check_probability("dropout", dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Shapes: (B, L, D) -> (B, L, d_ff) -> (B, L, D)."""
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


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


def _attend(
    attention: MultiHeadAttention,
    query: torch.Tensor,
    memory: torch.Tensor,
    mask: torch.Tensor | None,
    record: list[torch.Tensor] | None,
    cache: KVCache | None = None,
) -> torch.Tensor:
    """Attention from ``query`` over ``memory``; its weights go to ``record`` if given
    (only then are they computed: without, attention may take its fused path)."""
    if record is None:
        return attention(query, memory, memory, mask, cache=cache)
    output, weights = attention(query, memory, memory, mask, return_attention=True, cache=cache)
    record.append(weights)
    return output


class _Layer(nn.Module):
    """What both layers share: every sub-layer goes through :func:`sublayer_connection`."""

    norm_first: bool
    dropout: nn.Dropout

    def _connect(self, x: torch.Tensor, sublayer: Callable, norm: nn.Module) -> torch.Tensor:
        return sublayer_connection(x, sublayer, norm, self.dropout, self.norm_first)

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"


class EncoderLayer(_Layer):
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
    ) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout = Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: x (B, S, D), mask broadcastable to (B, H, S, S), e.g. padding (B, 1, 1, S)
        -> (B, S, D). With ``attention``, appends (B, H, S, S) to ``attention.encoder``."""
        check_width("x", x, self.d_model, "(B, S, D)")
        record = attention.encoder if attention is not None else None

        def self_attention(h: torch.Tensor) -> torch.Tensor:
            return _attend(self.self_attn, h, h, mask, record)

        x = self._connect(x, self_attention, self.norm1)
        return self._connect(x, self.feed_forward, self.norm2)


@dataclass
class DecoderLayerCache:
    """What one decoder layer keeps between incremental decoding steps: the keys and values
    of its self-attention (one more position per step) and of its cross-attention (the
    encoder memory, projected once). See ``model.DecoderCache``."""

    self_attn: KVCache = field(default_factory=lambda: KVCache(fixed=False))
    cross_attn: KVCache = field(default_factory=lambda: KVCache(fixed=True))


class DecoderLayer(_Layer):
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
    ) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout = Dropout(dropout)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        src_mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
        cache: DecoderLayerCache | None = None,
    ) -> torch.Tensor:
        """Shapes: x (B, T, D), memory (B, S, D), tgt_mask broadcastable to (B, H, T, T)
        (causal AND padding), src_mask to (B, H, T, S) -> (B, T, D). With ``attention``,
        appends (B, H, T, T) to ``attention.decoder_self`` and (B, H, T, S) to ``.cross``.

        With ``cache``, x holds only the new positions; self-attention also reads the held
        earlier ones, so tgt_mask is (B, 1, T, L + T) for L held positions."""
        check_width("x", x, self.d_model, "(B, T, D)")
        check_width("memory", memory, self.d_model, "(B, S, D)")
        self_record, cross_record = (
            (attention.decoder_self, attention.cross) if attention is not None else (None, None)
        )
        self_cache, cross_cache = (
            (cache.self_attn, cache.cross_attn) if cache is not None else (None, None)
        )

        def self_attention(h: torch.Tensor) -> torch.Tensor:
            return _attend(self.self_attn, h, h, tgt_mask, self_record, self_cache)

        def cross_attention(h: torch.Tensor) -> torch.Tensor:
            # queries come from the decoder, keys and values from the encoder (S, not T)
            return _attend(self.cross_attn, h, memory, src_mask, cross_record, cross_cache)

        x = self._connect(x, self_attention, self.norm1)
        x = self._connect(x, cross_attention, self.norm2)
        return self._connect(x, self.feed_forward, self.norm3)
