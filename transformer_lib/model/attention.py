"""Scaled dot-product attention and multi-head attention (paper §3.2).

Shapes:
    B batch, H heads, T query length, S key/value length, L either length (T or S),
    D d_model, Dh = D / H; d_k and d_v the width of a query/key and of a value.
Masks are bool and True means "may attend" (see ``masks``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, overload

import torch
import torch.nn.functional as F
from torch import nn

from transformer_lib._checks import (
    check_heads,
    check_int,
    check_mask,
    check_probability,
    check_tensor,
    check_width,
    fail,
)


def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """The scaled scores Q Kᵀ / √d_k (§3.2.1): q (..., T, d_k), k (..., S, d_k) -> (..., T, S)."""
    return q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., T, d_k) @ (..., d_k, S)


def _check_mask_rank(mask: object, scores_shape: tuple[int, ...]) -> None:
    """A mask needs one axis per axis of the scores, size 1 where it repeats: broadcasting
    lines up the *last* axes, so a (B, S) padding mask against (B, T, S) scores would pair
    its batch axis with the queries (silently, when T == B)."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
        return  # check_mask names the type
    if mask.dim() != len(scores_shape):
        fail(
            "mask",
            "{ndim}-D like the scores (..., T, S)={shape}, with size 1 on the axes it repeats over",
            f"{mask.dim()}-D bool {tuple(mask.shape)}",
            "Add the missing axes: a (B, S) key-padding mask becomes mask[:, None, :] "
            "(B, 1, S) for (B, T, S) scores; masks.padding_mask() builds (B, 1, 1, S) "
            "for (B, H, T, S).",
            ndim=len(scores_shape),
            shape=tuple(scores_shape),
        )


def _check_inputs(q: object, k: object, v: object, mask: object) -> None:
    """q, k, v floating and at least 2-D, with matching d_k and S; the mask bool, with the
    scores' rank, broadcastable to (..., T, S)."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, x, floating=True, shape_hint="(..., L, d)")
        if x.dim() < 2:
            fail(name, "at least 2-D (..., L, d)", f"{x.dim()}-D {tuple(x.shape)}")
    if k.size(-1) != q.size(-1):
        fail("k", "last dimension d_k={d_k} like q", f"shape {tuple(k.shape)}", d_k=q.size(-1))
    if v.size(-2) != k.size(-2):
        fail("v", "the same length S={S} as k", f"shape {tuple(v.shape)}", S=k.size(-2))
    scores_shape = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2]) + (q.size(-2), k.size(-2))
    _check_mask_rank(mask, scores_shape)
    check_mask("mask", mask, scores_shape, "(..., T, S)")


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    dropout: nn.Module | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V   (§3.2.1, equation 1).

    Masked scores are set to -inf (not -1e9, which overflows float16). A query row
    with nothing to attend to gets all-zero weights, so its output is zero, never NaN.

    Shapes: q (..., T, d_k), k (..., S, d_k), v (..., S, d_v), mask with the scores'
    rank, broadcastable to (..., T, S) -> output (..., T, d_v), weights (..., T, S).
    """
    _check_inputs(q, k, v, mask)
    scores = attention_scores(q, k)  # (..., T, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        # softmax over a row of only -inf is NaN: give such rows zeros instead
        empty_rows = ~mask.any(dim=-1, keepdim=True)  # (..., T, 1)
        scores = scores.masked_fill(empty_rows, 0.0)
    weights = torch.softmax(scores, dim=-1)  # normalise over keys: rows sum to 1
    if mask is not None:
        weights = weights.masked_fill(empty_rows, 0.0)
    if dropout is not None:
        weights = dropout(weights)
    return weights @ v, weights  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)


@dataclass
class AttentionWeights:
    """The attention weights of a whole model, one tensor per layer, in layer order.

    Pass an empty one to ``Transformer.forward``/``encode``/``decode`` (or to a layer) and
    it is filled in as the model runs: weights are handed over explicitly, never read back
    from a hidden attribute. Row t of a map is query t, column s is key s.

    Shapes: encoder[i] (B, H, S, S), decoder_self[i] (B, H, T, T), cross[i] (B, H, T, S).
    """

    encoder: list[torch.Tensor] = field(default_factory=list)
    decoder_self: list[torch.Tensor] = field(default_factory=list)
    cross: list[torch.Tensor] = field(default_factory=list)


