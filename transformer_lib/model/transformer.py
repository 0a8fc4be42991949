"""The encoder–decoder Transformer (paper §3, Figure 1).

Shapes:
    B batch, S source length, T target length, D d_model, H heads, V vocabulary.
"""

from __future__ import annotations

import torch
from torch import nn

from transformer_lib._checks import (
    check_length,
    check_mask,
    check_token_ids,
    check_width,
    fail,
)
from transformer_lib.model.attention import AttentionWeights, MultiHeadAttention
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import GenerationStack, ModelContract
from transformer_lib.model.embeddings import PositionalEncoding, TokenEmbedding
from transformer_lib.model.layers import DecoderLayer, EncoderLayer
from transformer_lib.model.masks import padding_mask, target_mask


def _layer_arguments(c: TransformerConfig) -> dict:
    """What ``EncoderLayer`` and ``DecoderLayer`` take from the config."""
    return {
        "d_model": c.d_model,
        "n_heads": c.n_heads,
        "d_ff": c.d_ff,
        "dropout": c.dropout,
        "norm_first": c.norm_first,
        "layer_norm_eps": c.layer_norm_eps,
        "attention_dropout": c.attention_dropout,
        "activation": c.activation,
    }


def _final_norm(config: TransformerConfig) -> nn.Module:
    # Pre-norm leaves the last residual sum un-normalised, so the stack ends with a
    # LayerNorm; post-norm layers already end with one (the paper has no extra norm,
    # nn.Transformer adds one anyway: ``final_norm=True``).
    if config.norm_first or config.final_norm:
        return nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
    return nn.Identity()


def init_parameters(model: nn.Module, config: TransformerConfig) -> None:
    """Start ``model`` (a ``Transformer`` or a ``LanguageModel``) as the course does."""
    # Xavier for every linear map's matrix (as nn.Transformer does; biases keep
    # nn.Linear's start); embeddings (tokens, learned positions) get std 1/√D so that
    # after the √D scaling of §3.4 token vectors have unit-size entries.
    started = set()  # a matrix shared or tied by two modules starts once, as the first
    for module in model.modules():
        if not isinstance(module, (nn.Embedding, nn.Linear)) or module.weight in started:
            continue
        started.add(module.weight)
        if isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, std=config.d_model**-0.5)
        else:
            nn.init.xavier_uniform_(module.weight)
    if config.attention_init == "fused":
        for module in model.modules():
            if isinstance(module, MultiHeadAttention):
                _init_as_torch(module)


@torch.no_grad()
def _init_as_torch(attention: MultiHeadAttention) -> None:
    """Start ``attention`` as ``nn.MultiheadAttention`` starts: W^Q, W^K, W^V drawn with the
    Xavier bound of their stacked (3D, D) matrix, √(6 / 4D), which is 1/√2 of a (D, D)
    matrix's; W^O stays Xavier over (D, D); every bias starts at zero."""
    bound = (6 / (4 * attention.d_model)) ** 0.5
    for projection in (attention.w_q, attention.w_k, attention.w_v):
        projection.weight.uniform_(-bound, bound)
    for projection in (attention.w_q, attention.w_k, attention.w_v, attention.w_o):
        if projection.bias is not None:
            projection.bias.zero_()


class Encoder(nn.Module):
    """A stack of N identical encoder layers (§3.1)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.layers = nn.ModuleList(
            EncoderLayer(**_layer_arguments(c)) for _ in range(c.n_encoder_layers)
        )
        self.norm = _final_norm(config)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: x (B, S, D), mask (B, 1, 1, S) -> (B, S, D); ``attention.encoder`` gets
        one (B, H, S, S) map per layer."""
        for layer in self.layers:
            x = layer(x, mask, attention)
        return self.norm(x)


class Decoder(nn.Module):
    """A stack of N identical decoder layers (§3.1)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.layers = nn.ModuleList(
            DecoderLayer(**_layer_arguments(c)) for _ in range(c.n_decoder_layers)
        )
        self.norm = _final_norm(config)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        tgt_mask: torch.Tensor | None = None,
        src_mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: x (B, T, D), memory (B, S, D) -> (B, T, D); ``attention.decoder_self``
        gets (B, H, T, T) and ``attention.cross`` (B, H, T, S) per layer."""
        for layer in self.layers:
            x = layer(x, memory, tgt_mask, src_mask, attention)
        return self.norm(x)


def embeddings(config: TransformerConfig) -> tuple[TokenEmbedding, TokenEmbedding, nn.Module]:
    """The source and target token embeddings (one module when the config shares them)
    and the positional encoding, in the order ``Transformer`` builds them."""
    c = config
    src_embed = TokenEmbedding(c.src_vocab_size, c.d_model)
    # §3.4: "we share the same weight matrix between the two embedding layers
    # and the pre-softmax linear transformation"
    tgt_embed = src_embed if c.share_embeddings else TokenEmbedding(c.tgt_vocab_size, c.d_model)
    return (
        src_embed,
        tgt_embed,
        PositionalEncoding(c.d_model, c.max_len, c.dropout, c.learned_positions),
    )


