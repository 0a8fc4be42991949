"""Our attention and layers as ``nn.MultiheadAttention`` and ``nn.Transformer*Layer``,
weights copied, and our masks in PyTorch's convention (True = blocked).

Shapes:
    B batch, S source length, T target length, D d_model, H heads.
"""

from __future__ import annotations

import torch
from torch import nn

from transformer_lib.model.attention import MultiHeadAttention
from transformer_lib.model.layers import DecoderLayer, EncoderLayer


@torch.no_grad()
def copy_attention_to_torch(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Copy W^Q, W^K, W^V, W^O (§3.2.2) and the dropout on the weights (our layers have
    none; PyTorch's default is the layer's) into ``nn.MultiheadAttention``.

    Shapes: in_proj_weight (3D, D) = [w_q; w_k; w_v], each (D, D); out_proj (D, D) = w_o.
    """
    theirs.dropout = ours.dropout.p
    projections = (ours.w_q, ours.w_k, ours.w_v)
    theirs.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))  # -> (3D, D)
    if theirs.in_proj_bias is not None:
        theirs.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))  # -> (3D,)
    theirs.out_proj.load_state_dict(ours.w_o.state_dict())


@torch.no_grad()
def copy_attention_from_torch(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """Copy ``nn.MultiheadAttention``'s weights into ours (the inverse of the above).

    Shapes: in_proj_weight (3D, D) -> w_q, w_k, w_v (D, D) each; out_proj -> w_o.
    """
    projections = (ours.w_q, ours.w_k, ours.w_v)
    for p, weight in zip(projections, theirs.in_proj_weight.chunk(3), strict=True):
        p.weight.copy_(weight)  # (3D, D) -> (D, D)
    if theirs.in_proj_bias is not None:
        for p, bias in zip(projections, theirs.in_proj_bias.chunk(3), strict=True):
            p.bias.copy_(bias)  # (3D,) -> (D,)
    ours.w_o.load_state_dict(theirs.out_proj.state_dict())


def to_torch_attention(ours: MultiHeadAttention) -> nn.MultiheadAttention:
    """A ``nn.MultiheadAttention(batch_first=True)`` with our weights, device and dtype.

    Shapes: it maps query (B, T, D), key and value (B, S, D) -> (B, T, D), like ours.
    """
    bias = ours.w_o.bias is not None
    theirs = nn.MultiheadAttention(ours.d_model, ours.n_heads, bias=bias, batch_first=True)
    theirs.to(ours.w_o.weight)  # our device and dtype
    copy_attention_to_torch(ours, theirs)
    return theirs.train(ours.training)


def _layer_options(ours: EncoderLayer | DecoderLayer) -> dict:
    """The ``nn.Transformer*Layer`` arguments that make it the same layer as ``ours``
    (device and dtype follow with ``.to``)."""
    return dict(
        d_model=ours.self_attn.d_model,
        nhead=ours.self_attn.n_heads,
        dim_feedforward=ours.feed_forward.linear1.out_features,
        dropout=ours.dropout.p,
        activation=ours.feed_forward.activation,  # "relu" or "gelu", as F names them
        layer_norm_eps=ours.norm1.eps,
        batch_first=True,
        norm_first=ours.norm_first,
    )


@torch.no_grad()
def _copy_feed_forward_and_norms(
    ours: EncoderLayer | DecoderLayer,
    theirs: nn.TransformerEncoderLayer | nn.TransformerDecoderLayer,
    norms: tuple[str, ...],
) -> None:
    """Copy the FFN (§3.3) and the named LayerNorms; ours is ``feed_forward.linear1``."""
    theirs.linear1.load_state_dict(ours.feed_forward.linear1.state_dict())
    theirs.linear2.load_state_dict(ours.feed_forward.linear2.state_dict())
    for name in norms:
        getattr(theirs, name).load_state_dict(getattr(ours, name).state_dict())


def to_torch_encoder_layer(ours: EncoderLayer) -> nn.TransformerEncoderLayer:
    """The same encoder layer (§3.1) as ``nn.TransformerEncoderLayer``, weights copied.

    Shapes: x (B, S, D) -> (B, S, D), like ours.
    """
    theirs = nn.TransformerEncoderLayer(**_layer_options(ours)).to(ours.norm1.weight)
    copy_attention_to_torch(ours.self_attn, theirs.self_attn)
    _copy_feed_forward_and_norms(ours, theirs, ("norm1", "norm2"))
    return theirs.train(ours.training)


def to_torch_decoder_layer(ours: DecoderLayer) -> nn.TransformerDecoderLayer:
    """The same decoder layer (§3.1) as ``nn.TransformerDecoderLayer``, weights copied.

    Our ``cross_attn`` is PyTorch's ``multihead_attn``.

    Shapes: x (B, T, D), memory (B, S, D) -> (B, T, D), like ours.
    """
    theirs = nn.TransformerDecoderLayer(**_layer_options(ours)).to(ours.norm1.weight)
    copy_attention_to_torch(ours.self_attn, theirs.self_attn)
    copy_attention_to_torch(ours.cross_attn, theirs.multihead_attn)
    _copy_feed_forward_and_norms(ours, theirs, ("norm1", "norm2", "norm3"))
    return theirs.train(ours.training)


def to_torch_padding_mask(mask: torch.Tensor | None) -> torch.Tensor | None:
    """Our padding mask (True = may attend) as PyTorch's ``key_padding_mask`` (True = pad).

    Shapes: (B, 1, 1, S) -> (B, S); None stays None.
    """
    return None if mask is None else ~mask[:, 0, 0, :]  # (B, 1, 1, S) -> (B, S)


def to_torch_attn_mask(mask: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Our mask (True = may attend) as PyTorch's ``attn_mask`` (True = blocked).

    Shapes: (1, 1, T, S) -> (T, S); (B, 1, T, S) -> (B*H, T, S), one copy per head,
    as ``nn.MultiheadAttention`` wants a per-example mask.
    """
    if mask.size(0) == 1:
        return ~mask[0, 0]  # (1, 1, T, S) -> (T, S)
    B, _, T, S = mask.shape
    per_head = mask.expand(B, n_heads, T, S)  # (B, 1, T, S) -> (B, H, T, S)
    return ~per_head.reshape(B * n_heads, T, S)  # (B, H, T, S) -> (B*H, T, S)
