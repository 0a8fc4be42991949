"""Incremental decoding: one key/value cache for every model that generates.

The plain loop of notebook 07 runs the decoder over the whole prefix at every step, so
step t costs t positions. Under the causal mask no position ever reads a later one, so the
keys and values each self-attention computed for the earlier positions stay what they
were: keep them (a key/value cache) and run only the new positions, embedded at their own
positions. Cross-attention reads the encoder memory, the same at every step: its keys and
values are projected once.

One mechanism serves the encoder-decoder (``model.Transformer``), the decoder-only model
(``LanguageModel``) and the language model read as a translator: each states what a step
runs (``generation_stack``, the model's contract), and :class:`IncrementalDecoder` runs it.
The layers notebooks 03-06 teach know nothing of the cache: one step per layer kind
(:func:`encoder_layer_step`, :func:`decoder_layer_step`) reuses their attention modules
(``keys_values``, ``attend``), feed-forward networks, norms and notebook 06's
``sublayer_connection``, so a layer's maths lives in one place. It gives the plain loop's
tokens (tests/test_incremental.py, tests/test_language_model.py);
``benchmarks/decode_speed.py`` measures the gain.

Shapes:
    N rows (sentences, or sentences x beams), t positions so far, n new positions in a
    step, P prefix length, S source length, D d_model, H heads, Dh = D / H, V vocabulary.
"""

from __future__ import annotations

import torch

from transformer_lib._checks import check_tensor, fail
from transformer_lib.model.contract import CourseModel, check_course_model
from transformer_lib.model.layers import DecoderLayer, EncoderLayer, sublayer_connection

__all__ = ["KeyValueCache", "IncrementalDecoder", "encoder_layer_step", "decoder_layer_step"]


class KeyValueCache:
    """What one search keeps between steps: each layer's self-attention keys and values
    (N, H, t, Dh), the memory's keys and values for cross-attention, and which of the t
    positions may be attended to (``<pad>`` may not)."""

    def __init__(self, n_layers: int) -> None:
        self.keys_values: list[tuple[torch.Tensor, torch.Tensor] | None] = [None] * n_layers
        self.memory: list[tuple[torch.Tensor, torch.Tensor] | None] = [None] * n_layers
        self.real: torch.Tensor | None = None  # (N, t) bool: positions that may be read

    @property
    def length(self) -> int:
        """t, the positions held."""
        return 0 if self.real is None else self.real.size(1)

    def add(self, layer: int, keys: torch.Tensor, values: torch.Tensor):
        """Append the new positions' keys and values (N, H, n, Dh) to ``layer``'s;
        returns all of them (N, H, t, Dh)."""
        held = self.keys_values[layer]
        if held is not None:
            keys, values = torch.cat([held[0], keys], dim=2), torch.cat([held[1], values], dim=2)
        self.keys_values[layer] = keys, values
        return keys, values

    def grow(self, real: torch.Tensor) -> torch.Tensor:
        """Take n new positions, ``real`` (N, n) where they may be read; returns the mask
        (N, 1, n, t) of the new queries: each reads the real positions up to its own."""
        if self.real is not None and real.size(0) != self.real.size(0):
            fail("tokens", "the {rows} rows of the earlier steps", f"{real.size(0)} rows",
                 "Beam search changes rows with reorder().", rows=self.real.size(0))  # fmt: skip
        self.real = real if self.real is None else torch.cat([self.real, real], dim=1)
        t, n = self.real.size(1), real.size(1)
        query = torch.arange(t - n, t, device=real.device)[:, None]  # (n, 1) absolute
        causal = torch.arange(t, device=real.device) <= query  # (n, t)
        return (causal & self.real[:, None, :])[:, None]  # (N, 1, n, t)

    def reorder(self, rows: torch.Tensor) -> None:
        """Keep the rows ``rows`` of everything held, in that order (beam search's new
        beams each take their parent's keys and values). Shapes: rows (N_new,)."""
        self.keys_values = [_rows(kv, rows) for kv in self.keys_values]
        self.memory = [_rows(kv, rows) for kv in self.memory]
        if self.real is not None:
            self.real = self.real[rows]


def _rows(keys_values, rows: torch.Tensor):
    """Rows ``rows`` of a layer's (keys, values), or None if it holds none."""
    return None if keys_values is None else (keys_values[0][rows], keys_values[1][rows])


def _cached_self_attention(layer, i: int, mask: torch.Tensor, cache: KeyValueCache):
    """``layer.self_attn`` over the held positions and the new ones ``h`` (N, n, D), whose
    keys and values join ``cache``'s for layer ``i``: h -> (N, n, D)."""

    def self_attention(h: torch.Tensor) -> torch.Tensor:
        keys, values = cache.add(i, *layer.self_attn.keys_values(h, h))
        return layer.self_attn.attend(h, keys, values, mask)

    return self_attention


def encoder_layer_step(
    layer: EncoderLayer, i: int, x: torch.Tensor, mask: torch.Tensor, cache: KeyValueCache
) -> torch.Tensor:
    """``EncoderLayer.forward`` (under the causal mask) for the new positions, with the
    keys and values of the earlier ones from ``cache``: (N, n, D) -> (N, n, D)."""
    self_attention = _cached_self_attention(layer, i, mask, cache)
    dropout, norm_first = layer.dropout, layer.norm_first
    x = sublayer_connection(x, self_attention, layer.norm1, dropout, norm_first)
    return sublayer_connection(x, layer.feed_forward, layer.norm2, dropout, norm_first)


