"""Notebook 07, the toy translator: label-smoothed cross-entropy (§5.4). The schedule is in
``ch07_schedule``, greedy decoding in ``ch07_decoding``, the length penalty in
``ch07_length_penalty``, the alignment error rate in ``ch07_evaluation``."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from transformer_lib.i18n import N_, _
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import (
    ExerciseFailed,
    Mistake,
    _generator,
    _passed,
    exercise,
)
from transformer_lib.train.loss import label_smoothed_cross_entropy

__all__ = ["check_label_smoothing"]


def _scalar_loss(got) -> torch.Tensor:
    """The loss must stay a 0-dim float32 tensor (so that it can be back-propagated)."""
    __tracebackhide__ = True
    if not isinstance(got, torch.Tensor):
        raise ExerciseFailed(
            _(
                "the loss must be a 0-dim torch.Tensor (keep it a tensor so that .backward() "
                "works: no .item()); got {kind}."
            ).format(kind=type(got).__name__)
        )
    if got.dim() != 0:
        raise ExerciseFailed(
            _(
                "the loss must be one number, shape (); got shape {shape}: average "
                "the per-token losses over the positions whose target is not pad_id."
            ).format(shape=tuple(got.shape))
        )
    return _tensor(got, _("the loss"), (), "shape")


def _library_loss(
    logits: torch.Tensor, target: torch.Tensor, epsilon: float, pad_id: int
) -> torch.Tensor:
    """The library's loss: ε spread over all V classes (<pad> included), pads ignored."""
    return label_smoothed_cross_entropy(logits, target, epsilon, pad_id)


def _smoothed(
    logits: torch.Tensor,
    target: torch.Tensor,
    epsilon: float,
    pad_id: int,
    *,
    off: int = 0,
    gold: float | None = None,
    gold_adds: bool = True,
    pad_column: bool = True,
    ignore: int | None = -1,
    divide_by_all: bool = False,
    reduce: str = "mean",
    kl: bool = False,
    log_softmax_dim: int | None = -1,
) -> torch.Tensor:
    """Cross-entropy against a target distribution built the way tutorial code builds it.

    ``off`` classes are left out of the ε share (its denominator is V - off); the gold
    token gets ``gold`` (default 1 - ε), plus its share when ``gold_adds``; ``ignore`` is the pad id the
    positions are filtered with (-1: ``pad_id``, None: none).
    """
    N, V = logits.shape
    log_probs = logits if log_softmax_dim is None else logits.log_softmax(log_softmax_dim)
    q = torch.full((N, V), epsilon / (V - off))  # (N, V)
    if not pad_column:
        q[:, pad_id] = 0.0  # the Annotated Transformer's true_dist[:, pad] = 0
    mass = torch.full((N, 1), 1.0 - epsilon if gold is None else gold)
    q = (
        q.scatter_add(1, target[:, None], mass)
        if gold_adds
        else q.scatter(1, target[:, None], mass)
    )
    per_token = -(q * log_probs).sum(dim=-1)  # (N, V) -> (N,)
    if kl:
        per_token = per_token + (q * q.clamp_min(1e-30).log()).sum(dim=-1)
    keep = torch.ones_like(target, dtype=torch.bool)
    if ignore is not None:
        keep = target != (pad_id if ignore == -1 else ignore)
    per_token = per_token.masked_fill(~keep, 0.0)
    if reduce == "sum":
        return per_token.sum()
    return per_token.sum() / (N if divide_by_all else keep.sum())


def _summed_uniform(logits, target, epsilon, pad_id):
    """(1 - ε)·nll + ε·Σ_v(-log p_v): the ε term summed over the classes, not averaged."""
    log_probs = logits.log_softmax(dim=-1)  # (N, V)
    nll = -log_probs.gather(1, target[:, None]).squeeze(1)  # (N,)
    per_token = (1 - epsilon) * nll - epsilon * log_probs.sum(dim=-1)
    keep = target != pad_id
    return per_token[keep].mean()


