"""transformer_lib.train.checkpoint on disk: interrupted saves, the path's name, the layout before
LATEST, and a save folder removed while a load reads it.

The tests run on two kinds of file system: ``posix``, and ``windows-like``, where renaming over
an existing folder is refused (no atomic exchange) and replacing a file fails once with
``PermissionError``, as it does on Windows while a reader has the file open.
"""

import errno
import os
import shutil
import time

import pytest
import torch

from transformer_lib.train import TrainState, make_optimizer
from transformer_lib.train.checkpoint import load_checkpoint, resume, save_checkpoint
from transformer_lib.train.checkpoint import save_load as save_load_module

# Tiny models gain nothing from a second thread (see conftest.one_thread).
pytestmark = pytest.mark.usefixtures("one_thread")

FILE_SYSTEMS = ["posix", "windows-like"]


class Killed(BaseException):
    """A simulated SIGKILL: nothing after it happens (see ``_FaultAt``)."""


class _FaultAt:
    """Counts a save's file-system steps (the ``os`` functions below; each written file is
    flushed with ``fsync``) and interrupts the k-th, before it runs or just after it
    ends: ``KeyboardInterrupt`` once (clean-up still runs), or a kill (this step and every
    later one raise, so no clean-up reaches the disk)."""

    OS_STEPS = (
        "mkdir",
        "open",
        "fsync",
        "replace",
        "rename",
        "scandir",
        "unlink",
        "remove",
        "rmdir",
    )

    def __init__(self, monkeypatch, k: int | None, kind: str, file_system: str) -> None:
        self.k, self.kind, self.calls, self.dead = k, kind, 0, False
        if file_system == "windows-like":
            _windows_like(monkeypatch)
        for name in self.OS_STEPS:
            monkeypatch.setattr(os, name, self.wrap(getattr(os, name)))

    def wrap(self, function):
        def step(*args, **kwargs):
            self.calls += 1
            if self.dead or (self.calls == self.k and self.kind != "keyboard-after"):
                self.dead = self.kind == "kill"
                raise Killed() if self.kind == "kill" else KeyboardInterrupt()
            try:
                return function(*args, **kwargs)
            finally:
                if self.calls == self.k:
                    raise KeyboardInterrupt()  # noqa: B012 (replaces what the step raised)

        return step


def _windows_like(monkeypatch) -> None:
    """No rename over an existing folder; a file is replaced only at the second try."""
    refused = set()

    def move(rename):
        def call(source, target, **kwargs):
            if os.path.isdir(target):
                raise OSError(errno.EEXIST, "the file system cannot replace a folder", target)
            if os.path.exists(target) and os.fspath(target) not in refused:
                refused.add(os.fspath(target))
                raise PermissionError(errno.EACCES, "a reader has the file open", target)
            return rename(source, target, **kwargs)

        return call

    monkeypatch.setattr(os, "rename", move(os.rename))
    monkeypatch.setattr(os, "replace", move(os.replace))
    monkeypatch.setattr(time, "sleep", lambda seconds: None)


def _fill(model, value: float):
    """``model`` with every weight set to ``value``: a checkpoint of it is recognisable."""
    with torch.no_grad():
        for tensor in model.state_dict().values():
            tensor.fill_(value)
    return model


def _holds(model, value: float) -> bool:
    return all(torch.all(tensor == value) for tensor in model.state_dict().values())


def _save(path, model, step: int):
    optimizer = make_optimizer(model)
    return save_checkpoint(path, _fill(model, step), optimizer, state=TrainState(step=step))


def _saves_in(path) -> list[str]:
    """What a checkpoint folder holds besides LATEST and its lock: the save folders."""
    return sorted(set(os.listdir(path)) - {"LATEST", ".lock"})


@pytest.mark.parametrize("file_system", FILE_SYSTEMS)
@pytest.mark.parametrize("kind", ["keyboard-before", "keyboard-after", "kill"])
def test_an_interrupt_at_any_step_of_a_save_leaves_the_old_or_the_new_checkpoint(
    tmp_path, monkeypatch, tiny_model, kind, file_system
):
    model = tiny_model()
    _save(tmp_path / "count", model, 1)
    with monkeypatch.context() as patch:
        counter = _FaultAt(patch, None, kind, file_system)
        _save(tmp_path / "count", model, 2)  # a save over a checkpoint, as below
    steps = counter.calls
    assert steps >= 8  # mkdir, three written files, the pointer, its replacement, clean-up
    for k in range(1, steps + 1):
        path = tmp_path / f"k{k}" / "ck"
        _save(path, model, 1)
        with monkeypatch.context() as patch:
            _FaultAt(patch, k, kind, file_system)
            with pytest.raises((Killed, KeyboardInterrupt)):
                _save(path, model, 2)
        assert path.is_dir(), k
        optimizer = make_optimizer(model)
        state = resume(path, _fill(model, -1.0), optimizer)  # reads every file
        assert state.step in (1, 2) and _holds(model, state.step), k
        _save(path, model, 3)
        assert load_checkpoint(path).state.step == 3, k
        assert os.listdir(path.parent) == [path.name], k  # nothing left beside the path
        assert len(_saves_in(path)) == 2, k  # the current save and the one it replaced


