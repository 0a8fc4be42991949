"""Training: label-smoothed loss, the warm-up schedule, Adam and the loop (paper §5.3, §5.4).

The loop takes any model with ``forward(src, tgt_in) -> logits (B, T, V)``, reports
progress through a callback and returns a history; checkpoints (``save_checkpoint``,
``load_checkpoint``, ``resume``) live in :mod:`transformer_lib.checkpoint`.

Shapes:
    B batch, S source length, T target length, V target vocabulary.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR, LRScheduler

from transformer_lib._checks import check_int, check_probability, check_tensor, fail
from transformer_lib.checkpoint import TrainState, load_checkpoint, resume, save_checkpoint

__all__ = [
    "concatenate_pairs",
    "label_smoothed_cross_entropy",
    "transformer_lr",
    "noam_schedule",
    "NoamSchedule",
    "make_optimizer",
    "make_scheduler",
    "train",
    "TrainState",
    "save_checkpoint",
    "load_checkpoint",
    "resume",
]


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
            f"the shape of logits without its last (V) dimension, {tuple(logits.shape[:-1])}",
            f"shape {tuple(target.shape)}",
            "Compare logits (B, T, V) with tgt_out (B, T), not with tgt_in.",
        )
    check_probability("epsilon", epsilon)
    if reduction not in ("mean", "sum", "none"):
        fail("reduction", "'mean', 'sum' or 'none'", repr(reduction))
    keep = torch.ones_like(target, dtype=torch.bool) if pad_id is None else target != pad_id
    V = logits.size(-1)
    if keep.any() and (target[keep].min() < 0 or target[keep].max() >= V):
        fail(
            "target",
            f"ids in [0, {V}) (the logits' last dimension)",
            f"ids in [{int(target[keep].min())}, {int(target[keep].max())}]",
        )
    log_probs = torch.log_softmax(logits.float(), dim=-1)  # (..., V)
    safe_target = target.masked_fill(~keep, 0).unsqueeze(-1)  # (..., 1)
    nll = -log_probs.gather(-1, safe_target).squeeze(-1)  # (..., V) -> (...)
    uniform = -log_probs.mean(dim=-1)  # cross-entropy with the uniform distribution (...)
    per_token = torch.where(keep, (1.0 - epsilon) * nll + epsilon * uniform, 0.0)
    if reduction == "none":
        return per_token
    total = per_token.sum()
    return total if reduction == "sum" else total / keep.sum()


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


noam_schedule = transformer_lr  # the name the Annotated Transformer made popular


class NoamSchedule:
    """``transformer_lr`` as a multiplier for ``LambdaLR`` (index 0 is the first step).

    A class rather than a lambda, so the scheduler's ``state_dict`` records its settings.
    """

    def __init__(self, d_model: int, warmup: int = 4000, factor: float = 1.0) -> None:
        transformer_lr(1, d_model, warmup, factor)  # validates the arguments
        self.d_model, self.warmup, self.factor = d_model, warmup, float(factor)

    def __call__(self, index: int) -> float:
        return transformer_lr(index + 1, self.d_model, self.warmup, self.factor)

    def __repr__(self) -> str:
        return f"NoamSchedule(d_model={self.d_model}, warmup={self.warmup}, factor={self.factor})"


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
    return LambdaLR(optimizer, NoamSchedule(d_model, warmup, factor))


def concatenate_pairs(pairs: Sequence[tuple], count: int, seed: int = 0) -> list[tuple]:
    """``count`` new pairs, each two random pairs joined end to end on both sides.

    A model only learns to use the positions it is trained on: with training sentences of
    at most 15 tokens it fails on longer ones. Mixing in joined pairs shows it longer
    sequences without new data (length augmentation; not in the paper).
    """
    check_int("count", count, minimum=0)
    if len(pairs) < 2:
        fail("pairs", "at least 2 (src_ids, tgt_ids) pairs", str(len(pairs)))
    rng = random.Random(seed)
    joined = []
    for _ in range(count):
        first, second = rng.sample(range(len(pairs)), 2)
        (src_a, tgt_a), (src_b, tgt_b) = pairs[first], pairs[second]
        joined.append((list(src_a) + list(src_b), list(tgt_a) + list(tgt_b)))
    return joined


def _unpack(batch, device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(src, tgt_in, tgt_out) on ``device`` from a data.Batch or a 3-tuple."""
    if all(hasattr(batch, name) for name in ("src", "tgt_in", "tgt_out")):
        parts = (batch.src, batch.tgt_in, batch.tgt_out)
    elif isinstance(batch, (tuple, list)) and len(batch) == 3:
        parts = tuple(batch)
    else:
        fail(
            "batches",
            "data.Batch objects or (src, tgt_in, tgt_out) tuples",
            type(batch).__name__,
            "Build them with data.make_batches().",
            error=TypeError,
        )
    return tuple(part.to(device, non_blocking=True) for part in parts)


