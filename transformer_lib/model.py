"""The encoder–decoder Transformer (paper §3, Figure 1).

Shapes:
    B batch, S source length, T target length, D d_model, H heads, V vocabulary.
"""

from __future__ import annotations

import torch
from torch import nn

from transformer_lib._checks import check_mask, check_token_ids
from transformer_lib.config import TransformerConfig
from transformer_lib.embeddings import PositionalEncoding, TokenEmbedding
from transformer_lib.layers import DecoderLayer, EncoderLayer
from transformer_lib.masks import padding_mask, target_mask


def _final_norm(config: TransformerConfig) -> nn.Module:
    # Pre-norm leaves the last residual sum un-normalised, so the stack ends with a
    # LayerNorm; post-norm layers already end with one (the paper has no extra norm).
    if config.norm_first:
        return nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
    return nn.Identity()


class Encoder(nn.Module):
    """A stack of N identical encoder layers (§3.1)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.layers = nn.ModuleList(
            EncoderLayer(c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first, c.layer_norm_eps)
            for _ in range(c.n_encoder_layers)
        )
        self.norm = _final_norm(config)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor | None = None, return_attention: bool = False
    ):
        """Shapes: x (B, S, D), mask (B, 1, 1, S) -> (B, S, D) [, per layer (B, H, S, S)]."""
        weights = []
        for layer in self.layers:
            x, layer_weights = layer(x, mask, return_attention=True)
            weights.append(layer_weights)
        x = self.norm(x)
        return (x, weights) if return_attention else x


class Decoder(nn.Module):
    """A stack of N identical decoder layers (§3.1)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.layers = nn.ModuleList(
            DecoderLayer(c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first, c.layer_norm_eps)
            for _ in range(c.n_decoder_layers)
        )
        self.norm = _final_norm(config)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        src_mask: torch.Tensor | None = None,
        return_attention: bool = False,
    ):
        """Shapes: x (B, T, D), memory (B, S, D) -> (B, T, D)
        [, {"self": per layer (B, H, T, T), "cross": per layer (B, H, T, S)}]."""
        weights = {"self": [], "cross": []}
        for layer in self.layers:
            x, self_weights, cross_weights = layer(
                x, memory, tgt_mask, src_mask, return_attention=True
            )
            weights["self"].append(self_weights)
            weights["cross"].append(cross_weights)
        x = self.norm(x)
        return (x, weights) if return_attention else x


class Transformer(nn.Module):
    """Embeddings + positions, encoder, decoder, and a linear layer to logits.

    The model ends in logits, not probabilities: ``F.cross_entropy`` applies
    log-softmax itself, and decoding takes ``log_softmax`` of the logits.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.config = c = config
        self.src_embed = TokenEmbedding(c.src_vocab_size, c.d_model)
        # §3.4: "we share the same weight matrix between the two embedding layers
        # and the pre-softmax linear transformation"
        self.tgt_embed = (
            self.src_embed if c.share_embeddings else TokenEmbedding(c.tgt_vocab_size, c.d_model)
        )
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout, c.learned_positions)
        self.encoder = Encoder(c)
        self.decoder = Decoder(c)
        self.output = nn.Linear(c.d_model, c.tgt_vocab_size)
        self._reset_parameters()
        if c.tie_output:
            self.output.weight = self.tgt_embed.embedding.weight

    def _reset_parameters(self) -> None:
        # Xavier for every matrix (as nn.Transformer does); embeddings get std 1/√D so
        # that after the √D scaling of §3.4 token vectors have unit-size entries.
        for name, p in self.named_parameters():
            if "embed" in name:
                nn.init.normal_(p, std=self.config.d_model**-0.5)
            elif p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def encode(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        return_attention: bool = False,
    ):
        """Shapes: src (B, S) ids, src_mask (B, 1, 1, S) -> memory (B, S, D)
        [, encoder self-attention per layer (B, H, S, S)]. ``src_mask`` defaults to
        the padding mask of ``src``."""
        check_token_ids("src", src, self.config.src_vocab_size, "(B, S)")
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)
        check_mask("src_mask", src_mask, (src.size(0), 1, 1, src.size(1)), "(B, 1, 1, S)")
        x = self.positional(self.src_embed(src))  # (B, S) -> (B, S, D)
        return self.encoder(x, src_mask, return_attention)

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        tgt_mask: torch.Tensor | None = None,
        return_attention: bool = False,
    ):
        """Shapes: tgt (B, T) ids, memory (B, S, D), src_mask (B, 1, 1, S), tgt_mask
        (B, 1, T, T) -> logits (B, T, V) [, {"self": ..., "cross": ...} per layer].
        ``tgt_mask`` defaults to causal AND padding; ``src_mask`` to no masking, so pass
        the one used in ``encode``."""
        check_token_ids("tgt", tgt, self.config.tgt_vocab_size, "(B, T)")
        B, T = tgt.shape
        if tgt_mask is None:
            tgt_mask = target_mask(tgt, self.config.pad_id)
        check_mask("tgt_mask", tgt_mask, (B, 1, T, T), "(B, 1, T, T)")
        if memory.dim() == 3:
            check_mask("src_mask", src_mask, (B, 1, 1, memory.size(1)), "(B, 1, 1, S)")
        x = self.positional(self.tgt_embed(tgt))  # (B, T) -> (B, T, D)
        result = self.decoder(x, memory, tgt_mask, src_mask, return_attention)
        if not return_attention:
            return self.output(result)  # (B, T, D) -> (B, T, V)
        hidden, weights = result
        return self.output(hidden), weights

    def forward(
        self,
        src: torch.Tensor,
        tgt: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        tgt_mask: torch.Tensor | None = None,
        return_attention: bool = False,
    ):
        """Shapes: src (B, S), tgt (B, T) -> logits (B, T, V)
        [, {"encoder", "decoder_self", "cross"}: per layer (B, H, ·, ·)]."""
        if src_mask is None:
            check_token_ids("src", src, self.config.src_vocab_size, "(B, S)")
            src_mask = padding_mask(src, self.config.pad_id)
        if not return_attention:
            return self.decode(tgt, self.encode(src, src_mask), src_mask, tgt_mask)
        memory, encoder_weights = self.encode(src, src_mask, return_attention=True)
        logits, decoder_weights = self.decode(tgt, memory, src_mask, tgt_mask, True)
        weights = {
            "encoder": encoder_weights,
            "decoder_self": decoder_weights["self"],
            "cross": decoder_weights["cross"],
        }
        return logits, weights


def count_parameters(module: nn.Module) -> int:
    """Number of trainable parameters; a tied/shared matrix is counted once."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
