"""Decoding: greedy search and beam search with a length penalty (paper §6.1).

Both searches take a model of the course's contract (``contract.ModelContract``):
``pad_id``, ``max_len``, ``encode(src, src_mask) -> memory`` and ``decode(tgt, memory,
src_mask) -> logits (B, T, V)``. Both return (tokens, scores). The model returns logits; the
searches take ``log_softmax`` of the last position, so a hypothesis' score is the sum of
its tokens' log-probabilities. They run in eval mode (no dropout) without gradients, and
put the model back in the mode they found it in.

Incremental decoding (``cache=True``, the default): a ``model.Transformer`` keeps each
layer's keys and values between steps and runs only the newest token through the decoder
(``incremental.IncrementalDecoder``), so step t costs O(t) instead of re-running all t
positions. It gives the same tokens and scores as the plain loop (``cache=False``, the
loop notebook 07 teaches), which re-decodes the whole prefix. Other models
(``reference.TorchTransformer``: ``nn.TransformerDecoder`` takes no cached keys and
values) are decoded with the plain loop whatever ``cache`` says.

Edge cases: a source row with no real token (all padding, or S = 0) has nothing to
translate, so its output is just ``<eos>`` with score 0 (log 1), never invented words. An
empty batch (B = 0) gives empty results. ``max_len`` may not exceed the model's
``max_len``: the decoder reads ``<bos>`` and all but the last generated token.

Shapes:
    B batch, K beam size, S source length, L output length, V target vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from transformer_lib._checks import check_alpha, check_int, check_output_length, check_tensor, fail
from transformer_lib.contract import check_model
from transformer_lib.incremental import IncrementalDecoder
from transformer_lib.masks import padding_mask
from transformer_lib.model import Transformer
from transformer_lib.vocab import BOS_ID, EOS_ID

__all__ = ["greedy_decode", "beam_search", "length_penalty", "default_max_len", "inference_mode"]


@contextmanager
def inference_mode(model: nn.Module) -> Iterator[None]:
    """Eval mode and no gradients inside the block; the model's mode is restored after."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)


