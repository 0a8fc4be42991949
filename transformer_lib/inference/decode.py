"""Decoding: greedy search and beam search with a length penalty (paper §6.1).

Both searches take a model of the course's contract (``contract.ModelContract``):
``pad_id``, ``max_len``, ``encode(src, src_mask) -> memory`` and ``decode(tgt, memory,
src_mask) -> logits (B, T, V)``. Both return (tokens, scores). The model returns logits; the
searches take ``log_softmax`` of the last position, so a hypothesis' score is the sum of
its tokens' log-probabilities. They run in eval mode (no dropout) without gradients, and
put the model back in the mode they found it in.

Incremental decoding (``cache=True``, the default): a model that states a cached step
(``generation_stack``: ``model.Transformer`` and the language model read as a translator)
keeps each layer's keys and values between steps and runs only the newest token
(``cache.IncrementalDecoder``), so step t costs O(t) instead of re-running all t
positions. It gives the same tokens and scores as the plain loop (``cache=False``, the
loop notebook 07 teaches), which re-decodes the whole prefix. Other models
(``reference.TorchTransformer``: ``nn.TransformerDecoder`` takes no cached keys and
values) are decoded with the plain loop whatever ``cache`` says.

Edge cases: a source row with no real token (all padding, or S = 0) has nothing to
translate, so its output is just ``<eos>`` with score 0 (log 1), never invented words. An
empty batch (B = 0) gives empty results. ``max_len`` may not exceed the positions the
model has for an output (``output_room``: its ``max_len`` for an encoder-decoder; for the
language model read as a translator, what the source leaves of it): the decoder reads
``<bos>`` and all but the last generated token.

Beam search's bookkeeping (growing, filing and ranking the hypotheses, the early stop) is
in ``beam``; ``beam_search`` here runs its loop.

Shapes:
    B batch, K beam size, S source length, L output length, V target vocabulary,
    N rows decoded together (B in greedy search, B·K in beam search), t tokens so far.
"""

from __future__ import annotations

import torch
from torch import nn

from transformer_lib._checks import check_alpha, check_int, check_output_length, check_tensor, fail
from transformer_lib.data.vocab import BOS_ID, EOS_ID
from transformer_lib.inference import beam
from transformer_lib.inference.cache import IncrementalDecoder
from transformer_lib.model.contract import check_model, eval_no_grad
from transformer_lib.model.masks import padding_mask

__all__ = ["greedy_decode", "beam_search", "length_penalty", "default_max_len", "eval_no_grad"]


def default_max_len(model: nn.Module, src_len: int) -> int:
    """Longest output to generate: 2·S + 10 tokens, within the model's position table."""
    check_model("model", model)
    return _default_max_len(model, src_len)


def _default_max_len(model: nn.Module, src_len: int) -> int:
    # within the position table (max_len - 1, as ever) and the room the model has for an
    # output after this source (``output_room``: all of the table for an encoder-decoder)
    return max(1, min(2 * src_len + 10, model.max_len - 1, model.output_room(src_len)))


def _start(
    model: nn.Module, src: torch.Tensor, src_mask: torch.Tensor | None, max_len: int | None
) -> tuple[torch.Tensor, torch.Tensor, int, torch.Tensor]:
    """Encode once: (memory (B, S, D), src_mask (B, 1, 1, S), max_len, empty (B,)), where
    ``empty`` marks the rows with no source token to attend to."""
    check_model("model", model)
    check_tensor("src", src, ndim=2, integer=True, shape_hint="(B, S)")
    B, S = src.shape
    if src_mask is None:
        src_mask = padding_mask(src, model.pad_id)
    max_len = _default_max_len(model, S) if max_len is None else max_len
    check_output_length("max_len", max_len, model.output_room(S), model.max_len)
    memory = model.encode(src, src_mask)  # checks src_mask
    src_mask = src_mask.expand(B, 1, 1, S)  # a (1, 1, 1, S) mask: one row per sentence
    empty = ~src_mask.reshape(B, S).any(dim=1)  # (B, 1, 1, S) -> (B,)
    return memory, src_mask, max_len, empty


def _check_cache(cache: object) -> None:
    if not isinstance(cache, bool):
        fail("cache", "a bool", f"{type(cache).__name__} {cache!r}", error=TypeError)


