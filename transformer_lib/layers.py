"""Position-wise feed-forward network and the encoder/decoder layers (paper §3.1, §3.3).

Shapes:
    B batch, S source length, T target length, D d_model, H heads.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from transformer_lib._checks import check_int, check_probability, check_tensor, fail
from transformer_lib.attention import MultiHeadAttention


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to each position alone (§3.3)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1) -> None:
        super().__init__()
        check_int("d_ff", d_ff, minimum=1)
        check_probability("dropout", dropout)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Shapes: (B, L, D) -> (B, L, d_ff) -> (B, L, D)."""
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


class _ResidualBlock(nn.Module):
    """Shared by both layers: how one sub-layer is wrapped (§3.1, §5.4)."""

    norm_first: bool
    dropout: nn.Dropout

    def residual(self, x: torch.Tensor, norm: nn.LayerNorm, sublayer: Callable) -> tuple:
        """One sub-layer with its residual connection.

        Post-norm (paper): LayerNorm(x + Dropout(Sublayer(x))).
        Pre-norm (option): x + Dropout(Sublayer(LayerNorm(x))), easier to train deep.
        Dropout sits on the sub-layer's output, before the sum, never after the norm.
        ``sublayer`` returns (output, attention weights or None); the weights pass through.
        """
        output, weights = sublayer(norm(x) if self.norm_first else x)
        x = x + self.dropout(output)
        return (x if self.norm_first else norm(x)), weights

    def extra_repr(self) -> str:
        return f"norm_first={self.norm_first}"


def _check_width(name: str, x, d_model: int, letter: str) -> None:
    check_tensor(name, x, ndim=3, floating=True, shape_hint=f"(B, {letter}, D)")
    if x.size(-1) != d_model:
        fail(name, f"of width d_model={d_model} in its last dimension", f"shape {tuple(x.shape)}")


class EncoderLayer(_ResidualBlock):
    """Self-attention then feed-forward, each with residual + LayerNorm (§3.1)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, return_attention: bool = False
    ):
        """Shapes: x (B, S, D), mask broadcastable to (B, H, S, S), e.g. padding (B, 1, 1, S)
        -> (B, S, D) [, weights (B, H, S, S)]."""
        _check_width("x", x, self.d_model, "S")
        x, weights = self.residual(
            x, self.norm1, lambda h: self.self_attn(h, h, h, mask, return_attention=True)
        )
        x, _ = self.residual(x, self.norm2, lambda h: (self.feed_forward(h), None))
        return (x, weights) if return_attention else x


class DecoderLayer(_ResidualBlock):
    """Masked self-attention, cross-attention over the encoder output, feed-forward (§3.1)."""

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        layer_norm_eps: float = 1e-5,
    ) -> None:
        super().__init__()
        self.d_model, self.norm_first = d_model, norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.cross_attn = MultiHeadAttention(d_model, n_heads)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
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
        return_attention: bool = False,
    ):
        """Shapes: x (B, T, D), memory (B, S, D), tgt_mask broadcastable to (B, H, T, T)
        (causal AND padding), src_mask to (B, H, T, S) -> (B, T, D)
        [, self weights (B, H, T, T), cross weights (B, H, T, S)]."""
        _check_width("x", x, self.d_model, "T")
        _check_width("memory", memory, self.d_model, "S")
        x, self_weights = self.residual(
            x, self.norm1, lambda h: self.self_attn(h, h, h, tgt_mask, return_attention=True)
        )
        # queries come from the decoder, keys and values from the encoder (length S, not T)
        x, cross_weights = self.residual(
            x,
            self.norm2,
            lambda h: self.cross_attn(h, memory, memory, src_mask, return_attention=True),
        )
        x, _ = self.residual(x, self.norm3, lambda h: (self.feed_forward(h), None))
        return (x, self_weights, cross_weights) if return_attention else x
