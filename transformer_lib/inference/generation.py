"""Generation from notebook 09's ``LanguageModel``: a prompt, then one token per step.

Each step takes the next position's logits, greedily (the most likely token) or by
sampling (``sample_next``: temperature, top-k, a seed for reproducible samples) from
:func:`next_token_distribution` (in ``model``). With ``cache=True`` (the default) each
step runs only the newest position (:class:`IncrementalLanguageModel`, with
``incremental``'s key/value pieces); ``cache=False`` re-runs the whole sequence, the same
tokens, slower.

Shapes:
    B batch, P prompt length, N rows, t sequence length so far, n new positions in a step,
    D d_model, H heads, Dh = D / H, V vocabulary.
"""

from __future__ import annotations

import torch

from transformer_lib._checks import check_int, check_length, check_tensor, check_token_ids, fail
from transformer_lib.inference.cache import _attend, _keys_values
from transformer_lib.model.contract import eval_no_grad
from transformer_lib.model.language_model import (
    LanguageModel,
    _check_language_model,
    next_token_distribution,
)
from transformer_lib.model.layers import EncoderLayer, sublayer_connection

__all__ = ["sample_next", "generate", "IncrementalLanguageModel"]


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