def default_max_len(model: nn.Module, src_len: int) -> int:
    """Longest output to generate: 2·S + 10 tokens, within the model's position table."""
    check_model("model", model)
    return max(1, min(2 * src_len + 10, model.max_len - 1))


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
    max_len = default_max_len(model, S) if max_len is None else max_len
    check_output_length("max_len", max_len, model.max_len)
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
    """An incremental decoder when asked for and the model has one; else None: the
    plain loop, which decodes the whole prefix at every step."""
    return (
        IncrementalDecoder(model, memory, src_mask)
        if cache and isinstance(model, Transformer)
        else None
    )


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
    with inference_mode(model):
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

    §6.1: "we used beam search with a beam size of 4 and length penalty α = 0.6". A
    hypothesis is finished when it emits ``<eos>``; it is ranked by score / lp(length)
    (see :func:`length_penalty`, length counts ``<eos>``). A sentence stops once it has
    ``beam_size`` finished hypotheses and no live one can still beat them at the current
    length. Beam search is a heuristic: it can drop the greedy path and end with a lower
    score than greedy decoding (notebook 07 shows how often).
    ``cache``: incremental decoding (module docstring); the cache's rows follow the beams.

    Shapes: src (B, S) -> tokens (B, L) (padded after ``<eos>``, no ``<bos>``),
    scores (B,) length-normalised (the plain log-probability sum when alpha = 0).
    """
    check_int("beam_size", beam_size, minimum=1)
    check_alpha(alpha)
    _check_cache(cache)
    K = beam_size
    with inference_mode(model):
        memory, src_mask, max_len, empty = _start(model, src, src_mask, max_len)
        pad_id, B = model.pad_id, src.size(0)
        memory = memory.repeat_interleave(K, dim=0)  # (B, S, D) -> (B*K, S, D)
        beam_mask = src_mask.repeat_interleave(K, dim=0)  # (B*K, 1, 1, S)
        stepper = _stepper(model, memory, beam_mask, cache)
        beam_empty = empty.repeat_interleave(K)  # (B,) -> (B*K,)
        tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=src.device)
        alive = torch.full((B, K), float("-inf"), device=src.device)
        alive[:, 0] = 0.0  # the K beams start identical: keep one so they do not duplicate
        finished: list[list[tuple[float, list[int]]]] = [[] for _ in range(B)]
        done = [False] * B
        for length in range(1, max_len + 1):
            log_probs = _next_log_probs(
                model, tokens, memory, beam_mask, (pad_id, bos_id), beam_empty, eos_id, stepper
            )
            V = log_probs.size(-1)
            candidates = (alive[:, :, None] + log_probs.view(B, K, V)).view(B, K * V)
            top_scores, top_index = candidates.topk(min(2 * K, K * V), dim=-1)  # (B, 2K)
            beam, token = top_index // V, top_index % V
            is_eos = token == eos_id
            _collect(finished, done, tokens, top_scores, beam, is_eos, K, length, alpha, eos_id)
            # the K best candidates that did not end go on (at most K of 2K can end)
            rank = torch.arange(top_scores.size(1), device=src.device) + is_eos * 2 * K
            keep = rank.argsort(dim=-1)[:, :K]  # (B, K)
            alive = top_scores.gather(1, keep)
            rows = torch.arange(B, device=src.device)[:, None] * K + beam.gather(1, keep)
            tokens = torch.cat([tokens[rows.view(-1)], token.gather(1, keep).view(-1, 1)], 1)
            if stepper is not None:
                stepper.reorder(rows.view(-1))  # each kept beam takes its parent's keys/values
            _update_done(finished, done, alive, K, length, alpha)
            if all(done):
                break
        _add_unfinished(finished, done, tokens, alive, K, alpha)
    best = [max(hypotheses, key=lambda h: h[0]) for hypotheses in finished]
    return _pack(best, pad_id, src.device)


def _collect(finished, done, tokens, top_scores, beam, is_eos, K, length, alpha, eos_id):
    """Move candidates that end with <eos> (among the K best) to their sentence's list."""
    if not bool(is_eos[:, :K].any()):
        return
    scores, beams, ends = top_scores.tolist(), beam.tolist(), is_eos.tolist()
    prefixes = tokens[:, 1:].tolist()
    for b, hypotheses in enumerate(finished):
        for j in range(min(K, len(scores[b]))):
            if ends[b][j] and not done[b] and scores[b][j] > float("-inf"):
                normalised = scores[b][j] / length_penalty(length, alpha)
                hypotheses.append((normalised, prefixes[b * K + beams[b][j]] + [eos_id]))


def _update_done(finished, done, alive, K, length, alpha) -> None:
    """A sentence is done when K hypotheses ended and no live one can beat the worst of them,
    or when some ended and none is left alive (an empty source: only <eos> was possible)."""
    best_alive = alive.max(dim=1).values.tolist()
    for b, hypotheses in enumerate(finished):
        if done[b] or not hypotheses:
            continue
        if best_alive[b] == float("-inf"):
            done[b] = True
        elif len(hypotheses) >= K:
            worst_kept = sorted(h[0] for h in hypotheses)[-K]
            done[b] = best_alive[b] / length_penalty(length, alpha) <= worst_kept


def _add_unfinished(finished, done, tokens, alive, K, alpha) -> None:
    """Sentences that hit max_len also consider their live (unfinished) hypotheses."""
    length = tokens.size(1) - 1
    prefixes, scores = tokens[:, 1:].tolist(), alive.tolist()
    for b, hypotheses in enumerate(finished):
        if not done[b] or not hypotheses:
            hypotheses.extend(
                (s / length_penalty(length, alpha), prefixes[b * K + k])
                for k, s in enumerate(scores[b])
                if s > float("-inf")
            )


def _pack(best, pad_id: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """[(score, ids)] -> tokens (B, L) padded with pad_id, scores (B,)."""
    L = max(1, max((len(ids) for _, ids in best), default=0))  # an empty batch: (0, 1)
    tokens = torch.full((len(best), L), pad_id, dtype=torch.long)
    for b, (_, ids) in enumerate(best):
        tokens[b, : len(ids)] = torch.tensor(ids, dtype=torch.long)
    scores = torch.tensor([score for score, _ in best], dtype=torch.float32)
    return tokens.to(device), scores.to(device)
