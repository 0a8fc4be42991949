"""A decoder-only (GPT-style) language model built from the course's pieces (notebook 09).

What goes, from notebook 06's encoder-decoder: the encoder, and with it cross-attention.
What stays: token embeddings and positions, a stack of layers of masked self-attention
and feed-forward, the output layer to logits. Each layer here is an ``EncoderLayer`` run
under the causal (and padding) mask: a decoder layer without its cross-attention is
exactly that computation (self-attention, then the FFN, each with its residual and
LayerNorm), and it is the layer ``nn.TransformerEncoder(..., is_causal=True)`` uses, so
``reference.TorchLanguageModel`` mirrors this model layer for layer. The loss predicts
the next token at every position: targets are the inputs shifted by one.

Generation reads a prompt and appends one token per step, greedily or by sampling
(temperature, top-k, a seed for reproducible samples); with ``cache=True`` (the default)
each step runs only the newest position (:class:`IncrementalLanguageModel`, with
``incremental``'s key/value pieces).

The config is the encoder-decoder's (``TransformerConfig.decoder_only()``): one vocabulary
(``src_vocab_size == tgt_vocab_size``), ``n_encoder_layers=0``, ``n_decoder_layers`` layers.

Shapes:
    B batch, L sequence length, P prompt length, D d_model, H heads, V vocabulary.
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
from transformer_lib.attention import AttentionWeights
from transformer_lib.config import TransformerConfig
from transformer_lib.contract import check_model, eval_no_grad
from transformer_lib.embeddings import PositionalEncoding, TokenEmbedding
from transformer_lib.incremental import _attend, _keys_values
from transformer_lib.layers import EncoderLayer, sublayer_connection
from transformer_lib.masks import target_mask
from transformer_lib.model import _final_norm, _layer_arguments, init_parameters

__all__ = [
    "LanguageModel",
    "generate",
    "next_token_distribution",
    "sample_next",
    "IncrementalLanguageModel",
    "language_model_batches",
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
        fail("config.tgt_vocab_size", f"src_vocab_size={config.src_vocab_size} (one vocabulary)",
             repr(config.tgt_vocab_size), hint)  # fmt: skip


class LanguageModel(nn.Module):
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
    def pad_id(self) -> int:
        """Id of ``<pad>``: padded positions are never attended to, nor predicted."""
        return self.config.pad_id

    @property
    def max_len(self) -> int:
        """Longest sequence the positional encoding covers, prompt and generation together."""
        return self.config.max_len

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
            fail("top_k", f"at most the vocabulary size V={V}", repr(top_k))
    scaled = logits.float() / temperature  # (N, V)
    if top_k is not None:
        kth = scaled.topk(top_k, dim=-1).values[:, -1:]  # (N, 1): the k-th largest
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.softmax(scaled, dim=-1)


def _check_language_model(model: object) -> None:
    if not isinstance(model, LanguageModel):
        fail("model", "a transformer_lib.LanguageModel", type(model).__name__, error=TypeError)


def check_trainable(name: str, model: object) -> None:
    """``train`` and checkpoints take a ``contract.ModelContract`` or a
    :class:`LanguageModel` (which has no encoder to state a contract for)."""
    if not isinstance(model, LanguageModel):
        check_model(name, model)


def sample_next(
    logits: torch.Tensor,
    temperature: float = 1.0,
    top_k: int | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """One sampling step: one id per row, drawn from :func:`next_token_distribution`.

    Shapes: logits (N, V) -> ids (N,).
    """
    probs = next_token_distribution(logits, temperature, top_k)  # (N, V)
    return torch.multinomial(probs, 1, generator=generator).squeeze(1)  # (N, 1) -> (N,)


def _check_prompt(model: LanguageModel, prompt: object, max_new_tokens: object) -> None:
    check_token_ids("prompt", prompt, model.vocab_size, "(B, P)")
    if prompt.size(1) == 0:
        fail("prompt", "at least one token, (B, P) with P >= 1", f"shape {tuple(prompt.shape)}",
             "Start from <bos> when there is nothing to continue.")  # fmt: skip
    if bool((prompt == model.pad_id).any()):
        fail("prompt", f"no <pad> (id {model.pad_id}): prompts of one length",
             "a prompt with padding", "Generate prompts of different lengths one at a time.")  # fmt: skip
    check_length("prompt", prompt.size(1), model.max_len)
    check_int("max_new_tokens", max_new_tokens, minimum=1)
    room = model.max_len - prompt.size(1)
    if max_new_tokens > room:
        fail("max_new_tokens", f"at most {room} (max_len {model.max_len} - prompt length "
             f"{prompt.size(1)})", repr(max_new_tokens))  # fmt: skip


def generate(
    model: LanguageModel,
    prompt: torch.Tensor,
    max_new_tokens: int,
    method: str = "sample",
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int | None = None,
    eos_id: int | None = None,
    cache: bool = True,
) -> torch.Tensor:
    """The prompt and up to ``max_new_tokens`` tokens after it, one per step.

    ``method="greedy"`` takes the most likely token; ``"sample"`` draws it with
    :func:`sample_next` (``temperature``, ``top_k``), from ``torch.Generator`` seeded with
    ``seed`` (the same seed, the same tokens; None: the global generator). A row that has
    produced ``eos_id`` gets ``<pad>`` after it; generation stops when every row has.
    ``<pad>`` is never generated. Runs in eval mode without gradients and restores the
    model's mode. ``cache=False`` re-runs the whole sequence at every step (the same
    tokens, slower).

    Shapes: prompt (B, P) ids, no padding -> (B, P + n) with n <= max_new_tokens.
    """
    _check_language_model(model)
    _check_prompt(model, prompt, max_new_tokens)
    if method not in ("greedy", "sample"):
        fail("method", "'greedy' or 'sample'", repr(method))
    if not isinstance(cache, bool):
        fail("cache", "a bool", f"{type(cache).__name__} {cache!r}", error=TypeError)
    if eos_id is not None:
        check_int("eos_id", eos_id, minimum=0)
    generator = None
    if seed is not None:
        generator = torch.Generator(prompt.device).manual_seed(seed)
    with eval_no_grad(model):
        tokens = prompt
        if cache:
            step = IncrementalLanguageModel(model).step
        else:

            def step(tokens: torch.Tensor) -> torch.Tensor:
                return model(tokens)[:, -1]  # (B, t, V) -> (B, V)

        done = torch.zeros(prompt.size(0), dtype=torch.bool, device=prompt.device)
        for _ in range(max_new_tokens):
            logits = step(tokens).float()  # (B, V): the next position's
            logits[:, model.pad_id] = float("-inf")
            if method == "greedy":
                new = logits.argmax(dim=-1)  # (B,)
            else:
                new = sample_next(logits, temperature, top_k, generator)  # (B,)
            new = new.masked_fill(done, model.pad_id)
            tokens = torch.cat([tokens, new[:, None]], dim=1)  # (B, t) -> (B, t + 1)
            if eos_id is not None:
                done = done | (new == eos_id)
                if bool(done.all()):
                    break
    return tokens


class IncrementalLanguageModel:
    """A ``LanguageModel``'s logits after a growing sequence, each position run once.

    Each ``step(tokens)`` runs only the positions added since the last step (the whole
    prompt at the first) and returns ``model(tokens)[:, -1]``: every layer keeps the keys
    and values of the positions it has seen. ``generate`` uses it by default; it gives the
    tokens of the plain loop (tests/test_language_model.py), and
    ``benchmarks/decode_speed.py`` measures the gain. The rows hold no padding.

    Shapes: step: tokens (N, t), t longer than at the last step -> logits (N, V).
    """

    def __init__(self, model: LanguageModel) -> None:
        _check_language_model(model)
        self.model = model
        self.kv: list[list[torch.Tensor]] = [[] for _ in model.layers]  # none held yet
        self.length = 0  # positions held

    def step(self, tokens: torch.Tensor) -> torch.Tensor:
        """Shapes: tokens (N, t), the whole sequence so far -> logits (N, V) for the
        position after it."""
        check_tensor("tokens", tokens, ndim=2, integer=True, shape_hint="(N, t)")
        held, t = self.length, tokens.size(1)
        if t <= held:
            fail(
                "tokens",
                f"the sequence of the last step and at least one more token, > {held} positions",
                f"{t} positions",
                "Start a new IncrementalLanguageModel for each sequence.",
            )
        model = self.model
        # embed as forward() does and keep the new positions: they get positions held..t-1
        x = model.positional(model.embed(tokens, "tokens"))[:, held:]  # (N, t, D) -> (N, n, D)
        # new query i (position held + i) reads keys 0 .. held + i: causal, no padding
        query_positions = torch.arange(held, t, device=tokens.device)[:, None]  # (n, 1)
        mask = torch.arange(t, device=tokens.device) <= query_positions  # (n, t)
        for i, layer in enumerate(model.layers):
            x = self._layer_step(i, layer, x, mask[None, None])  # mask (1, 1, n, t)
        self.length = t
        return model.output(model.norm(x)[:, -1])  # (N, D) -> (N, V)

    def _layer_step(
        self, i: int, layer: EncoderLayer, x: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """``EncoderLayer.forward`` for the new positions: (N, n, D) -> (N, n, D)."""

        def self_attention(h: torch.Tensor) -> torch.Tensor:  # h: the new positions
            new = _keys_values(layer.self_attn, h)  # 2 x (N, H, n, Dh)
            if self.kv[i]:
                new = [torch.cat([a, b], dim=2) for a, b in zip(self.kv[i], new)]  # (N, H, t, Dh)
            self.kv[i] = new
            return _attend(layer.self_attn, h, *new, mask)

        dropout, norm_first = layer.dropout, layer.norm_first
        x = sublayer_connection(x, self_attention, layer.norm1, dropout, norm_first)
        return sublayer_connection(x, layer.feed_forward, layer.norm2, dropout, norm_first)


def language_model_batches(
    sequences: Sequence[Sequence[int]],
    max_tokens: int,
    shuffle: bool = False,
    seed: int = 0,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Next-token batches: for each id sequence y, inputs ``<bos> y`` and targets
    ``y <eos>`` (the inputs shifted by one), padded; ``max_tokens`` padded tokens per
    batch at most, sequences of similar length together, shuffled by ``seed``.
    ``train`` takes them as (inputs, targets) pairs.

    Shapes: each batch (B, L) inputs, (B, L) targets.
    """
    from transformer_lib.data import make_batches

    if not isinstance(sequences, Sequence) or not sequences:
        fail("sequences", "a non-empty list of id sequences", repr(sequences)[:80])
    # make_batches' grouping and shuffling, each sequence as its own source
    pairs = [(list(y), list(y)) for y in sequences]
    batches = make_batches(pairs, max_tokens=max_tokens, shuffle=shuffle, seed=seed)
    return [(batch.tgt_in, batch.tgt_out) for batch in batches]


def perplexity(model: LanguageModel, batches: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> float:
    """exp(mean negative log-likelihood per target token, ``<pad>`` left out), in eval
    mode without gradients: the number of equally likely tokens the model is, on average,
    as unsure between as it is on these batches."""
    _check_language_model(model)
    device = next(model.parameters()).device
    total, count = 0.0, 0
    with eval_no_grad(model):
        for inputs, targets in batches:
            inputs, targets = inputs.to(device), targets.to(device)
            logits = model(inputs)  # (B, L, V)
            total += nn.functional.cross_entropy(
                logits.flatten(0, 1).float(), targets.flatten(),
                ignore_index=model.pad_id, reduction="sum",
            ).item()  # fmt: skip
            count += int((targets != model.pad_id).sum())
    if count == 0:
        fail("batches", "at least one target token that is not <pad>", "none")
    return math.exp(total / count)
