"""Dropout (paper §5.4), as ``nn.Dropout`` computes it, with a mask that is faster to draw.

Shapes:
    any shape in, the same shape out.
"""

from __future__ import annotations

import torch
from torch import nn


class Dropout(nn.Dropout):
    """``nn.Dropout``: in training, each entry is zeroed with probability ``p`` and the rest
    are scaled by 1 / (1 - p), so the expected value is unchanged; in evaluation, identity.

    The one difference is how the mask is drawn: uniform numbers compared with ``p``
    (kept where u >= p, probability 1 - p) instead of PyTorch's Bernoulli sampler, which
    on a CPU takes about twice as long. Same distribution, other random numbers.

    This is the library's one speed trick, kept because it is measured to matter:
    ``benchmarks/train_throughput.py`` (2 threads, 2-core CPU, 2026-11-25, 3 runs of each
    in turn, medians) gives transformer_lib 1.162x the tokens/s of ``nn.Transformer`` with
    this class and 1.094x with ``nn.Dropout`` in its place, below the course's floor of 1.10x.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return x
        if self.p == 1.0:
            return torch.zeros_like(x)
        keep = torch.rand_like(x) >= self.p  # True with probability 1 - p
        return x * keep / (1 - self.p)