def _model_pad_id(model: nn.Module, pad_id: int | None) -> int:
    if pad_id is not None:
        return pad_id
    config = getattr(model, "config", None)
    return getattr(config, "pad_id", 0)


def train(
    model: nn.Module,
    batches: Iterable | Callable[[int], Iterable],
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler | None = None,
    *,
    steps: int | None = None,
    epochs: int | None = None,
    label_smoothing: float = 0.1,
    pad_id: int | None = None,
    clip_norm: float | None = 1.0,
    log_every: int = 10,
    callback: Callable[[dict], bool | None] | None = None,
    max_seconds: float | None = None,
    state: TrainState | None = None,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int | None = None,
    vocabs: tuple | None = None,
) -> dict[str, list[float]]:
    """Train until ``state.step == steps`` or ``state.epoch == epochs`` (totals, so a
    resumed run stops where an uninterrupted one would), or ``max_seconds`` of training.

    ``batches``: a list of batches (the same every epoch) or a function ``epoch -> batches``
    that is deterministic in ``epoch`` (e.g. ``make_batches(..., shuffle=True, seed=epoch)``),
    so a resumed run sees the same data. Every ``log_every`` steps the token-weighted mean
    loss is appended to ``state.history`` and ``callback(record)`` is called; a callback
    returning True stops training. ``seconds`` counts training only, not callbacks or
    checkpoints. With ``checkpoint_dir``, a checkpoint is written every
    ``checkpoint_every`` steps and at the end. The model trains on the device it is on.

    Shapes: each batch has src (B, S), tgt_in (B, T), tgt_out (B, T).
    """
    if steps is None and epochs is None and max_seconds is None:
        fail("steps/epochs", "given (at least one of steps, epochs, max_seconds)", "none")
    for name, value in (
        ("steps", steps),
        ("epochs", epochs),
        ("checkpoint_every", checkpoint_every),
    ):
        if value is not None:
            check_int(name, value, minimum=1)
    check_int("log_every", log_every, minimum=1)
    state = TrainState() if state is None else state
    pad_id = _model_pad_id(model, pad_id)
    device = next(model.parameters()).device
    was_training = model.training
    model.train()
    run = _Run(state, log_every, callback, time.perf_counter())

    def finished() -> bool:
        return (
            (steps is not None and state.step >= steps)
            or (epochs is not None and state.epoch >= epochs)
            or (max_seconds is not None and run.seconds >= max_seconds)
            or run.stopped
        )

    while not finished():
        epoch_batches = batches(state.epoch) if callable(batches) else batches
        seen = 0
        for index, batch in enumerate(epoch_batches):
            seen += 1
            if index < state.batch_in_epoch:
                continue  # consumed before a resume
            src, tgt_in, tgt_out = _unpack(batch, device)
            logits = model(src, tgt_in)  # (B, T, V)
            loss_sum = label_smoothed_cross_entropy(
                logits, tgt_out, label_smoothing, pad_id, reduction="sum"
            )
            n_tokens = int((tgt_out != pad_id).sum())
            optimizer.zero_grad(set_to_none=True)
            (loss_sum / max(n_tokens, 1)).backward()
            grad_norm = _clip(model, clip_norm)
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            state.step += 1
            state.batch_in_epoch = index + 1
            run.after_step(loss_sum.detach(), n_tokens, grad_norm, optimizer)
            if checkpoint_dir and checkpoint_every and state.step % checkpoint_every == 0:
                run.pause(
                    lambda: save_checkpoint(
                        checkpoint_dir, model, optimizer, scheduler, state=state, vocabs=vocabs
                    )
                )
            if finished():
                break
        else:
            if seen == 0:
                fail(
                    "batches",
                    "a non-empty iterable of batches for every epoch",
                    f"no batches in epoch {state.epoch}",
                )
            state.epoch += 1
            state.batch_in_epoch = 0
    run.flush(optimizer)
    if checkpoint_dir:
        save_checkpoint(checkpoint_dir, model, optimizer, scheduler, state=state, vocabs=vocabs)
    model.train(was_training)
    return state.history


