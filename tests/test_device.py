import pytest
import torch

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