def _stepper(
    model: nn.Module, memory: torch.Tensor, src_mask: torch.Tensor, cache: bool
) -> IncrementalDecoder | None:
    """An incremental decoder when asked for and the model states a cached step
    (``generation_stack``); else None: the plain loop, which decodes the whole prefix at
    every step."""
    if not cache or model.generation_stack(memory, src_mask) is None:
        return None
    return IncrementalDecoder(model, memory, src_mask)


def _next_log_probs(
    model: nn.Module,
    tokens: torch.Tensor,
    memory: torch.Tensor,
    src_mask: torch.Tensor,
    banned: tuple[int, ...],
    empty: torch.Tensor,
    eos_id: int,
    stepper: IncrementalDecoder | None,
) -> torch.Tensor:
    """Log-probabilities of the next token; ``banned`` ids (<pad>, <bos>) get -inf, and
    rows of an ``empty`` source can only end: ``<eos>`` with probability 1. With a
    ``stepper``, only the newest token runs through the decoder.

    Shapes: tokens (N, t), empty (N,) -> (N, V).
    """
    if stepper is None:
        logits = model.decode(tokens, memory, src_mask)[:, -1]  # (N, t, V) -> (N, V)
    else:
        logits = stepper.step(tokens)  # (N, V)
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    log_probs[:, list(banned)] = float("-inf")  # never generated: not renormalised
    # masked_fill rather than log_probs[empty]: boolean indexing would wait for the device
    log_probs = log_probs.masked_fill(empty[:, None], float("-inf"))  # no invented words
    log_probs[:, eos_id] = log_probs[:, eos_id].masked_fill(empty, 0.0)
    return log_probs


