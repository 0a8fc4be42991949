"""Where a training run stands: what ``train`` updates and a checkpoint stores.

Its own module, below both ``train`` and ``checkpoint``: ``train`` writes checkpoints, so
``checkpoint`` must not import the ``train`` package back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["TrainState"]


@dataclass
class TrainState:
    """Where a training run stands; ``train`` updates it in place and checkpoints store it."""

    step: int = 0  # optimizer updates done
    epoch: int = 0  # epochs completed (the current epoch's index)
    batch_in_epoch: int = 0  # batches of the current epoch already used
    tokens: int = 0  # target tokens trained on
    seconds: float = 0.0  # training time, callbacks and checkpoints excluded
    history: dict[str, list[float]] = field(default_factory=dict)
