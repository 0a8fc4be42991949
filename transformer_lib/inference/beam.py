"""Beam search's bookkeeping, step by step: the tensors ``decode.beam_search`` keeps.

A search holds, for each of B sentences, K live hypotheses (their tokens and summed
log-probabilities) and the K best finished ones (ranked by score / lp, the length penalty).
Each step grows the live ones by one token (:func:`grow`), files the candidates that end
with ``<eos>`` among the finished (:func:`keep_finished`) and lets the K best others live
on (:func:`keep_alive`); :func:`bound_met` is the early stop and :func:`best` the answer.
``decode.beam_search`` runs the loop and explains the rules (tensor2tensor's).

Shapes:
    B batch, K beam size, t tokens so far (with ``<bos>``), L output length, V target
    vocabulary.
"""

from __future__ import annotations

import torch


def beams(
    B: int, K: int, bos_id: int, pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The search's start: tokens (B*K, 1) all ``<bos>``; alive (B, K) log-probabilities,
    0 for the first beam and -inf for the others (the K beams start identical: keeping one
    stops them from duplicating); ended_tokens (B, K, 0) and ended (B, K) = -inf, no
    finished hypothesis yet; done (B,) False."""
    tokens = torch.full((B * K, 1), bos_id, dtype=torch.long, device=device)
    alive = torch.full((B, K), float("-inf"), device=device)
    alive[:, 0] = 0.0
    ended_tokens = torch.full((B, K, 0), pad_id, dtype=torch.long, device=device)
    ended = torch.full((B, K), float("-inf"), device=device)
    done = torch.zeros(B, dtype=torch.bool, device=device)
    return tokens, alive, ended_tokens, ended, done


def grow(
    tokens: torch.Tensor, alive: torch.Tensor, log_probs: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The 2K best one-token extensions of each sentence's K live hypotheses, by
    log-probability, best first.

    Shapes: tokens (B*K, t), alive (B, K), log_probs (B*K, V) -> seqs (B, 2K, t + 1),
    scores (B, 2K), parents (B, 2K) (the rows of ``tokens`` they extend).
    """
    (B, K), V = alive.shape, log_probs.size(-1)
    candidates = (alive[:, :, None] + log_probs.view(B, K, V)).view(B, K * V)
    scores, index = candidates.topk(min(2 * K, K * V), dim=-1)  # (B, 2K)
    parents = torch.arange(B, device=alive.device)[:, None] * K + index // V
    seqs = torch.cat([tokens[parents], (index % V)[:, :, None]], dim=-1)  # (B, 2K, t + 1)
    return seqs, scores, parents


def keep_finished(
    ended_tokens: torch.Tensor,
    ended: torch.Tensor,
    seqs: torch.Tensor,
    scores: torch.Tensor,
    is_eos: torch.Tensor,
    lp: float,
    pad_id: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The K best finished hypotheses: those kept so far and the candidates that end with
    ``<eos>`` now (ranked by score / lp); among equal scores the earlier one comes first.

    Shapes: ended_tokens (B, K, t - 1), ended (B, K), seqs (B, 2K, t + 1) (with ``<bos>``),
    scores, is_eos (B, 2K) -> ended_tokens (B, K, t), ended (B, K).
    """
    K = ended.size(1)
    now = (scores / lp).masked_fill(~is_eos, float("-inf"))  # (B, 2K); -inf: not finished
    kept = torch.nn.functional.pad(ended_tokens, (0, 1), value=pad_id)  # (B, K, t)
    all_tokens = torch.cat([kept, seqs[:, :, 1:]], dim=1)  # (B, 3K, t)
    all_scores = torch.cat([ended, now], dim=1)  # (B, 3K)
    best = all_scores.sort(dim=1, descending=True, stable=True).indices[:, :K]  # (B, K)
    index = best[:, :, None].expand(-1, -1, all_tokens.size(2))
    return all_tokens.gather(1, index), all_scores.gather(1, best)


def keep_alive(
    seqs: torch.Tensor, scores: torch.Tensor, parents: torch.Tensor, is_eos: torch.Tensor, K: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The K best candidates that did not end live on (there are K: see beam_search).

    Shapes: seqs (B, 2K, t), scores, parents, is_eos (B, 2K) -> tokens (B*K, t),
    alive (B, K), rows (B*K,) (each new beam's parent row, for the cache).
    """
    width = scores.size(1)
    rank = torch.arange(width, device=scores.device) + is_eos * width  # ended ones last
    keep = rank.argsort(dim=1)[:, :K]  # (B, K), best first
    tokens = seqs.gather(1, keep[:, :, None].expand(-1, -1, seqs.size(2)))  # (B, K, t)
    return tokens.flatten(0, 1), scores.gather(1, keep), parents.gather(1, keep).flatten()


def bound_met(ended: torch.Tensor, alive: torch.Tensor, best_lp: float) -> torch.Tensor:
    """tensor2tensor's stop test, per sentence: some hypothesis has finished, and every kept
    finished one scores more than the best live one could ever reach (its log-probability
    / lp(max_len)). An empty source has no live hypothesis (-inf): done once it ended.

    Shapes: ended (B, K), alive (B, K) -> (B,) bool.
    """
    reachable = alive.max(dim=1).values / best_lp  # (B,)
    finished = ended > float("-inf")  # (B, K)
    worst_kept = ended.masked_fill(~finished, float("inf")).min(dim=1).values  # (B,)
    return finished.any(dim=1) & (worst_kept > reachable)


def best(
    ended_tokens: torch.Tensor,
    ended: torch.Tensor,
    tokens: torch.Tensor,
    live: torch.Tensor,
    done: torch.Tensor,
    pad_id: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Each sentence's best hypothesis: the best finished one, or, for a sentence that hit
    max_len before its bound was met, a live one (``live``: normalised scores) if better.
    The first of equals wins. Trailing padding columns are cut (at least one column stays).

    Shapes: ended_tokens (B, K, L), ended (B, K), tokens (B*K, L + 1), live (B, K),
    done (B,) -> tokens (B, L') (L' <= L), scores (B,).
    """
    B, K = live.shape
    all_scores = torch.cat([ended, live.masked_fill(done[:, None], float("-inf"))], dim=1)
    all_tokens = torch.cat(
        [ended_tokens, tokens[:, 1:].view(B, K, tokens.size(1) - 1)], dim=1
    )  # (B, 2K, L)
    best = all_scores.argmax(dim=1, keepdim=True)  # (B, 1): the first maximum
    out = all_tokens.gather(1, best[:, :, None].expand(-1, -1, all_tokens.size(2)))[:, 0]
    length = int((out != pad_id).sum(dim=1).max()) if B else 1  # the search's last sync
    return out[:, : max(1, length)], all_scores.gather(1, best)[:, 0]