def greedy_decode(
    model: nn.Module,
    src: torch.Tensor,
    src_mask: torch.Tensor | None = None,
    max_len: int | None = None,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
    cache: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Pick the most probable next token until every sentence has produced ``<eos>``.

    Returns the generated ids without ``<bos>``: each row ends with its first ``<eos>``
    (unless ``max_len`` was reached) and is padded with ``model.pad_id`` after it, and the
    sum of the chosen tokens' log-probabilities (as :func:`beam_search` returns them).
    ``cache``: incremental decoding with a key/value cache (see the module docstring).

    Shapes: src (B, S), src_mask (B, 1, 1, S) -> tokens (B, L), scores (B,); L <= max_len.
    """
    _check_cache(cache)
    with eval_no_grad(model):
        memory, src_mask, max_len, empty = _start(model, src, src_mask, max_len)
        stepper = _stepper(model, memory, src_mask, cache)
        pad_id, B = model.pad_id, src.size(0)
        tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1)
        scores = torch.zeros(B, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        for _ in range(max_len):
            best_log_prob, best = _next_log_probs(
                model, tokens, memory, src_mask, (pad_id, bos_id), empty, eos_id, stepper
            ).max(dim=-1)
            best = best.masked_fill(done, pad_id)  # finished rows only get padding
            scores += best_log_prob.masked_fill(done, 0.0)
            tokens = torch.cat([tokens, best[:, None]], dim=1)  # (B, t) -> (B, t + 1)
            done |= best == eos_id
            if bool(done.all()):
                break
    return tokens[:, 1:], scores


def length_penalty(length: int, alpha: float) -> float:
    """GNMT's lp(Y) = ((5 + |Y|) / 6)^α (Wu et al. 2016), the divisor of a hypothesis' score.

    Log-probabilities are negative and every extra token adds another one, so raw scores
    favour short outputs. Dividing by lp, which grows with length, offsets that bias:
    α = 0 switches it off, larger α favours longer outputs more.
    """
    check_alpha(alpha)
    return ((5.0 + length) / 6.0) ** alpha


def beam_search(
    model: nn.Module,
    src: torch.Tensor,
    src_mask: torch.Tensor | None = None,
    beam_size: int = 4,
    max_len: int | None = None,
    alpha: float = 0.6,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
    cache: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Keep the ``beam_size`` best partial outputs per sentence, for a batch of sentences.

    §6.1: "we used beam search with a beam size of 4 and length penalty α = 0.6" (the
    defaults here) and "We set the maximum output length during inference to input length
    + 50, but terminate early when possible". The search follows tensor2tensor's
    ``beam_search`` (``utils/beam_search.py``), the paper's code:

    - each step extends the K live hypotheses by every token and takes the 2K best
      candidates by log-probability; those that end with ``<eos>`` are finished, ranked by
      score / lp(length) (:func:`length_penalty`; the length counts ``<eos>``), and the K
      best finished are kept; the K best that did not end live on. Each live hypothesis
      has one ``<eos>`` candidate, so at most K of the 2K end and K always live on.
    - early stop: a live hypothesis' log-probability only falls as it grows, and lp only
      grows, so none can reach more than its log-probability / lp(``max_len``). A sentence
      is done once it has a finished hypothesis and every kept one beats that bound for its
      best live hypothesis: the output is then the one the search would return without
      stopping early. (Dividing by lp of the *current* length is no bound when α > 0.)
    - the cap differs: ``max_len`` defaults to 2·S + 10 (:func:`default_max_len`; S is
      the batch's padded source length), within the model's position table, not S + 50:
      shorter for S < 40. tensor2tensor caps at the input length plus a number of steps.
    - a sentence that reaches ``max_len`` before its bound is met also ranks its live
      hypotheses, normalised at that length (tensor2tensor uses them only when none ended).
    - K = 1 is greedy decoding (:func:`greedy_decode`, its score divided by lp), as in
      tensor2tensor's Transformer, which runs beam search only when the beam size is > 1.
      (The 2K rule would otherwise also end a hypothesis on an ``<eos>`` ranked second.)

    Beam search is a heuristic: it can drop the greedy path and end with a lower score than
    greedy decoding. ``cache``: incremental decoding (module docstring); the cache's rows
    follow the beams.

    Shapes: src (B, S) -> tokens (B, L) (padded after ``<eos>``, no ``<bos>``),
    scores (B,) length-normalised (the plain log-probability sum when alpha = 0).
    """
    check_int("beam_size", beam_size, minimum=1)
    check_alpha(alpha)
    _check_cache(cache)
    if beam_size == 1:
        tokens, scores = greedy_decode(model, src, src_mask, max_len, bos_id, eos_id, cache)
        lengths = (tokens != model.pad_id).sum(dim=1)  # (B,), <eos> included
        return tokens, scores / ((5.0 + lengths) / 6.0) ** alpha  # / lp, as length_penalty
    K = beam_size
    with eval_no_grad(model):
        memory, src_mask, max_len, empty = _start(model, src, src_mask, max_len)
        pad_id, B = model.pad_id, src.size(0)
        memory = memory.repeat_interleave(K, dim=0)  # (B, S, D) -> (B*K, S, D)
        beam_mask = src_mask.repeat_interleave(K, dim=0)  # (B*K, 1, 1, S)
        stepper = _stepper(model, memory, beam_mask, cache)
        beam_empty = empty.repeat_interleave(K)  # (B,) -> (B*K,)
        tokens, alive, ended_tokens, ended, done = beam.beams(B, K, bos_id, pad_id, src.device)
        best_lp = length_penalty(max_len, alpha)  # the largest lp a hypothesis can reach
        for length in range(1, max_len + 1):
            log_probs = _next_log_probs(
                model, tokens, memory, beam_mask, (pad_id, bos_id), beam_empty, eos_id, stepper
            )
            seqs, scores, parents = beam.grow(tokens, alive, log_probs)  # the 2K best candidates
            is_eos = seqs[:, :, -1] == eos_id  # (B, 2K)
            lp = length_penalty(length, alpha)
            ended_tokens, ended = beam.keep_finished(
                ended_tokens, ended, seqs, scores, is_eos, lp, pad_id
            )
            tokens, alive, rows = beam.keep_alive(seqs, scores, parents, is_eos, K)
            if stepper is not None:
                stepper.reorder(rows)  # each kept beam takes its parent's keys/values
            done |= beam.bound_met(ended, alive, best_lp)
            if bool(done.all()):  # one host sync per step, as in greedy_decode
                break
        return beam.best(ended_tokens, ended, tokens, alive / lp, done, pad_id)
