"""What needs a trained model: cross-attention on the reference translations, and
translating a split and scoring it (BLEU, exact match, AER).

Shapes:
    H heads, T target length (rows), S source length (columns).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from transformer_lib._checks import fail
from transformer_lib.data import collate, encode_pairs, tokenize
from transformer_lib.data.vocab import Vocab, check_vocabularies
from transformer_lib.inference.translate import cross_attention, translate
from transformer_lib.model.contract import check_model
from transformer_lib.train.evaluate.alignment import alignment_error_rate, attention_alignment
from transformer_lib.train.evaluate.bleu import corpus_bleu, exact_match

__all__ = ["reference_attention", "evaluate_translations"]


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
    check_model("model", model)
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
