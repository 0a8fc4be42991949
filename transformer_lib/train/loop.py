"""The training loop: :func:`train`, which updates a :class:`TrainState` in place.

Shapes:
    B batch, S source length, T target length, L sequence length, V target vocabulary.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.optim.lr_scheduler import LRScheduler

from transformer_lib._catalogue import error_text
from transformer_lib._checks import check_int, check_probability, fail
from transformer_lib.i18n import N_
from transformer_lib.model.contract import CourseModel, check_course_model
from transformer_lib.train.checkpoint import save_checkpoint
from transformer_lib.train.progress import Run
from transformer_lib.train.state import TrainState

__all__ = ["train"]


def train(
    model: nn.Module,
    batches: Iterable | Callable[[int], Iterable],
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler | None = None,
    *,
    steps: int | None = None,
    epochs: int | None = None,
    label_smoothing: float = 0.1,
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
    ``checkpoint_every`` steps and at the end. The model trains on the device it is on;
    targets equal to ``model.ignore_index`` (padding: ``model.pad_id``) are left out.

    Every step the loss and the gradient norm are checked before the optimizer step (the
    step's one device sync), and the weights before each checkpoint: a non-finite value
    stops the run with ``FloatingPointError`` and the last good checkpoint stays.

    A ``LanguageModel`` (notebook 09) trains the same way on (inputs, targets) batches
    (``data.language_model_batches``), an ``EncoderOnlyModel`` (notebook 10) on masked-token
    batches (``data.masked_token_batches``) and a ``SentenceClassifier`` on (tokens, labels)
    batches (``data.classification_batches``).

    Shapes: each batch has src (B, S), tgt_in (B, T), tgt_out (B, T); for a language
    model, inputs (B, L) and targets (B, L).
    """
    check_course_model("model", model)
    _check_limits(steps, epochs, max_seconds, log_every, checkpoint_every, checkpoint_dir)
    state = TrainState() if state is None else state
    device = next(model.parameters()).device
    save = partial(_save_checkpoint, checkpoint_dir, model, optimizer, scheduler, state, vocabs)
    was_training = model.training
    model.train()
    run = Run(state, log_every, callback, steps, epochs, max_seconds)
    while not run.finished():
        for index, batch in _unused_batches(batches, state):
            *inputs, targets = _unpack(model, batch, device)
            loss_sum, n_tokens = _loss(model, inputs, targets, label_smoothing)
            grad_norm = _backward(model, optimizer, loss_sum, n_tokens, clip_norm)
            n_tokens, grad_norm = _finite(loss_sum, n_tokens, grad_norm)  # the step's one sync
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            state.step += 1
            state.batch_in_epoch = index + 1
            run.after_step(loss_sum.detach(), n_tokens, grad_norm, optimizer)
            if checkpoint_dir and checkpoint_every and state.step % checkpoint_every == 0:
                run.pause(save)
            if run.finished():
                break
        else:
            state.epoch += 1
            state.batch_in_epoch = 0
    run.flush(optimizer)
    if checkpoint_dir:
        save()
    model.train(was_training)
    return state.history


def _check_limits(
    steps, epochs, max_seconds, log_every: int, checkpoint_every, checkpoint_dir
) -> None:
    """At least one of the three limits, whole positive numbers of steps, and a folder for
    the checkpoints that ``checkpoint_every`` asks for."""
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
    if checkpoint_every is not None and checkpoint_dir is None:
        fail(
            "checkpoint_every",
            "given together with checkpoint_dir (the folder to write the checkpoints to)",
            f"checkpoint_every={checkpoint_every} without checkpoint_dir",
            "Pass checkpoint_dir=..., or leave checkpoint_every out.",
        )


def _unused_batches(batches, state: TrainState) -> Iterator[tuple[int, object]]:
    """(index, batch) for the current epoch's batches, without those used before a resume."""
    seen = 0
    for index, batch in enumerate(batches(state.epoch) if callable(batches) else batches):
        seen += 1
        if index >= state.batch_in_epoch:
            yield index, batch
    if seen == 0:
        fail(
            "batches",
            "a non-empty iterable of batches for every epoch",
            f"no batches in epoch {state.epoch}",
        )


