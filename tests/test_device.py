import warnings

import pytest
import torch

from transformer_lib import device as device_module
from transformer_lib.device import get_device


def test_course_device_wins(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert get_device() == torch.device("cpu")


def test_falls_back_to_cpu_without_accelerator(monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert get_device() == torch.device("cpu")


def test_bad_course_device_is_named(monkeypatch):
    monkeypatch.setenv("COURSE_DEVICE", "gpu0")
    with pytest.raises(ValueError, match=r"`COURSE_DEVICE` must be a torch device name .*'gpu0'"):
        get_device()


def test_missing_accelerator_is_named(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("COURSE_DEVICE", "cuda")
    with pytest.raises(ValueError, match=r"`COURSE_DEVICE` must be a device this machine has"):
        get_device()


def test_a_cuda_device_is_prepared_once_when_it_is_picked(monkeypatch):
    """No GPU needed: `prepared` is what get_device runs for CUDA, here counted."""
    calls = []
    monkeypatch.setattr(device_module, "prepared", lambda d: calls.append(d) or d)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    assert get_device() == torch.device("cuda")
    assert get_device("cuda:0") == torch.device("cuda:0")
    assert get_device("cpu") == torch.device("cpu")  # nothing to prepare
    assert calls == [torch.device("cuda"), torch.device("cuda:0")]


def test_preparing_runs_a_backward_pass_and_keeps_only_the_cublas_notice_from_the_student(
    monkeypatch,
):
    """On the CPU: the warm-up's backward passes run, PyTorch's cuBLAS notice given during
    them does not reach the notebook, and any other warning still does."""
    backward = torch.autograd.backward
    passes = []

    def backward_with_warnings(*args, **kwargs):
        passes.append(1)
        backward(*args, **kwargs)
        warnings.warn(
            f"{device_module.CUBLAS_NOTICE}! Attempting to set the primary context...", stacklevel=2
        )
        warnings.warn("something else", stacklevel=2)

    monkeypatch.setattr(torch.autograd, "backward", backward_with_warnings)
    device_module.prepared.cache_clear()
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert device_module.prepared(torch.device("cpu")) == torch.device("cpu")
    device_module.prepared.cache_clear()
    assert len(passes) == 2
    assert [str(w.message) for w in shown] == ["something else"] * 2
