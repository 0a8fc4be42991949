"""Masked-token batches: BERT's pretraining task (Devlin et al. 2019, §3.1 and Appendix A).

The model sees a sentence with some tokens hidden and predicts the originals. BERT chooses
15 % of the positions at random (§3.1); of the chosen positions 80 % show ``<mask>``, 10 % a
random token and 10 % the token itself, because ``<mask>`` never occurs once the model is
fine-tuned: as the model cannot tell which tokens it will be asked about, it must keep a
good vector for every one. Only real tokens are chosen (never padding or a special token
such as ``<unk>`` or ``<mask>``), and the loss reads only the chosen positions: every other
target is ``<pad>``, which the loss ignores.

Shapes:
    B batch, L sequence length (padded to the longest in the batch).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from transformer_lib._checks import check_real, check_token_ids, fail
from transformer_lib.data.batching import make_batches
from transformer_lib.data.vocab import MASK, Vocab, special_ids

__all__ = ["MASK_SHARE", "RANDOM_SHARE", "maskable", "mask_tokens", "masked_token_batches"]

# Of the chosen positions (Appendix A.1): 80 % get <mask>, 10 % a random token, and the
# remaining 10 % keep their token.
MASK_SHARE, RANDOM_SHARE = 0.8, 0.1


def maskable(tokens: torch.Tensor, vocab: Vocab) -> torch.Tensor:
    """Where a position may be chosen: a real token, neither padding nor special.

    Shapes: tokens (B, L) ids -> (B, L) bool.
    """
    special = torch.tensor(special_ids(vocab), device=tokens.device)
    return ~torch.isin(tokens, special)  # (B, L)


def _check(tokens: object, vocab: object, mask_rate: object) -> None:
    if not isinstance(vocab, Vocab):
        fail("vocab", "a transformer_lib.data.Vocab", type(vocab).__name__, error=TypeError)
    if MASK not in vocab:
        fail("vocab", "a vocabulary with {mask}", f"{len(vocab)} tokens without it",
             "Build it with data.encoder_vocab().", mask=MASK)  # fmt: skip
    check_token_ids("tokens", tokens, len(vocab), "(B, L)", min_length=1)
    check_real("mask_rate", mask_rate)
    if not 0 < mask_rate < 1:
        fail("mask_rate", "a float in (0, 1), the share of positions chosen", repr(mask_rate),
             "BERT chooses 0.15.")  # fmt: skip


def _mask_with_draws(
    tokens: torch.Tensor,
    can_mask: torch.Tensor,
    choose: torch.Tensor,
    kind: torch.Tensor,
    random_ids: torch.Tensor,
    mask_id: int,
    pad_id: int,
    mask_rate: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`mask_tokens` once its random draws are made (notebook 10's exercise checks
    the student's version against it): a position is chosen where it may be masked and its
    ``choose`` draw is below ``mask_rate``; a chosen one shows ``mask_id`` where its ``kind``
    draw is below 0.8, its ``random_ids`` entry where ``kind`` is in [0.8, 0.9), itself
    above. The targets keep the original at the chosen positions, ``pad_id`` elsewhere.

    Shapes: tokens (B, L) ids, can_mask (B, L) bool, choose and kind (B, L) uniform draws
    in [0, 1), random_ids (B, L) ids -> inputs (B, L) ids, targets (B, L) ids.
    """
    chosen = can_mask & (choose < mask_rate)  # (B, L)
    inputs = torch.where(chosen & (kind < MASK_SHARE), mask_id, tokens)  # (B, L)
    swapped = chosen & (kind >= MASK_SHARE) & (kind < MASK_SHARE + RANDOM_SHARE)  # (B, L)
    inputs = torch.where(swapped, random_ids, inputs)
    targets = torch.where(chosen, tokens, pad_id)  # (B, L)
    return inputs, targets


def mask_tokens(
    tokens: torch.Tensor,
    vocab: Vocab,
    mask_rate: float = 0.15,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking of one batch: each real position is chosen with probability
    ``mask_rate``; a chosen one shows ``<mask>`` (80 %), a random real token (10 %; it may
    happen to be the original) or itself (10 %). Should a small batch draw no position, one
    real position is chosen at random, so that every batch has a loss.

    The draws come from ``generator`` (a CPU ``torch.Generator``; the default one when
    None), so the same seed masks the same positions the same way on every device.

    Shapes: tokens (B, L) ids -> inputs (B, L) ids, targets (B, L): the original id at the
    chosen positions, ``<pad>`` elsewhere.
    """
    _check(tokens, vocab, mask_rate)
    can = maskable(tokens, vocab).cpu()  # (B, L)
    if not can.any():
        expected = (
            "a batch with at least one position that can be masked "
            "(a token that is neither padding nor special)"
        )
        fail("tokens", expected, "none", "Leave out batches of padding only.")
    shape = tokens.shape
    choose = torch.rand(shape, generator=generator)  # (B, L): chosen where below mask_rate
    if not (can & (choose < mask_rate)).any():  # a draw of 0 chooses one real position
        choose.view(-1)[torch.multinomial(can.flatten().float(), 1, generator=generator)] = 0.0
    kind = torch.rand(shape, generator=generator)  # (B, L): which of the three
    words = torch.tensor([i for i in range(len(vocab)) if i not in special_ids(vocab)])
    random_ids = words[torch.randint(len(words), shape, generator=generator)]  # (B, L)
    inputs, targets = _mask_with_draws(
        tokens.cpu(), can, choose, kind, random_ids, vocab[MASK], vocab.pad_id, mask_rate
    )
    return inputs.to(tokens.device), targets.to(tokens.device)


def masked_token_batches(
    sequences: Sequence[Sequence[int]],
    vocab: Vocab,
    max_tokens: int,
    mask_rate: float = 0.15,
    shuffle: bool = False,
    seed: int = 0,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Masked-token batches of id sequences (no ``<bos>``/``<eos>``: the model reads the
    sentence as it is): padded, at most ``max_tokens`` padded tokens per batch, sequences of
    similar length together (``make_batches``), shuffled and masked by ``seed``. The same
    seed gives the same batches; ``lambda epoch: masked_token_batches(..., seed=epoch)``
    masks every epoch anew. ``train`` takes them as (inputs, targets) pairs.

    Shapes: each batch (B, L) inputs, (B, L) targets (see :func:`mask_tokens`).
    """
    if not isinstance(sequences, Sequence) or not sequences:
        fail("sequences", "a non-empty list of id sequences", repr(sequences)[:80])
    for k, sequence in enumerate(sequences):
        if not isinstance(sequence, Sequence) or len(sequence) == 0:
            fail(f"sequences[{k}]", "a non-empty list of ids", repr(sequence)[:80])
    pairs = [(list(y), list(y)) for y in sequences]  # make_batches' grouping, source = target
    batches = make_batches(pairs, max_tokens=max_tokens, shuffle=shuffle, seed=seed)
    generator = torch.Generator().manual_seed(seed)
    return [mask_tokens(batch.src, vocab, mask_rate, generator) for batch in batches]
