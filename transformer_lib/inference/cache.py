"""Incremental decoding: a ``Transformer``'s decoder run one new token per step.

The plain loop of notebook 07 runs the decoder over the whole prefix at every step, so
step t costs t positions. With the causal mask, no position ever reads a later one, so
the keys and values each self-attention computed for the earlier positions stay what they
were: keep them (a key/value cache) and run only the newest position. Cross-attention
reads the encoder memory, the same at every step: its keys and values are projected once.
The searches in ``decode`` use this by default; it gives the plain loop's tokens
(tests/test_incremental.py), and ``benchmarks/decode_speed.py`` measures the gain.

The layers notebooks 03-06 teach know nothing of it: a step reuses their weights and
notebook 06's ``sublayer_connection``, sub-layer by sub-layer.

A ``LanguageModel`` (notebook 09) generates the same way, with
``language_model.IncrementalLanguageModel`` (its first step runs the whole prompt).

Shapes:
    N rows (sentences, or sentences x beams), t prefix length, n new positions in a step,
    S source length, D d_model, H heads, Dh = D / H, V target vocabulary.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from transformer_lib._checks import check_tensor, fail
from transformer_lib.model.attention import MultiHeadAttention
from transformer_lib.model.layers import DecoderLayer, sublayer_connection
from transformer_lib.model.masks import padding_mask
from transformer_lib.model.transformer import Transformer

__all__ = ["IncrementalDecoder"]


def _keys_values(attention: MultiHeadAttention, x: torch.Tensor) -> list[torch.Tensor]:
    """K and V of ``x``, split into heads: (N, L, D) -> 2 x (N, H, L, Dh)."""
    return [attention.split_heads(w(x)) for w in (attention.w_k, attention.w_v)]


def _attend(
    attention: MultiHeadAttention,
    query: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor | None,
) -> torch.Tensor:
    """``attention`` for already projected keys and values: (N, n, D) -> (N, n, D), n new
    positions (one, in the decoder's steps)."""
    q = attention.split_heads(attention.w_q(query))  # (N, H, n, Dh)
    heads = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)  # (N, H, n, Dh)
    return attention.w_o(attention.merge_heads(heads))


class IncrementalDecoder:
    """The logits after a prefix, one token per step, for one search.

    ``IncrementalDecoder(model, memory, src_mask)`` projects the memory's keys and values
    for every decoder layer; each ``step(tgt)`` adds the keys and values of the newest
    position of ``tgt`` and returns ``model.decode(tgt, memory, src_mask)[:, -1]``.
    Beam search calls ``reorder`` when its beams change rows.

    Only ``model.Transformer``: ``reference.TorchTransformer`` runs ``nn.TransformerDecoder``,
    which has no way to take cached keys and values, so the searches decode it with the
    plain loop.

    Shapes: memory (N, S, D), src_mask (N, 1, 1, S); step: tgt (N, t) -> logits (N, V).
    """

    def __init__(
        self, model: Transformer, memory: torch.Tensor, src_mask: torch.Tensor | None
    ) -> None:
        if not isinstance(model, Transformer):
            fail("model", "a transformer_lib.Transformer", type(model).__name__, error=TypeError)
        self.model, self.src_mask = model, src_mask
        layers = model.decoder.layers
        self.memory_kv = [_keys_values(layer.cross_attn, memory) for layer in layers]
        self.self_kv: list[list[torch.Tensor]] = [[] for _ in layers]  # none held yet
        self.length = 0  # positions held

    def step(self, tgt: torch.Tensor) -> torch.Tensor:
        """Shapes: tgt (N, t), the whole prefix, one position longer than at the last step
        -> logits (N, V) for the position after it."""
        check_tensor("tgt", tgt, ndim=2, integer=True, shape_hint="(N, t)")
        if tgt.size(1) != self.length + 1:
            fail(
                "tgt",
                f"the prefix of the last step plus one token, {self.length + 1} positions",
                f"{tgt.size(1)} positions",
                "Start a new IncrementalDecoder for each search; call step once per token.",
            )
        model = self.model
        # embed the prefix as decode() does and keep the newest: it gets position t - 1
        x = model.positional(model.tgt_embed(tgt, "tgt"))[:, -1:]  # (N, t, D) -> (N, 1, D)
        # the newest query may read every earlier position: its row of the target mask
        tgt_mask = padding_mask(tgt, model.pad_id)  # (N, 1, 1, t)
        for i, layer in enumerate(model.decoder.layers):
            x = self._layer_step(i, layer, x, tgt_mask)
        self.length += 1
        return model.output(model.decoder.norm(x)[:, -1])  # (N, D) -> (N, V)

    def _layer_step(
        self, i: int, layer: DecoderLayer, x: torch.Tensor, tgt_mask: torch.Tensor
    ) -> torch.Tensor:
        """``DecoderLayer.forward`` for the newest position: (N, 1, D) -> (N, 1, D)."""

        def self_attention(h: torch.Tensor) -> torch.Tensor:  # h: the newest position
            new = _keys_values(layer.self_attn, h)  # 2 x (N, H, 1, Dh)
            held = self.self_kv[i]
            if held:
                new = [torch.cat([a, b], dim=2) for a, b in zip(held, new)]  # (N, H, t, Dh)
            self.self_kv[i] = new
            return _attend(layer.self_attn, h, *self.self_kv[i], tgt_mask)

        def cross_attention(h: torch.Tensor) -> torch.Tensor:
            return _attend(layer.cross_attn, h, *self.memory_kv[i], self.src_mask)

        dropout, norm_first = layer.dropout, layer.norm_first
        x = sublayer_connection(x, self_attention, layer.norm1, dropout, norm_first)
        x = sublayer_connection(x, cross_attention, layer.norm2, dropout, norm_first)
        return sublayer_connection(x, layer.feed_forward, layer.norm3, dropout, norm_first)

    def reorder(self, rows: torch.Tensor) -> None:
        """Keep the rows ``rows`` of everything held, in that order (beam search's new
        beams each take their parent's keys and values). Shapes: rows (N_new,)."""
        self.self_kv = [[t[rows] for t in kv] for kv in self.self_kv]
        self.memory_kv = [[t[rows] for t in kv] for kv in self.memory_kv]
        if self.src_mask is not None:
            self.src_mask = self.src_mask[rows]
