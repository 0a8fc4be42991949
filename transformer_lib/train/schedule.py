"""The warm-up learning-rate schedule of §5.3 and the paper's Adam settings."""

from __future__ import annotations

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR

from transformer_lib._checks import check_int, fail

__all__ = ["transformer_lr", "make_optimizer", "make_scheduler"]


def transformer_lr(step: int, d_model: int, warmup: int = 4000, factor: float = 1.0) -> float:
    """The learning rate of §5.3 at optimizer step ``step`` (counted from 1).

    lrate = factor · d_model^-0.5 · min(step^-0.5, step · warmup^-1.5): a linear rise for
    ``warmup`` steps, then decay with the inverse square root of the step. The paper uses
    factor 1 and warmup 4000.
    """
    check_int("step", step, minimum=1)
    check_int("d_model", d_model, minimum=1)
    check_int("warmup", warmup, minimum=1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


class _TransformerLR:
    """``transformer_lr`` as a multiplier for ``LambdaLR`` (index 0 is the first step).

    A class rather than a lambda, so the scheduler's ``state_dict`` records its settings
    (three numbers, which checkpoints store as JSON).
    """

    def __init__(self, d_model: int, warmup: int = 4000, factor: float = 1.0) -> None:
        transformer_lr(1, d_model, warmup, factor)  # validates the arguments
        self.d_model, self.warmup, self.factor = d_model, warmup, float(factor)

    def __call__(self, index: int) -> float:
        return transformer_lr(index + 1, self.d_model, self.warmup, self.factor)

    def __repr__(self) -> str:
        return f"_TransformerLR(d_model={self.d_model}, warmup={self.warmup}, factor={self.factor})"


def make_optimizer(
    model: nn.Module,
    lr: float = 1.0,
    betas: tuple[float, float] = (0.9, 0.98),
    eps: float = 1e-9,
    weight_decay: float = 0.0,
) -> torch.optim.Adam:
    """Adam with the paper's β1 = 0.9, β2 = 0.98, ε = 1e-9 (§5.3).

    ``lr=1.0`` because :func:`make_scheduler` multiplies it by the schedule, which then
    *is* the learning rate.
    """
    if not isinstance(model, nn.Module):
        fail("model", "an nn.Module", type(model).__name__, error=TypeError)
    return torch.optim.Adam(
        model.parameters(), lr=lr, betas=betas, eps=eps, weight_decay=weight_decay
    )


def make_scheduler(
    optimizer: torch.optim.Optimizer,
    d_model: int,
    warmup: int = 4000,
    factor: float = 1.0,
    peak_lr: float | None = None,
) -> LambdaLR:
    """``LambdaLR`` following :func:`transformer_lr`; call ``.step()`` after each update.

    The peak, reached at step ``warmup``, is factor · (d_model · warmup)^-0.5. A small model
    with a short warm-up would peak far too high with factor 1 (d_model 32, warmup 20:
    0.04), so ``peak_lr`` may be given instead; it sets ``factor`` to reach that peak.
    """
    lrs = [group["lr"] for group in optimizer.param_groups]
    if any(lr != 1.0 for lr in lrs):
        fail(
            "optimizer",
            "built with lr=1.0 (the schedule gives the whole learning rate)",
            f"lr={lrs[0]}",
            "Use make_optimizer(model), or scale with `factor`.",
        )
    if peak_lr is not None:
        if isinstance(peak_lr, bool) or not isinstance(peak_lr, (int, float)):
            fail("peak_lr", "a float in (0, 1)", type(peak_lr).__name__, error=TypeError)
        if not 0 < peak_lr < 1:
            fail("peak_lr", "a float in (0, 1)", repr(peak_lr))
        factor = peak_lr / transformer_lr(warmup, d_model, warmup)
    return LambdaLR(optimizer, _TransformerLR(d_model, warmup, factor))
