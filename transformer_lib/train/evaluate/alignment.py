"""The alignment error rate, and hard word alignments read from cross-attention.

Alignments are sets of Pharaoh pairs (i_src, j_tgt): source token i links to target token j.

Shapes:
    H heads, T target length (rows), S source length (columns).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

from transformer_lib._checks import check_tensor, fail
from transformer_lib.data.vocab import BOS, EOS, PAD

__all__ = ["Alignment", "alignment_error_rate", "attention_alignment"]

Alignment = set[tuple[int, int]]
# One sentence's (i_src, j_tgt) pairs, or one collection of them per sentence.
Links = Iterable[tuple[int, int]] | Iterable[Iterable[tuple[int, int]]]


def _is_pair(item) -> bool:
    return (
        isinstance(item, (tuple, list)) and len(item) == 2 and all(isinstance(x, int) for x in item)
    )


def _as_corpus(name: str, alignments) -> list[Alignment]:
    """One sentence's pairs, or a list of them per sentence -> a list of sets."""
    if isinstance(alignments, (str, bytes)) or not isinstance(alignments, Iterable):
        fail(
            name,
            "(i_src, j_tgt) pairs, or a list of them per sentence",
            type(alignments).__name__,
            "Parse Pharaoh text with data.parse_alignment().",
            error=TypeError,
        )
    items = list(alignments)
    if all(_is_pair(item) for item in items):
        return [{tuple(item) for item in items}]
    if any(_is_pair(item) for item in items):  # one sentence's pairs, one of them bad
        k = next(k for k, item in enumerate(items) if not _is_pair(item))
        fail(f"{name}[{k}]", "an (i_src, j_tgt) pair of ints", repr(items[k])[:60], error=TypeError)
    corpus = []
    for k, sentence in enumerate(items):
        pairs = list(sentence) if isinstance(sentence, Iterable) else [sentence]
        if not all(_is_pair(p) for p in pairs):
            fail(
                f"{name}[{k}]",
                "a collection of (i_src, j_tgt) int pairs",
                repr(sentence)[:60],
                error=TypeError,
            )
        corpus.append({tuple(p) for p in pairs})
    return corpus


def alignment_error_rate(predicted: Links, sure: Links, possible: Links | None = None) -> float:
    """AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|)  (Och & Ney 2003), lower is better.

    A = predicted links, S = sure gold links, P = possible links (S ⊆ P; defaults to S,
    then AER = 1 - F1). Each argument is one sentence's (i_src, j_tgt) pairs or a list of
    them per sentence; counts are pooled over the corpus. Returns a value in [0, 1].
    """
    corpus_a, corpus_s = _as_corpus("predicted", predicted), _as_corpus("sure", sure)
    corpus_p = corpus_s if possible is None else _as_corpus("possible", possible)
    if not len(corpus_a) == len(corpus_s) == len(corpus_p):
        fail(
            "sure",
            "one alignment per predicted sentence ({n})",
            f"{len(corpus_s)} sure and {len(corpus_p)} possible",
            n=len(corpus_a),
        )
    hits_sure = hits_possible = size_a = size_s = 0
    for a, s, p in zip(corpus_a, corpus_s, corpus_p):
        p = p | s  # a sure link is also possible
        hits_sure += len(a & s)
        hits_possible += len(a & p)
        size_a += len(a)
        size_s += len(s)
    if size_a + size_s == 0:
        return 0.0
    return 1.0 - (hits_sure + hits_possible) / (size_a + size_s)


def attention_alignment(
    weights: torch.Tensor,
    src_tokens: Sequence[str] | None = None,
    tgt_tokens: Sequence[str] | None = None,
    skip: Iterable[str] = (PAD, BOS, EOS),
) -> Alignment:
    """Hard alignment from cross-attention: each target token links to the source token
    it attends to most (heads averaged). Rows/columns whose token is in ``skip`` (the
    specials, e.g. the ``<eos>`` row) are left out; indices count the remaining tokens.

    Shapes: weights (T, S) or (H, T, S); src_tokens S, tgt_tokens T labels.
    """
    check_tensor("weights", weights, floating=True, shape_hint="(T, S) or (H, T, S)")
    if weights.dim() == 3:
        weights = weights.mean(dim=0)  # (H, T, S) -> (T, S)
    if weights.dim() != 2:
        fail("weights", "a (T, S) or (H, T, S) tensor", f"{weights.dim()}-D tensor")
    T, S = weights.shape
    skip = set(skip)
    src_tokens = list(src_tokens) if src_tokens is not None else [""] * S
    tgt_tokens = list(tgt_tokens) if tgt_tokens is not None else [""] * T
    if len(src_tokens) != S or len(tgt_tokens) != T:
        fail(
            "src_tokens/tgt_tokens",
            "{S} source and {T} target labels (weights are {T}x{S})",
            f"{len(src_tokens)} and {len(tgt_tokens)}",
            S=S,
            T=T,
        )
    cols = [s for s in range(S) if src_tokens[s] not in skip]
    rows = [t for t in range(T) if tgt_tokens[t] not in skip]
    if not cols or not rows:
        return set()
    best = weights[rows][:, cols].argmax(dim=1).tolist()  # (T', S') -> (T',)
    return {(i_src, j_tgt) for j_tgt, i_src in enumerate(best)}
