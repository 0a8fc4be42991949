"""Evaluation: corpus BLEU (sacrebleu) with bootstrap confidence intervals, exact match,
and the alignment error rate of the trained cross-attention against gold word alignments.

Alignments are sets of Pharaoh pairs (i_src, j_tgt): source token i links to target token j.

Shapes:
    H heads, T target length (rows), S source length (columns).

Modules: ``bleu`` (BLEU, exact match, bootstrap intervals and the paired test),
``alignment`` (AER and hard alignments from attention, pure set arithmetic) and
``translations`` (what needs a model: reference attention, translating and scoring a split).
"""

from transformer_lib.evaluate.alignment import alignment_error_rate, attention_alignment
from transformer_lib.evaluate.bleu import (
    BleuDifference,
    BleuInterval,
    bleu_confidence_interval,
    corpus_bleu,
    exact_match,
    paired_bootstrap,
)
from transformer_lib.evaluate.translations import evaluate_translations, reference_attention

__all__ = [
    "corpus_bleu",
    "exact_match",
    "BleuInterval",
    "BleuDifference",
    "bleu_confidence_interval",
    "paired_bootstrap",
    "alignment_error_rate",
    "attention_alignment",
    "reference_attention",
    "evaluate_translations",
]
