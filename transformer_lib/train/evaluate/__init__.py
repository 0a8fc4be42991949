"""Evaluation: corpus BLEU (sacrebleu) with bootstrap confidence intervals, exact match,
and the alignment error rate of the trained cross-attention against gold word alignments.

Alignments are sets of Pharaoh pairs (i_src, j_tgt): source token i links to target token j.

Shapes:
    H heads, T target length (rows), S source length (columns).

Modules: ``bleu`` (BLEU, exact match, bootstrap intervals and the paired test),
``alignment`` (AER and hard alignments from attention, pure set arithmetic) and
``translations`` (what needs a model: reference attention, translating and scoring a split).
"""

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


def __getattr__(name: str):
    """The names above, each imported from its module on first use (PEP 562): the alignment
    error rate alone (notebook 07's check) loads neither sacrebleu nor the translator."""
    if name in ("alignment_error_rate", "attention_alignment"):
        from transformer_lib.train.evaluate import alignment as module
    elif name in ("reference_attention", "evaluate_translations"):
        from transformer_lib.train.evaluate import translations as module
    elif name in __all__:
        from transformer_lib.train.evaluate import bleu as module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(module, name)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