def decoder_layer_step(
    layer: DecoderLayer,
    i: int,
    x: torch.Tensor,
    mask: torch.Tensor,
    cache: KeyValueCache,
    src_mask: torch.Tensor | None,
) -> torch.Tensor:
    """``DecoderLayer.forward`` for the new positions: (N, n, D) -> (N, n, D); the memory's
    keys and values are in ``cache.memory``."""
    self_attention = _cached_self_attention(layer, i, mask, cache)

    def cross_attention(h: torch.Tensor) -> torch.Tensor:
        return layer.cross_attn.attend(h, *cache.memory[i], src_mask)

    dropout, norm_first = layer.dropout, layer.norm_first
    x = sublayer_connection(x, self_attention, layer.norm1, dropout, norm_first)
    x = sublayer_connection(x, cross_attention, layer.norm2, dropout, norm_first)
    return sublayer_connection(x, layer.feed_forward, layer.norm3, dropout, norm_first)


class IncrementalDecoder:
    """The logits after a growing sequence, each position run once, for one search.

    ``IncrementalDecoder(model, memory, src_mask)`` takes what ``model.generation_stack``
    states (for an encoder-decoder, the memory ``encode`` returned: its keys and values are
    projected once per layer). Each ``step(tokens)`` takes the whole sequence so far, runs
    only the positions added since the last step (at the first, the model's prefix and every
    token given) and returns the logits after its last token, equal to the plain loop's
    (``model.decode(tokens, memory, src_mask)[:, -1]``, or ``model(tokens)[:, -1]``). Beam
    search calls ``reorder`` when its beams change rows.

    Shapes: memory (N, S, D) or the model's own, src_mask (N, 1, 1, S);
    step: tokens (N, t) ids -> logits (N, V).
    """

    def __init__(
        self,
        model: CourseModel,
        memory: torch.Tensor | None = None,
        src_mask: torch.Tensor | None = None,
    ) -> None:
        check_course_model("model", model)
        stack = model.generation_stack(memory, src_mask)
        if stack is None:
            fail("model", "a model with a cached step (generation_stack)", type(model).__name__,
                 "Decode it with cache=False, the plain loop.", error=TypeError)  # fmt: skip
        self.stack, self.pad_id = stack, model.pad_id
        self.cache = KeyValueCache(len(stack.layers))
        if stack.memory is not None:
            for i, layer in enumerate(stack.layers):
                self.cache.memory[i] = layer.cross_attn.keys_values(stack.memory, stack.memory)
        self.seen = 0  # tokens of the sequence run so far

    @property
    def length(self) -> int:
        """Positions held in the cache: the prefix's and the tokens run so far."""
        return self.cache.length

    def step(self, tokens: torch.Tensor) -> torch.Tensor:
        """Shapes: tokens (N, t), the whole sequence so far, longer than at the last step
        -> logits (N, V) for the position after it."""
        check_tensor("tokens", tokens, ndim=2, integer=True, shape_hint="(N, t)")
        if tokens.size(1) <= self.seen:
            fail("tokens", "the sequence of the last step and at least one more token, "
                 "> {seen} positions", f"{tokens.size(1)} positions",
                 "Start a new IncrementalDecoder for each search.", seen=self.seen)  # fmt: skip
        stack, new = self.stack, tokens[:, self.seen :]  # (N, n)
        start = stack.start + torch.arange(self.seen, tokens.size(1), device=tokens.device)
        positions = start.expand(new.shape)  # (N, n): the tokens' positions
        if self.seen == 0 and stack.first_token is not None:
            new = new.clone()
            new[:, 0] = stack.first_token
        if self.seen == 0 and stack.prefix is not None:
            prefix = stack.prefix  # (N, P), read before the first token
            before = torch.arange(prefix.size(1), device=tokens.device).expand(prefix.shape)
            new, positions = torch.cat([prefix, new], dim=1), torch.cat([before, positions], 1)
        mask = self.cache.grow(new != self.pad_id)  # (N, 1, n, t)
        x = stack.positional(stack.embed(new), positions)  # (N, n) -> (N, n, D)
        for i, layer in enumerate(stack.layers):
            if isinstance(layer, DecoderLayer):
                x = decoder_layer_step(layer, i, x, mask, self.cache, stack.src_mask)
            else:
                x = encoder_layer_step(layer, i, x, mask, self.cache)
        self.seen = tokens.size(1)
        return stack.output(stack.norm(x[:, -1]))  # (N, D) -> (N, V)

    def reorder(self, rows: torch.Tensor) -> None:
        """Keep the rows ``rows`` (beam search's new beams). Shapes: rows (N_new,)."""
        self.cache.reorder(rows)
        if self.stack.src_mask is not None:
            self.stack.src_mask = self.stack.src_mask[rows]
        if not isinstance(self.stack.start, int):
            self.stack.start = self.stack.start[rows]
