"""Tokens -> ids -> padded batches (teacher forcing), and length augmentation.

Shapes:
    B batch, S source length, T target length (both padded to the longest in the batch).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from transformer_lib._checks import check_int, fail
from transformer_lib.data.corpus import Example, tokenize
from transformer_lib.data.vocab import BOS_ID, EOS_ID, PAD_ID, Vocab
from transformer_lib.model import masks

__all__ = [
    "build_vocabs",
    "encode_pairs",
    "concatenate_pairs",
    "Batch",
    "collate",
    "make_batches",
    "language_model_batches",
]


def build_vocabs(examples: Sequence[Example], min_freq: int = 1) -> tuple[Vocab, Vocab]:
    """Source and target vocabularies built from tokenized examples (usually the train split)."""
    src = Vocab.build((tokenize(ex[0]) for ex in examples), min_freq=min_freq)
    tgt = Vocab.build((tokenize(ex[1]) for ex in examples), min_freq=min_freq)
    return src, tgt


def encode_pairs(
    examples: Iterable[Example | tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab
) -> list[tuple[list[int], list[int]]]:
    """Tokenize and encode each pair, with no special tokens (collate adds <bos>/<eos>)."""
    return [
        (src_vocab.encode(tokenize(ex[0])), tgt_vocab.encode(tokenize(ex[1]))) for ex in examples
    ]


def concatenate_pairs(
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]], count: int, seed: int = 0
) -> list[tuple[list[int], list[int]]]:
    """``count`` new pairs, each two random pairs joined end to end on both sides.

    A model only learns to use the positions it is trained on: with training sentences of
    at most 15 tokens it fails on longer ones. Mixing in joined pairs shows it longer
    sequences without new data (length augmentation; not in the paper).

    Shapes: pairs of id lists (S_i, T_i) -> ``count`` pairs (S_a + S_b, T_a + T_b).
    """
    check_int("count", count, minimum=0)
    if len(pairs) < 2:
        fail("pairs", "at least 2 (src_ids, tgt_ids) pairs", str(len(pairs)))
    rng = random.Random(seed)
    joined = []
    for _ in range(count):
        first, second = rng.sample(range(len(pairs)), 2)
        (src_a, tgt_a), (src_b, tgt_b) = pairs[first], pairs[second]
        joined.append(([*src_a, *src_b], [*tgt_a, *tgt_b]))
    return joined


@dataclass
class Batch:
    """A padded batch; see :func:`collate`.

    Shapes:
        src (B, S), tgt_in (B, T) = <bos> y, tgt_out (B, T) = y <eos>,
        src_mask (B, 1, 1, S), tgt_mask (B, 1, T, T) (True = may attend),
        index (B,): position of each pair in the list the batch was made from.
    """

    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    src_mask: torch.Tensor
    tgt_mask: torch.Tensor
    n_tokens: int  # real (non-pad) tokens in tgt_out: the loss is averaged over these
    index: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        moved = {
            k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in vars(self).items()
        }
        return Batch(**moved)

    def __len__(self) -> int:
        return self.src.size(0)


def _check_pairs(pairs) -> None:
    hint = "Build them with encode_pairs()."
    if not isinstance(pairs, Sequence) or len(pairs) == 0:
        got = f"{type(pairs).__name__} {pairs!r}"[:80]
        fail("pairs", "a non-empty list of (src_ids, tgt_ids) pairs", got, hint)
    for k, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and len(pair[0]) > 0):
            expected = "(src_ids, tgt_ids) with a non-empty src_ids"
            fail(f"pairs[{k}]", expected, repr(pair)[:80], hint)


def collate(
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
    index: Sequence[int] | None = None,
) -> Batch:
    """Pad id sequences into one :class:`Batch` (teacher forcing: tgt_in is tgt_out shifted).

    Shapes: B pairs -> src (B, S), tgt_in/tgt_out (B, T) with T = longest target + 1.
    """
    _check_pairs(pairs)
    B = len(pairs)
    S = max(len(src) for src, _ in pairs)
    T = max(len(tgt) for _, tgt in pairs) + 1  # + <bos> / + <eos>
    src = torch.tensor([[*x] + [pad_id] * (S - len(x)) for x, _ in pairs], dtype=torch.long)
    tgt_in = torch.tensor(
        [[bos_id, *y] + [pad_id] * (T - 1 - len(y)) for _, y in pairs], dtype=torch.long
    )
    tgt_out = torch.tensor(
        [[*y, eos_id] + [pad_id] * (T - 1 - len(y)) for _, y in pairs], dtype=torch.long
    )
    return Batch(
        src=src,
        tgt_in=tgt_in,
        tgt_out=tgt_out,
        src_mask=masks.padding_mask(src, pad_id),  # (B, 1, 1, S)
        tgt_mask=masks.target_mask(tgt_in, pad_id),  # (B, 1, T, T)
        n_tokens=int((tgt_out != pad_id).sum()),
        index=torch.tensor(list(range(B)) if index is None else list(index), dtype=torch.long),
    )


def make_batches(
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
    batch_size: int | None = None,
    max_tokens: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
    bucket_size: int = 4096,
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
) -> list[Batch]:
    """Group pairs of similar length into padded batches; every pair lands in exactly one.

    Give either `batch_size` (pairs per batch) or `max_tokens` (a batch's padded size
    ``B * max(S, T)`` stays within it; a longer pair gets a batch of its own). Pairs are
    sorted by length within chunks of `bucket_size`, so little padding is wasted.
    With ``shuffle=True`` the pairs and then the batch order are shuffled by
    ``random.Random(seed)``: the same seed gives the same batches, so pass the epoch
    number as the seed. ``Batch.index`` says where each pair came from in `pairs`.
    """
    _check_pairs(pairs)
    if (batch_size is None) == (max_tokens is None):
        got = f"batch_size={batch_size!r}, max_tokens={max_tokens!r}"
        fail("batch_size/max_tokens", "exactly one of them", got)
    size_name, size = (
        ("max_tokens", max_tokens) if batch_size is None else ("batch_size", batch_size)
    )
    check_int(size_name, size, minimum=1)
    check_int("bucket_size", bucket_size, minimum=1)
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    if shuffle:
        rng.shuffle(order)
    groups: list[list[int]] = []
    for start in range(0, len(order), bucket_size):
        chunk = order[start : start + bucket_size]
        chunk.sort(key=lambda k: (len(pairs[k][0]), len(pairs[k][1])))  # stable: ties keep order
        groups.extend(_split(chunk, pairs, batch_size, max_tokens))
    if shuffle:
        rng.shuffle(groups)
    return [collate([pairs[k] for k in g], pad_id, bos_id, eos_id, index=g) for g in groups]


def _split(
    chunk: list[int], pairs, batch_size: int | None, max_tokens: int | None
) -> list[list[int]]:
    if batch_size is not None:
        return [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    groups: list[list[int]] = [[]]
    longest = 0
    for k in chunk:
        size = max(len(pairs[k][0]), len(pairs[k][1]) + 1)  # padded length of this pair
        if groups[-1] and (len(groups[-1]) + 1) * max(longest, size) > max_tokens:
            groups.append([])
            longest = 0
        groups[-1].append(k)
        longest = max(longest, size)
    return groups


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
    if not isinstance(sequences, Sequence) or not sequences:
        fail("sequences", "a non-empty list of id sequences", repr(sequences)[:80])
    # make_batches' grouping and shuffling, each sequence as its own source
    pairs = [(list(y), list(y)) for y in sequences]
    batches = make_batches(pairs, max_tokens=max_tokens, shuffle=shuffle, seed=seed)
    return [(batch.tgt_in, batch.tgt_out) for batch in batches]
