"""Pick the device the course runs on: ``COURSE_DEVICE`` if set, else an accelerator, else CPU."""

from __future__ import annotations

import functools
import os
import warnings

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
            return prepared(torch.device("cuda"))
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
    return prepared(device) if device.type == "cuda" else device


# PyTorch's notice when cuBLAS finds no current CUDA context in the calling thread. Autograd
# runs a CUDA backward pass on a thread of its own, whose first cuBLAS call (a notebook's
# first backward through a matmul) meets no context and prints this to stderr, once per
# process: in the middle of notebook 05, where nbval takes it for an unexpected output.
CUBLAS_NOTICE = "Attempting to run cuBLAS, but there was no current CUDA context"


@functools.cache
def prepared(device: torch.device) -> torch.device:
    """``device`` with its CUDA setup done now, once per process: the context and cuBLAS on
    this thread, then one small backward pass, so that autograd's thread for ``device`` binds
    the context (through an elementwise kernel) and creates its cuBLAS handle (through a
    matmul) here rather than in a notebook's cell. If PyTorch still gives its one-time notice
    about setting that thread's context (:data:`CUBLAS_NOTICE`), it is given here."""
    x = torch.ones(2, 2, device=device, requires_grad=True)
    torch.mm(x.detach(), x.detach())  # the context and a cuBLAS handle on this thread
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=CUBLAS_NOTICE)
        (x * 2).sum().backward()  # autograd's thread: an elementwise kernel binds the context
        torch.mm(x, x).sum().backward()  # ... and its first cuBLAS call
    return device