LABEL_SMOOTHING_MISTAKES = (
    Mistake(
        N_(
            "the ε share goes to all V classes, the gold one included (ε/V each, gold 1 - ε + "
            "ε/V), as in F.cross_entropy(label_smoothing=ε); you spread ε over the V - 1 wrong "
            "classes only. Use loss = (1 - ε)·(-log p_y) + ε·mean over all V of (-log p_v)."
        ),
        partial(_smoothed, off=1, gold_adds=False),
    ),
    Mistake(
        N_(
            "that is the Annotated Transformer's target (ε/(V-2) on each class but the gold and "
            "<pad>); this course follows F.cross_entropy(label_smoothing=ε): ε/V on every one of "
            "the V classes, <pad> included. Average -log p_v over all V columns."
        ),
        partial(_smoothed, off=2, gold_adds=False, pad_column=False),
    ),
    Mistake(
        N_(
            "the gold token gets its share twice: filling ε/(V-1) everywhere and then adding 1 - ε "
            "makes the target sum to more than 1. Fill ε/V and add 1 - ε on the gold token."
        ),
        partial(_smoothed, off=1),
    ),
    Mistake(
        N_(
            "the target must sum to 1: multiply -log p_y by (1 - ε), so the gold token gets "
            "1 - ε + ε/V, not 1 + ε/V."
        ),
        partial(_smoothed, gold=1.0),
    ),
    Mistake(
        N_(
            "padded positions count in your mean: ignore every position whose target is pad_id "
            "(keep = target != pad_id; F.cross_entropy needs ignore_index=pad_id)."
        ),
        partial(_smoothed, ignore=None),
    ),
    Mistake(
        N_(
            "you zeroed the padded positions but divided by all N positions: divide by the number "
            "of non-pad targets, (target != pad_id).sum()."
        ),
        partial(_smoothed, divide_by_all=True),
    ),
    Mistake(
        N_("return the mean over the non-pad positions, not their sum."),
        partial(_smoothed, reduce="sum"),
    ),
    Mistake(
        N_("use the pad_id argument, not a hard-coded 0, to find the padded positions."),
        partial(_smoothed, ignore=0),
    ),
    Mistake(
        N_("each class gets ε/V: average -log p_v over the V classes (.mean(dim=-1)), not sum it."),
        _summed_uniform,
    ),
    Mistake(
        N_(
            "that is plain cross-entropy: epsilon is ignored. Mix in the smoothing term, "
            "(1 - ε)·(-log p_y) + ε·mean_v(-log p_v)."
        ),
        lambda logits, target, epsilon, pad_id: F.cross_entropy(
            logits, target, ignore_index=pad_id
        ),
    ),
    Mistake(
        N_(
            "that is the KL divergence KL(q'‖p) (nn.KLDivLoss, as in the Annotated Transformer): "
            "it is the cross-entropy minus the entropy of q', a constant. Same gradients, "
            "different value; return the cross-entropy -Σ q'(k) log p_k."
        ),
        partial(_smoothed, kl=True),
    ),
    Mistake(
        N_("log_softmax over the vocabulary, dim=-1: over dim=0 you normalise across positions."),
        partial(_smoothed, log_softmax_dim=0),
    ),
    Mistake(
        N_(
            "the model returns logits, not log-probabilities: take torch.log_softmax(logits, "
            "dim=-1) first (nn.NLLLoss and nn.KLDivLoss expect log-probabilities)."
        ),
        partial(_smoothed, log_softmax_dim=None),
    ),
)


def _loss_inputs(seed: int, pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits (N, V) = (10, 7) and targets (N,) with three padded positions; a small V makes
    V, V - 1 and V - 2 far apart."""
    g = _generator(seed)
    logits = torch.randn(10, 7, generator=g) * 2
    target = torch.randint(0, 7, (10,), generator=g)
    target[target == pad_id] = (pad_id + 1) % 7  # pads only where placed below
    target[[2, 7, 9]] = pad_id
    return logits, target


@exercise(_library_loss, LABEL_SMOOTHING_MISTAKES)
def check_label_smoothing(fn: Callable) -> None:
    """fn(logits (N, V), target (N,), epsilon, pad_id) -> scalar: the smoothed loss (§5.4)."""
    __tracebackhide__ = True
    for seed, epsilon, pad_id in ((70, 0.2, 0), (71, 0.3, 5)):
        logits, target = _loss_inputs(seed, pad_id)
        if pad_id != 0:
            target[0] = 0  # a real token with id 0: a hard-coded pad 0 would drop it
        what = _("the loss (epsilon={epsilon}, pad_id={pad_id})").format(
            epsilon=epsilon, pad_id=pad_id
        )
        _expect(
            what,
            fn,
            (logits, target, epsilon, pad_id),
            _library_loss,
            LABEL_SMOOTHING_MISTAKES,
            validate=_scalar_loss,
            fallback=_(
                "Per token (1 - ε)·(-log p_y) + ε·mean_v(-log p_v), averaged over the "
                "positions whose target is not pad_id."
            ),
        )
    _passed(
        _(
            "label smoothing: (1 - ε)·(-log p_y) + ε·mean over all V of (-log p_v), pads "
            "ignored; equals F.cross_entropy(label_smoothing=ε, ignore_index=pad_id)."
        )
    )