@pytest.mark.parametrize(
    "name, where",
    [("~/runs/ck", "home/runs/ck"), ("runs/exp[lr=0.1]", "cwd/runs/exp[lr=0.1]")],
    ids=["home", "glob"],
)
def test_a_path_with_a_tilde_or_glob_characters_is_taken_as_meant(
    tmp_path, monkeypatch, tiny_model, name, where
):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    model = tiny_model()
    _save(name, model, 1)
    with monkeypatch.context() as patch:
        counter = _FaultAt(patch, None, "kill", "posix")
        _save(name, model, 2)
    with monkeypatch.context() as patch:
        _FaultAt(patch, counter.calls // 2, "kill", "posix")  # a save killed half-way
        with pytest.raises(Killed):
            _save(name, model, 3)
    folder = _save(name, model, 4)
    path = tmp_path / where
    assert load_checkpoint(path).state.step == 4 and load_checkpoint(name).state.step == 4
    assert os.listdir(path.parent) == [path.name]  # nothing left beside it
    assert os.listdir(tmp_path / "cwd") == ([] if name.startswith("~") else ["runs"])
    assert folder.resolve().parent == path.resolve() and len(_saves_in(path)) == 2


def test_a_folder_removed_while_it_is_read_is_followed_to_the_newer_save(
    tmp_path, monkeypatch, tiny_model
):
    path = tmp_path / "ck"
    model = tiny_model()
    _save(path, model, 1)
    read_meta = save_load_module.read_meta

    def read_then_two_saves(folder):  # the saves of another process, at the worst moment
        meta = read_meta(folder)
        if meta["state"]["step"] == 1:
            _save(path, tiny_model(), 2)
            _save(path, tiny_model(), 3)  # removes the folder of step 1
        return meta

    monkeypatch.setattr(save_load_module, "read_meta", read_then_two_saves)
    loaded = load_checkpoint(path, optimizer=make_optimizer(model))
    assert loaded.state.step == 3 and _holds(loaded.model, 3)


def test_a_checkpoint_in_the_layout_before_latest_loads_and_the_next_save_moves_it(
    tmp_path, tiny_model
):
    model = tiny_model()
    folder = _save(tmp_path / "new", model, 5)
    old = tmp_path / "old"  # the files directly in the folder, as saves used to write them
    shutil.copytree(folder, old)
    assert sorted(os.listdir(old)) == sorted(os.listdir(folder))
    assert load_checkpoint(old).state.step == 5 and load_checkpoint(folder).state.step == 5
    _save(old, model, 6)
    assert load_checkpoint(old).state.step == 6
    assert len(_saves_in(old)) == 1  # the old files are gone, the new save is in its folder


def test_the_returned_folder_loads_but_is_no_place_to_save(tmp_path, tiny_model):
    model = tiny_model()
    folder = _save(tmp_path / "ck", model, 1)
    assert folder.parent == tmp_path / "ck"
    assert sorted(os.listdir(folder)) == [
        "checkpoint.json",
        "model.safetensors",
        "training.safetensors",
    ]
    _save(tmp_path / "ck", model, 2)
    assert load_checkpoint(folder).state.step == 1  # a save folder never changes
    assert load_checkpoint(tmp_path / "ck").state.step == 2
    with pytest.raises(ValueError, match="must be a checkpoint folder, not one of the saves"):
        _save(folder, model, 3)
    _save(tmp_path / "ck", model, 3)
    assert not folder.exists()  # two saves later it is removed


def test_a_damaged_latest_is_named_and_the_next_save_replaces_it(tmp_path, tiny_model):
    model, path = tiny_model(), tmp_path / "ck"
    _save(path, model, 1)
    (path / "LATEST").write_text("../../elsewhere\n")
    with pytest.raises(ValueError, match=r"LATEST` must be the name of a save folder beside it"):
        load_checkpoint(path)
    _save(path, model, 2)
    assert load_checkpoint(path).state.step == 2 and len(_saves_in(path)) == 1


@pytest.mark.skipif(os.name == "nt", reason="POSIX file locks")
def test_saves_go_on_where_the_file_system_keeps_no_locks(tmp_path, monkeypatch, tiny_model):
    import fcntl

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "no locks available")

    monkeypatch.setattr(fcntl, "flock", no_locks)
    model = tiny_model()
    _save(tmp_path / "ck", model, 1)
    _save(tmp_path / "ck", model, 2)
    assert load_checkpoint(tmp_path / "ck").state.step == 2