def _unpack(model: CourseModel, batch, device: torch.device) -> tuple[torch.Tensor, ...]:
    """The model's inputs, then the targets, on ``device``, as the model splits its batches
    (``split_batch``: (src, tgt_in, tgt_out) for an encoder-decoder, (inputs, targets) for a
    language model)."""
    inputs, targets = model.split_batch(batch)
    return tuple(part.to(device, non_blocking=True) for part in (*inputs, targets))


def _loss(
    model: nn.Module,
    inputs: list[torch.Tensor],
    targets: torch.Tensor,
    label_smoothing: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Summed label-smoothed loss (§5.4) of one batch and its number of real target tokens.

    PyTorch's fused ``F.cross_entropy`` computes it: ``loss.label_smoothed_cross_entropy``
    is the same loss written out, as notebook 07 teaches it (tests/test_train.py shows the
    two equal, values and gradients).

    Targets equal to ``model.ignore_index`` (``<pad>``, unless the model says otherwise)
    count for nothing.

    Shapes: inputs [src (B, S), tgt_in (B, T)] or [inputs (B, L)], targets (B, T) or
    (B, L) -> scalar, scalar (int64); a classifier's logits (B, C) and targets (B,) alike.
    """
    check_probability("label_smoothing", label_smoothing)
    logits = model(*inputs)  # (B, T, V)
    loss_sum = F.cross_entropy(
        logits.reshape(-1, logits.size(-1)).float(),  # (B·T, V)
        targets.reshape(-1),  # (B·T,)
        label_smoothing=label_smoothing,
        ignore_index=model.ignore_index,
        reduction="sum",
    )
    return loss_sum, (targets != model.ignore_index).sum()


def _backward(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    loss_sum: torch.Tensor,
    n_tokens: torch.Tensor,
    clip_norm: float | None,
) -> torch.Tensor:
    """Gradients of the mean loss per token, rescaled together so their global L2 norm is
    at most ``clip_norm`` (None: left as they are); returns that norm before clipping (a
    tensor: nothing here waits for the device)."""
    optimizer.zero_grad(set_to_none=True)
    (loss_sum / n_tokens.clamp(min=1)).backward()
    # max_norm=inf only measures (scales by 1); nn.utils.get_total_norm needs torch >= 2.6
    max_norm = math.inf if clip_norm is None else clip_norm
    return nn.utils.clip_grad_norm_(model.parameters(), max_norm)


_DIVERGED = N_(
    "Lower the learning rate (factor) or check the data: a batch may contain only padding."
)


def _finite(
    loss_sum: torch.Tensor, n_tokens: torch.Tensor, grad_norm: torch.Tensor
) -> tuple[int, float]:
    """The token count and gradient norm as numbers, once the loss and norm are finite
    (one device sync for all three); a non-finite one raises ``FloatingPointError`` before
    the optimizer step changes the weights."""
    values = [loss_sum.detach().float(), n_tokens.float(), grad_norm.detach().float()]
    loss_value, count, norm_value = torch.stack([v.to(loss_sum.device) for v in values]).tolist()
    n_tokens = int(count)
    if not math.isfinite(loss_value):
        fail("loss", "finite", repr(loss_value / max(n_tokens, 1)), _DIVERGED, FloatingPointError)
    if not math.isfinite(norm_value):
        fail("grad_norm", "finite", repr(norm_value), _DIVERGED, FloatingPointError)
    return n_tokens, norm_value


def _save_checkpoint(path, model, optimizer, scheduler, state: TrainState, vocabs) -> None:
    """``train(checkpoint_dir=...)`` writes through :func:`checkpoint.save_checkpoint`."""
    params = [p.detach() for p in model.parameters()]
    finite = torch.stack([torch.isfinite(p).all() for p in params]).tolist()  # one sync
    if not all(finite):
        names = [name for (name, _), ok in zip(model.named_parameters(), finite) if not ok]
        fail(
            "model",
            "finite weights before a checkpoint is written",
            f"non-finite values in {', '.join(names[:3])}",
            "The last good checkpoint in {path} is kept. {diverged}",
            FloatingPointError,
            path=path,
            diverged=error_text(_DIVERGED),
        )
    save_checkpoint(path, model, optimizer, scheduler, state=state, vocabs=vocabs)