def tie_output(model: nn.Module, config: TransformerConfig) -> None:
    """Tie ``model.output``'s matrix to the target embedding's when the config says so."""
    if config.tie_output:
        model.output.weight = model.tgt_embed.embedding.weight


class Transformer(ModelContract):
    """Embeddings + positions, encoder, decoder, and a linear layer to logits.

    The model ends in logits, not probabilities: ``F.cross_entropy`` applies
    log-softmax itself, and decoding takes ``log_softmax`` of the logits.

    Its contract with training, decoding and checkpoints is
    :class:`~transformer_lib.model.contract.ModelContract`, which also holds its ``forward``
    (padding mask, ``encode``, ``decode``): ``model(src, tgt) -> logits (B, T, V)``.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        if config.n_encoder_layers < 1:
            fail(
                "config.n_encoder_layers",
                "at least 1 for an encoder-decoder",
                repr(config.n_encoder_layers),
                "A model without an encoder is transformer_lib.LanguageModel (notebook 09).",
            )
        if config.n_decoder_layers < 1:
            fail(
                "config.n_decoder_layers",
                "at least 1 for an encoder-decoder",
                repr(config.n_decoder_layers),
                "A model without a decoder is transformer_lib.EncoderOnlyModel (notebook 10).",
            )
        self.config = c = config
        self.src_embed, self.tgt_embed, self.positional = embeddings(c)
        self.encoder = Encoder(c)
        self.decoder = Decoder(c)
        self.output = nn.Linear(c.d_model, c.tgt_vocab_size)
        init_parameters(self, c)
        tie_output(self, c)

    def encode(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: src (B, S) ids, src_mask (B, 1, 1, S) -> memory (B, S, D).
        ``src_mask`` defaults to the padding mask of ``src``."""
        check_token_ids("src", src, None, "(B, S)")  # the ids' range: in src_embed
        check_length("src", src.size(1), self.max_len)
        if src_mask is None:
            src_mask = padding_mask(src, self.pad_id)
        check_mask("src_mask", src_mask, (src.size(0), 1, 1, src.size(1)), "(B, 1, 1, S)")
        x = self.positional(self.src_embed(src, "src"))  # (B, S) -> (B, S, D)
        return self.encoder(x, src_mask, attention)

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor | None,
        tgt_mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: tgt (B, T) ids, memory (B, S, D), src_mask (B, 1, 1, S), tgt_mask
        (B, 1, T, T) -> logits (B, T, V). ``tgt_mask`` defaults to causal AND padding.

        ``src_mask`` has no default: pass the one ``encode`` used, or None only when no
        source position is padding. (A default of no mask would let every query attend to
        the padded source positions without a word of warning: notebook 04's bug.)"""
        check_token_ids("tgt", tgt, None, "(B, T)", min_length=1)  # the range: in tgt_embed
        check_length("tgt", tgt.size(1), self.max_len)
        check_width("memory", memory, self.config.d_model, "(B, S, D)")
        B, T = tgt.shape
        if memory.size(0) != B:
            fail(
                "memory",
                "the same batch size B={B} as tgt",
                f"shape {tuple(memory.shape)}",
                "Pass what encode() returned for the same sentences.",
                B=B,
            )
        check_mask("src_mask", src_mask, (B, 1, 1, memory.size(1)), "(B, 1, 1, S)")
        if tgt_mask is None:
            tgt_mask = target_mask(tgt, self.pad_id)
        check_mask("tgt_mask", tgt_mask, (B, 1, T, T), "(B, 1, T, T)")
        x = self.positional(self.tgt_embed(tgt, "tgt"))  # (B, T) -> (B, T, D)
        hidden = self.decoder(x, memory, tgt_mask, src_mask, attention)
        return self.output(hidden)  # (B, T, D) -> (B, T, V)

    def generation_stack(
        self, memory: torch.Tensor | None = None, src_mask: torch.Tensor | None = None
    ) -> GenerationStack:
        """The decoder, one step at a time (``inference.cache``): memory (N, S, D) and
        src_mask (N, 1, 1, S) from ``encode``."""
        return GenerationStack(
            lambda ids: self.tgt_embed(ids, "tgt"), self.positional, self.decoder.layers,
            self.decoder.norm, self.output, memory=memory, src_mask=src_mask,
        )  # fmt: skip


def count_parameters(module: nn.Module) -> int:
    """Number of trainable parameters; a tied/shared matrix is counted once."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
