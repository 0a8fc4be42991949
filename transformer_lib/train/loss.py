"""The label-smoothed cross-entropy loss of §5.4, written out as notebook 07 teaches it.

:func:`train` computes the same loss with PyTorch's fused ``F.cross_entropy(label_smoothing=ε,
ignore_index=pad)``; tests/test_train.py holds the two equal, values and gradients.

Shapes:
    B batch, T target length, V target vocabulary (N = B·T when flattened).
"""

from __future__ import annotations

import torch

from transformer_lib._checks import check_id_range, check_probability, check_tensor, fail

__all__ = ["label_smoothed_cross_entropy"]


def label_smoothed_cross_entropy(
    logits: torch.Tensor,
    target: torch.Tensor,
    epsilon: float = 0.1,
    pad_id: int | None = 0,
    reduction: str = "mean",
) -> torch.Tensor:
    """Cross-entropy against a smoothed target: 1 - ε on the right token, ε spread over all V.

    §5.4: "we employed label smoothing of value ε_ls = 0.1. This hurts perplexity, as the
    model learns to be more unsure, but improves accuracy and BLEU score." As in
    ``F.cross_entropy(label_smoothing=ε)``, the ε mass is spread uniformly over all V
    classes (the right one included), so per token

        loss = (1 - ε) · (-log p[y]) + ε · mean_v(-log p[v]).

    Positions whose target is ``pad_id`` are ignored; "mean" averages over the others.
    The model hands over logits: log-softmax happens here, once, in a stable way.

    Shapes: logits (B, T, V) or (N, V), target (B, T) or (N,) -> scalar (or per token
    with ``reduction="none"``, pads set to 0).
    """
    check_tensor("logits", logits, floating=True, shape_hint="(B, T, V) or (N, V)")
    check_tensor("target", target, integer=True, shape_hint="(B, T) or (N,)")
    if logits.dim() < 2 or logits.shape[:-1] != target.shape:
        fail(
            "target",
            "the shape of logits without its last (V) dimension, {shape}",
            f"shape {tuple(target.shape)}",
            "Compare logits (B, T, V) with tgt_out (B, T), not with tgt_in.",
            shape=tuple(logits.shape[:-1]),
        )
    check_probability("epsilon", epsilon)
    if reduction not in ("mean", "sum", "none"):
        fail("reduction", "'mean', 'sum' or 'none'", repr(reduction))
    keep = torch.ones_like(target, dtype=torch.bool) if pad_id is None else target != pad_id
    safe_target = target.masked_fill(~keep, 0)  # pads read as id 0: ignored below
    check_id_range("target", safe_target, logits.size(-1))
    log_probs = torch.log_softmax(logits.float(), dim=-1)  # (..., V)
    nll = -log_probs.gather(-1, safe_target[..., None]).squeeze(-1)  # (..., V) -> (...)
    uniform = -log_probs.mean(dim=-1)  # cross-entropy with the uniform distribution (...)
    per_token = torch.where(keep, (1.0 - epsilon) * nll + epsilon * uniform, 0.0)
    if reduction == "none":
        return per_token
    total = per_token.sum()
    return total if reduction == "sum" else total / keep.sum()
