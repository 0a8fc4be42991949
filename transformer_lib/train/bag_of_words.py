"""The bag-of-words baseline for sentence classification (notebook 10): logistic regression on
word counts. It sees which words a sentence holds and how often, never in which order: the
yardstick that shows whether a task needs context.

Shapes:
    N sentences, V vocabulary, C classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from transformer_lib._checks import check_int, check_labels, check_real, fail

__all__ = ["word_counts", "BagOfWords", "fit_bag_of_words", "bag_of_words_accuracy"]


def word_counts(sequences: Sequence[Sequence[int]], vocab_size: int) -> torch.Tensor:
    """How often each id occurs in each sequence.

    Shapes: N id sequences -> (N, V) float.
    """
    check_int("vocab_size", vocab_size, minimum=1)
    if not isinstance(sequences, Sequence) or not sequences:
        fail("sequences", "a non-empty list of id sequences", repr(sequences)[:80])
    counts = torch.zeros(len(sequences), vocab_size)
    for k, sequence in enumerate(sequences):
        ids = torch.as_tensor(list(sequence), dtype=torch.long)  # (L,)
        if ids.numel() and not (0 <= int(ids.min()) and int(ids.max()) < vocab_size):
            expected = "ids in [0, {vocab_size}) (vocab_size)"
            fail(f"sequences[{k}]", expected, repr(sequence)[:80], vocab_size=vocab_size)
        counts[k] = torch.bincount(ids, minlength=vocab_size).float()  # (V,)
    return counts


class BagOfWords(nn.Module):
    """Logistic regression on word counts: logits = counts W^T + b.

    Shapes: counts (N, V) -> logits (N, C).
    """

    def __init__(self, vocab_size: int, n_classes: int) -> None:
        super().__init__()
        check_int("vocab_size", vocab_size, minimum=1)
        check_int("n_classes", n_classes, minimum=2)
        self.linear = nn.Linear(vocab_size, n_classes)
        nn.init.zeros_(self.linear.weight)  # a convex problem: the start needs no seed
        nn.init.zeros_(self.linear.bias)

    def forward(self, counts: torch.Tensor) -> torch.Tensor:
        """Shapes: counts (N, V) -> logits (N, C)."""
        return self.linear(counts)


def fit_bag_of_words(
    sequences: Sequence[Sequence[int]],
    labels: Sequence[int],
    vocab_size: int,
    n_classes: int = 2,
    steps: int = 300,
    lr: float = 0.05,
    weight_decay: float = 1e-3,
) -> BagOfWords:
    """A :class:`BagOfWords` fitted to ``labels``: full-batch Adam on the mean cross-entropy
    plus ``weight_decay`` times the squared weights (which keeps the weights of words that
    happen to fit a few sentences small), from zero weights."""
    counts = word_counts(sequences, vocab_size)  # (N, V)
    targets = _labels(labels, len(sequences), n_classes)  # (N,)
    check_int("steps", steps, minimum=1)
    check_real("lr", lr, minimum=0.0)
    check_real("weight_decay", weight_decay, minimum=0.0)
    model = BagOfWords(vocab_size, n_classes)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(counts), targets)
        (loss + weight_decay * model.linear.weight.pow(2).sum()).backward()
        optimizer.step()
    return model


def bag_of_words_accuracy(
    model: BagOfWords, sequences: Sequence[Sequence[int]], labels: Sequence[int]
) -> float:
    """The share of ``sequences`` whose largest logit is their label."""
    if not isinstance(model, BagOfWords):
        fail("model", "a BagOfWords", type(model).__name__, error=TypeError)
    counts = word_counts(sequences, model.linear.in_features)  # (N, V)
    targets = _labels(labels, len(sequences), model.linear.out_features)  # (N,)
    with torch.no_grad():
        predicted = model(counts).argmax(dim=-1)  # (N, C) -> (N,)
    return float((predicted == targets).float().mean())


def _labels(labels: Sequence[int], n: int, n_classes: int) -> torch.Tensor:
    """``labels`` as class ids (N,), one per sequence."""
    if not isinstance(labels, Sequence) or len(labels) != n:
        got = f"{len(labels)} labels" if isinstance(labels, Sequence) else type(labels).__name__
        fail("labels", "one label per sequence ({n})", got, n=n)
    targets = torch.tensor(list(labels), dtype=torch.long)  # (N,)
    check_labels("labels", targets, n_classes)
    return targets