def _clip(model: nn.Module, clip_norm: float | None) -> torch.Tensor:
    """Rescale all gradients together so their global L2 norm is at most ``clip_norm``."""
    params = [p for p in model.parameters() if p.grad is not None]
    if clip_norm is None:
        return torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in params]))
    return nn.utils.clip_grad_norm_(params, clip_norm)


class _Run:
    """Bookkeeping of one ``train`` call: timing, the log window, the callback."""

    def __init__(self, state: TrainState, log_every: int, callback, start: float) -> None:
        self.state, self.log_every, self.callback = state, log_every, callback
        self.start, self.paused, self.stopped = start, 0.0, False
        self.window_loss, self.window_tokens, self.window_steps = 0.0, 0, 0
        self.window_begin, self.grad_norm = 0.0, 0.0  # training seconds at window start
        self.seconds_before = state.seconds

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start - self.paused

    def pause(self, action: Callable[[], object]) -> None:
        """Run ``action`` without counting its time as training time."""
        begin = time.perf_counter()
        action()
        self.paused += time.perf_counter() - begin

    def after_step(self, loss_sum, n_tokens: int, grad_norm, optimizer) -> None:
        self.window_loss = loss_sum + self.window_loss  # stays a tensor: no sync per step
        self.window_tokens += n_tokens
        self.window_steps += 1
        self.grad_norm = grad_norm
        self.state.tokens += n_tokens
        if self.state.step % self.log_every == 0:
            self.flush(optimizer)

    def flush(self, optimizer) -> None:
        if not self.window_steps:
            return
        loss = float(self.window_loss) / max(self.window_tokens, 1)  # syncs the device
        now_seconds = self.seconds
        window_seconds = max(now_seconds - self.window_begin, 1e-9)
        self.state.seconds = self.seconds_before + now_seconds
        record = {
            "step": self.state.step,
            "epoch": self.state.epoch,
            "loss": loss,
            "lr": optimizer.param_groups[0]["lr"],
            "grad_norm": float(self.grad_norm),
            "tokens_per_s": self.window_tokens / window_seconds,
            "seconds": self.state.seconds,
        }
        if not math.isfinite(loss):
            fail(
                "loss",
                "finite",
                repr(loss),
                "Lower the learning rate (factor) or check "
                "the data: a batch may contain only padding.",
                error=FloatingPointError,
            )
        for key, value in record.items():
            self.state.history.setdefault(key, []).append(value)
        self.window_loss, self.window_tokens, self.window_steps = 0.0, 0, 0
        if self.callback is not None:
            begin = time.perf_counter()
            self.stopped = bool(self.callback(record)) or self.stopped
            self.paused += time.perf_counter() - begin
        self.window_begin = self.seconds
