"""Evaluation: corpus BLEU (sacrebleu), exact match, and the alignment error rate of
the trained cross-attention against gold word alignments.

Alignments are sets of Pharaoh pairs (i_src, j_tgt): source token i links to target token j.

Shapes:
    H heads, T target length (rows), S source length (columns).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sacrebleu
import torch
from torch import nn

from transformer_lib._checks import check_model, check_tensor, check_vocabularies, fail
from transformer_lib.data import collate, encode_pairs, tokenize
from transformer_lib.translate import cross_attention, translate
from transformer_lib.vocab import BOS, EOS, PAD, Vocab

__all__ = [
    "corpus_bleu",
    "exact_match",
    "alignment_error_rate",
    "attention_alignment",
    "reference_attention",
    "evaluate_translations",
]

Alignment = set[tuple[int, int]]
# One sentence's (i_src, j_tgt) pairs, or one collection of them per sentence.
Links = Iterable[tuple[int, int]] | Iterable[Iterable[tuple[int, int]]]


def _check_pair_lists(hypotheses, references) -> None:
    for name, texts in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(texts, str) or not isinstance(texts, Sequence):
            fail(
                name, "a list of strings (one per sentence)", type(texts).__name__, error=TypeError
            )
    if len(hypotheses) != len(references):
        fail("references", f"one per hypothesis ({len(hypotheses)})", str(len(references)))


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus-level BLEU in [0, 100] with sacrebleu's defaults (13a tokenizer, one reference).

    BLEU is a corpus statistic: n-gram matches are pooled over all sentences before the
    precision and brevity penalty are computed, so it is not an average of sentence scores.
    An empty corpus scores 0.0, as in :func:`exact_match`.
    """
    _check_pair_lists(hypotheses, references)
    if not hypotheses:
        return 0.0  # sacrebleu raises IndexError on an empty corpus
    return sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score


def exact_match(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Fraction in [0, 1] of hypotheses equal to their reference (after stripping spaces)."""
    _check_pair_lists(hypotheses, references)
    if not hypotheses:
        return 0.0
    return sum(h.strip() == r.strip() for h, r in zip(hypotheses, references)) / len(hypotheses)


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
            f"one alignment per predicted sentence ({len(corpus_a)})",
            f"{len(corpus_s)} sure and {len(corpus_p)} possible",
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
            f"{S} source and {T} target labels (weights are {T}x{S})",
            f"{len(src_tokens)} and {len(tgt_tokens)}",
        )
    cols = [s for s in range(S) if src_tokens[s] not in skip]
    rows = [t for t in range(T) if tgt_tokens[t] not in skip]
    if not cols or not rows:
        return set()
    best = weights[rows][:, cols].argmax(dim=1).tolist()  # (T', S') -> (T',)
    return {(i_src, j_tgt) for j_tgt, i_src in enumerate(best)}


def reference_attention(
    model: nn.Module,
    examples: Sequence,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    batch_size: int = 128,
) -> list[torch.Tensor]:
    """Cross-attention of every layer while the model reads each *reference* translation
    (teacher forcing), so rows line up with the gold alignment's target indices.

    Shapes: one (n_layers, H, T + 1, S) tensor per example; rows are the reference's T
    tokens then ``<eos>`` (row t is the step that predicts target token t).
    """
    check_model("model", model, "pad_id")
    check_vocabularies(model, src_vocab, tgt_vocab)
    pairs = encode_pairs(examples, src_vocab, tgt_vocab)
    device = next(model.parameters()).device
    result = []
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        batch = collate(chunk, pad_id=model.pad_id).to(device)
        cross = cross_attention(model, batch.src, batch.tgt_in)  # (B, n_layers, H, T, S)
        for b, (src, tgt) in enumerate(chunk):
            result.append(cross[b, :, :, : len(tgt) + 1, : len(src)])
    return result


def evaluate_translations(
    model: nn.Module,
    examples: Sequence,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    method: str = "greedy",
    beam_size: int = 4,
    alpha: float = 0.6,
    layer: int = -1,
    batch_size: int = 128,
) -> dict:
    """Translate ``examples`` (data.Example) and score them: BLEU, exact match and, when
    every example carries a gold alignment, the AER of layer ``layer``'s cross-attention
    on the reference translations (heads averaged, argmax per target token).

    Returns {"bleu", "exact_match", "aer" (None without gold alignments), "hypotheses"}.
    """
    if not examples:
        fail("examples", "a non-empty list of data.Example", "an empty list")
    check_vocabularies(model, src_vocab, tgt_vocab)
    hypotheses = translate(
        model,
        [ex[0] for ex in examples],
        src_vocab,
        tgt_vocab,
        method=method,
        beam_size=beam_size,
        alpha=alpha,
        batch_size=batch_size,
    )
    references = [ex[1] for ex in examples]
    aer = None
    if all(len(ex) > 2 and ex[2] is not None for ex in examples):
        attention = reference_attention(model, examples, src_vocab, tgt_vocab, batch_size)
        predicted = [
            attention_alignment(weights[layer], tokenize(ex[0]), [*tokenize(ex[1]), "<eos>"])
            for weights, ex in zip(attention, examples)
        ]
        aer = alignment_error_rate(predicted, [set(ex[2]) for ex in examples])
    return {
        "bleu": corpus_bleu(hypotheses, references),
        "exact_match": exact_match(hypotheses, references),
        "aer": aer,
        "hypotheses": hypotheses,
    }
