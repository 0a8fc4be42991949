"""The bookkeeping of one ``train`` call: when to stop, training time, the log window and
the callback that reports progress."""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from transformer_lib.train.state import TrainState


class Run:
    """Bookkeeping of one ``train`` call: when to stop, timing, the log window, the callback."""

    def __init__(
        self,
        state: TrainState,
        log_every: int,
        callback: Callable[[dict], bool | None] | None,
        steps: int | None,
        epochs: int | None,
        max_seconds: float | None,
    ) -> None:
        self.state, self.log_every, self.callback = state, log_every, callback
        self.steps, self.epochs, self.max_seconds = steps, epochs, max_seconds
        self.start, self.paused, self.stopped = time.perf_counter(), 0.0, False
        self.window_loss, self.window_tokens, self.window_steps = 0.0, 0, 0
        self.window_begin, self.grad_norm = 0.0, 0.0  # training seconds at window start
        self.seconds_before = state.seconds

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.start - self.paused

    def finished(self) -> bool:
        """A total is reached (steps, epochs, seconds) or the callback asked to stop."""
        return (
            (self.steps is not None and self.state.step >= self.steps)
            or (self.epochs is not None and self.state.epoch >= self.epochs)
            or (self.max_seconds is not None and self.seconds >= self.max_seconds)
            or self.stopped
        )

    def pause(self, action: Callable[[], object]) -> None:
        """Run ``action`` without counting its time as training time."""
        begin = time.perf_counter()
        action()
        self.paused += time.perf_counter() - begin

    def after_step(
        self,
        loss_sum: torch.Tensor,
        n_tokens: int,
        grad_norm: float,
        optimizer: torch.optim.Optimizer,
    ) -> None:
        """Add one step to the log window; every ``log_every`` steps, flush it."""
        self.window_loss = loss_sum + self.window_loss  # a tensor: synced only at the log
        self.window_tokens += n_tokens
        self.window_steps += 1
        self.grad_norm = grad_norm
        self.state.tokens += n_tokens
        if self.state.step % self.log_every == 0:
            self.flush(optimizer)

    def flush(self, optimizer: torch.optim.Optimizer) -> None:
        """Append the window's record to the history and hand it to the callback."""
        if not self.window_steps:
            return
        loss = float(self.window_loss) / max(self.window_tokens, 1)
        now_seconds = self.seconds
        window_seconds = max(now_seconds - self.window_begin, 1e-9)
        self.state.seconds = self.seconds_before + now_seconds
        record = {
            "step": self.state.step,
            "epoch": self.state.epoch,
            "loss": loss,
            "lr": optimizer.param_groups[0]["lr"],
            "grad_norm": self.grad_norm,
            "tokens_per_s": self.window_tokens / window_seconds,
            "seconds": self.state.seconds,
        }
        for key, value in record.items():
            self.state.history.setdefault(key, []).append(value)
        self.window_loss, self.window_tokens, self.window_steps = 0.0, 0, 0
        if self.callback is not None:
            begin = time.perf_counter()
            self.stopped = bool(self.callback(record)) or self.stopped
            self.paused += time.perf_counter() - begin
        self.window_begin = self.seconds