class MultiHeadAttention(nn.Module):
    """h attention heads in parallel, concatenated and projected (§3.2.2).

    MultiHead(Q, K, V) = Concat(head_1, …, head_h) W^O, head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V).
    The h projections W_i^Q are stored side by side in one (D, D) ``nn.Linear`` each.
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, bias: bool = True) -> None:
        super().__init__()
        check_int("d_model", d_model, minimum=1)
        check_int("n_heads", n_heads, minimum=1)
        check_probability("dropout", dropout)
        check_heads(d_model, n_heads)
        self.d_model, self.n_heads, self.d_k = d_model, n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)
        self.dropout = nn.Dropout(dropout)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """Shapes: (B, L, D) -> (B, H, L, Dh). Each sequence keeps its own length L."""
        B, L, _ = x.shape
        x = x.view(B, L, self.n_heads, self.d_k)  # (B, L, D) -> (B, L, H, Dh)
        return x.transpose(1, 2)  # (B, L, H, Dh) -> (B, H, L, Dh)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """Shapes: (B, H, L, Dh) -> (B, L, D)."""
        B, _, L, _ = x.shape
        return x.transpose(1, 2).reshape(B, L, self.d_model)  # (B, L, H, Dh) -> (B, L, D)

    @overload
    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        return_attention: Literal[False] = False,
        *,
        checked: bool = False,
    ) -> torch.Tensor: ...

    @overload
    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        *,
        return_attention: Literal[True],
        checked: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor]: ...

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
        return_attention: bool = False,
        *,
        checked: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Shapes: query (B, T, D), key and value (B, S, D), mask broadcastable to
        (B, H, T, S) -> output (B, T, D) [, weights (B, H, T, S) with ``return_attention``,
        as ``nn.MultiheadAttention`` returns them with ``need_weights``]. ``checked=True``:
        the caller has checked these inputs under its own names (a layer: ``x``,
        ``memory``, ``tgt_mask``), so they are not checked twice."""
        if not checked:
            self._check_inputs(query, key, value, mask)
        k, v = self.keys_values(key, value)
        return self.attend(query, k, v, mask, return_attention)

    def keys_values(
        self, key: torch.Tensor, value: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The projected keys and values, split into heads: (B, S, D) -> 2 x (B, H, S, Dh).
        Incremental decoding keeps them between steps (``inference.cache``)."""
        k = self.split_heads(self.w_k(key))  # (B, S, D) -> (B, H, S, Dh)
        v = self.split_heads(self.w_v(value))  # (B, S, D) -> (B, H, S, Dh)
        return k, v

    def attend(
        self,
        query: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        mask: torch.Tensor | None,
        return_attention: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Attention of ``query`` over keys and values already projected by
        :meth:`keys_values`. Shapes: query (B, T, D), k and v (B, H, S, Dh), mask
        broadcastable to (B, H, T, S) -> output (B, T, D) [, weights (B, H, T, S)]."""
        q = self.split_heads(self.w_q(query))  # (B, T, D) -> (B, H, T, Dh)
        if return_attention:  # the explicit path of notebooks 03-05
            heads, weights = scaled_dot_product_attention(q, k, v, mask, self.dropout)
            return self.w_o(self.merge_heads(heads)), weights  # (B, T, D), (B, H, T, S)
        # No weights wanted: PyTorch's fused kernel computes the same softmax(QKᵀ/√d_k) V
        # without keeping the (B, H, T, S) weights (equal within float rounding, tested;
        # fully masked rows give zeros, as above). Its dropout draws other random numbers.
        heads = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=self.dropout.p if self.training else 0.0
        )
        return self.w_o(self.merge_heads(heads))  # (B, H, T, Dh) -> (B, T, D)

    def _check_inputs(self, query, key, value, mask) -> None:
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_width(name, x, self.d_model, "(B, L, D)")
        if key.shape[:2] != value.shape[:2]:
            fail(
                "value",
                "the same (B, S)={shape} as key",
                f"shape {tuple(value.shape)}",
                shape=tuple(key.shape[:2]),
            )
        if query.size(0) != key.size(0):
            fail(
                "key",
                "the same batch size B={B} as query",
                f"shape {tuple(key.shape)}",
                B=query.size(0),
            )
        B, T, S = query.size(0), query.size(1), key.size(1)
        check_mask("mask", mask, (B, self.n_heads, T, S), "(B, H, T, S)")

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, d_k={self.d_k}"
