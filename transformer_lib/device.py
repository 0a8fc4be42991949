"""Pick the device the course runs on: ``COURSE_DEVICE`` if set, else an accelerator, else CPU."""

from __future__ import annotations

import os

import torch

from transformer_lib._checks import fail


def get_device(name: str | None = None) -> torch.device:
    """Return the course's device.

    Order: the ``name`` argument, then the ``COURSE_DEVICE`` environment variable,
    then CUDA, then Apple's MPS, then the CPU.
    """
    name = name or os.environ.get("COURSE_DEVICE") or None
    if name is None:
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        fail("COURSE_DEVICE", "a torch device name such as 'cpu', 'cuda' or 'mps'", repr(name))
    available = {
        "cpu": True,
        "cuda": torch.cuda.is_available(),
        "mps": getattr(torch.backends, "mps", None) is not None
        and torch.backends.mps.is_available(),
    }
    if not available.get(device.type, True):
        fail(
            "COURSE_DEVICE",
            "a device this machine has",
            repr(name),
            "Unset COURSE_DEVICE to fall back to the CPU.",
        )
    return device
