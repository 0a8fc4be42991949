"""Generation from notebook 09's ``LanguageModel``: a prompt, then one token per step.

Each step takes the next position's logits, greedily (the most likely token) or by
sampling (``sample_next``: temperature, top-k, a seed for reproducible samples) from
:func:`next_token_distribution` (in ``model``). With ``cache=True`` (the default) each
step runs only the newest position (``cache.IncrementalDecoder``, the one key/value cache
of every model that generates); ``cache=False`` re-runs the whole sequence, the same
tokens, slower.

Shapes:
    B batch, P prompt length, N rows, t sequence length so far, n new positions in a step,
    D d_model, H heads, Dh = D / H, V vocabulary.
"""

from __future__ import annotations

import torch

from transformer_lib._checks import check_int, check_length, check_token_ids, fail
from transformer_lib.inference.cache import IncrementalDecoder
from transformer_lib.model.contract import eval_no_grad
from transformer_lib.model.language_model import (
    LanguageModel,
    _check_language_model,
    next_token_distribution,
)

__all__ = ["sample_next", "generate"]


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
        fail("prompt", "no <pad> (id {pad_id}): prompts of one length", "a prompt with padding",
             "Generate prompts of different lengths one at a time.",
             pad_id=model.pad_id)  # fmt: skip
    check_length("prompt", prompt.size(1), model.max_len)
    check_int("max_new_tokens", max_new_tokens, minimum=1)
    room = model.max_len - prompt.size(1)
    if max_new_tokens > room:
        fail("max_new_tokens", "at most {room} (max_len {max_len} - prompt length {length})",
             repr(max_new_tokens), room=room, max_len=model.max_len,
             length=prompt.size(1))  # fmt: skip


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
            step = IncrementalDecoder(model).step
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
