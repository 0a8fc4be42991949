"""Notebook 09's decoder-only model, what it samples from, its batches and its perplexity.

``LanguageModel``: token embeddings and positions, a stack of ``EncoderLayer``s run under
the causal (and padding) mask, the output layer to logits (the package docstring says why
those layers). ``next_token_distribution``: what one sampling step draws from.
``perplexity``: exp of the mean next-token loss. Generation is in ``generation``.

Shapes:
    B batch, L sequence length, N rows, D d_model, V vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from transformer_lib._checks import (
    check_int,
    check_length,
    check_mask,
    check_real,
    check_tensor,
    check_token_ids,
    fail,
)
from transformer_lib.model.attention import AttentionWeights
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import (
    CourseModel,
    GenerationStack,
    check_course_model,
    eval_no_grad,
    split_pairs,
)
from transformer_lib.model.embeddings import PositionalEncoding, TokenEmbedding
from transformer_lib.model.layers import EncoderLayer
from transformer_lib.model.masks import target_mask
from transformer_lib.model.transformer import _final_norm, _layer_arguments, init_parameters

__all__ = [
    "LanguageModel",
    "next_token_distribution",
    "perplexity",
]


def _check_config(config: object) -> None:
    if not isinstance(config, TransformerConfig):
        fail("config", "a TransformerConfig", type(config).__name__, error=TypeError)
    hint = "Build it with TransformerConfig.decoder_only(vocab_size, ...)."
    if config.n_encoder_layers != 0:
        fail("config.n_encoder_layers", "0 (a decoder-only model has no encoder)",
             repr(config.n_encoder_layers), hint)  # fmt: skip
    if config.src_vocab_size != config.tgt_vocab_size:
        fail("config.tgt_vocab_size", "src_vocab_size={size} (one vocabulary)",
             repr(config.tgt_vocab_size), hint, size=config.src_vocab_size)  # fmt: skip


class LanguageModel(CourseModel):
    """Embeddings + positions, N causal self-attention layers, a linear layer to logits.

    ``LanguageModel(config)`` states what training, generation and checkpoints rely on:
    ``config``, ``pad_id``, ``max_len`` and ``vocab_size``. With ``config.tie_output``
    (GPT-2's choice, and §3.4's) the output layer reuses the embedding matrix; with
    ``norm_first`` the stack ends in a LayerNorm (GPT-2's "final LayerNorm").

    Shapes: tokens (B, L) ids -> logits (B, L, V).
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        _check_config(config)
        self.config = c = config
        self.embed = TokenEmbedding(c.tgt_vocab_size, c.d_model)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout, c.learned_positions)
        self.layers = nn.ModuleList(
            EncoderLayer(**_layer_arguments(c)) for _ in range(c.n_decoder_layers)
        )
        self.norm = _final_norm(c)
        self.output = nn.Linear(c.d_model, c.tgt_vocab_size)
        init_parameters(self, c)
        if c.tie_output:
            self.output.weight = self.embed.embedding.weight

    @property
    def vocab_size(self) -> int:
        """V, the width of the logits and the number of ids the model reads."""
        return self.config.tgt_vocab_size

    def forward(
        self,
        tokens: torch.Tensor,
        mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: tokens (B, L) ids, mask (B, 1, L, L) -> logits (B, L, V), where position
        i's logits predict token i + 1. ``mask`` defaults to causal AND padding (the
        decoder's target mask). With ``attention``, ``attention.encoder`` gets one
        (B, H, L, L) map per layer (the layers are ``EncoderLayer``s)."""
        check_token_ids("tokens", tokens, None, "(B, L)", min_length=1)  # range: in embed
        check_length("tokens", tokens.size(1), self.max_len)
        B, L = tokens.shape
        if mask is None:
            mask = target_mask(tokens, self.pad_id)  # (B, 1, L, L)
        check_mask("mask", mask, (B, 1, L, L), "(B, 1, L, L)")
        x = self.positional(self.embed(tokens, "tokens"))  # (B, L) -> (B, L, D)
        for layer in self.layers:
            x = layer(x, mask, attention)
        return self.output(self.norm(x))  # (B, L, D) -> (B, L, V)

    def split_batch(self, batch: object) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """An (inputs, targets) batch (``data.language_model_batches``) -> ((inputs,), targets)."""
        return split_pairs(batch)

    def generation_stack(
        self, memory: torch.Tensor | None = None, src_mask: torch.Tensor | None = None
    ) -> GenerationStack:
        """The layers under the causal mask, run one step at a time (``inference.cache``)."""
        return GenerationStack(
            lambda ids: self.embed(ids, "tokens"), self.positional, self.layers, self.norm,
            self.output,
        )  # fmt: skip


def next_token_distribution(
    logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None
) -> torch.Tensor:
    """What one sampling step draws from: divide the logits by ``temperature`` (below 1
    sharpens the distribution, above 1 flattens it), keep the ``top_k`` largest (the others
    get probability 0; ties with the k-th are kept), softmax.

    Shapes: logits (N, V) -> probabilities (N, V).
    """
    check_tensor("logits", logits, ndim=2, floating=True, shape_hint="(N, V)")
    check_real("temperature", temperature)
    if temperature <= 0:
        fail("temperature", "a float > 0 (for the most likely token, use greedy)",
             repr(temperature))  # fmt: skip
    V = logits.size(-1)
    if top_k is not None:
        check_int("top_k", top_k, minimum=1)
        if top_k > V:
            fail("top_k", "at most the vocabulary size V={V}", repr(top_k), V=V)
    scaled = logits.float() / temperature  # (N, V)
    if top_k is not None:
        kth = scaled.topk(top_k, dim=-1).values[:, -1:]  # (N, 1): the k-th largest
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)


def _check_language_model(model: object) -> None:
    if not isinstance(model, LanguageModel):
        fail("model", "a transformer_lib.LanguageModel", type(model).__name__, error=TypeError)


def perplexity(model: CourseModel, batches: Sequence[object]) -> float:
    """exp(mean negative log-likelihood per target token, ``<pad>`` left out), in eval
    mode without gradients: the number of equally likely tokens the model is, on average,
    as unsure between as it is on these batches (any model of the course, on the batches
    it trains on: ``model.split_batch``; targets equal to ``model.ignore_index`` are left
    out, so for an encoder-only model it is the masked-token perplexity)."""
    check_course_model("model", model)
    device = next(model.parameters()).device
    total, count = 0.0, 0
    with eval_no_grad(model):
        for batch in batches:
            inputs, targets = model.split_batch(batch)
            targets = targets.to(device)
            logits = model(*(x.to(device) for x in inputs))  # (B, L, V)
            total += nn.functional.cross_entropy(
                logits.flatten(0, 1).float(), targets.flatten(),
                ignore_index=model.ignore_index, reduction="sum",
            ).item()  # fmt: skip
            count += int((targets != model.ignore_index).sum())
    if count == 0:
        fail("batches", "at least one target token that is not <pad>", "none")
    return math.exp(total / count)
