"""transformer_lib.train.checkpoint across processes: two processes saving to one path, loads while
another process saves, and saves killed (SIGKILL) at random moments.

The tests start this file as a script in child processes (``_main``, at the end), which begin
together and run for ``SECONDS``. A save of step ``n`` sets every weight to ``n``, so a load
can tell that it got exactly the weights saved with the step it reports.
"""

import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import pytest
import torch

import transformer_lib
from transformer_lib import Transformer, TransformerConfig
from transformer_lib.train import TrainState, make_optimizer
from transformer_lib.train.checkpoint import load_checkpoint, save_checkpoint

SECONDS = 2.0  # how long each child saves or loads
OTHER = 1_000_000  # the second writer's first step (float32 holds both ranges exactly)


def _model() -> Transformer:
    """A tiny Transformer, the same in every process."""
    torch.manual_seed(0)
    sizes = dict(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, n_decoder_layers=1)
    return Transformer(TransformerConfig.small(10, max_len=16, **sizes))


def _save(path: Path, model: Transformer, step: int) -> None:
    """Save ``model`` with every weight set to ``step``, with an optimizer (both files)."""
    with torch.no_grad():
        for tensor in model.state_dict().values():
            tensor.fill_(step)
    save_checkpoint(path, model, make_optimizer(model), state=TrainState(step=step))


def _load(path: Path, model: Transformer) -> int:
    """Load every file of ``path`` into ``model``; returns the step, once the weights are
    exactly that step's."""
    step = load_checkpoint(path, model, make_optimizer(model)).state.step
    for name, tensor in model.state_dict().items():
        assert torch.all(tensor == step), f"{name} is not the weight saved at step {step}"
    return step


def _run(tmp_path: Path, *commands: tuple) -> list[list[int]]:
    """One child per command; they start together. Returns each child's "<runs> <failures>"
    once no failure is reported (the first one is shown otherwise)."""
    library = Path(transformer_lib.__file__).parents[1]  # the one under test, in the children
    env = {**os.environ, "PYTHONPATH": str(library)}
    errors = [tmp_path / f"child-{i}.err" for i in range(len(commands))]
    children = [
        subprocess.Popen(
            [sys.executable, __file__, *map(str, command)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=error.open("w"),
            text=True,
            env=env,
        )
        for command, error in zip(commands, errors)
    ]
    for child, error in zip(children, errors):
        assert child.stdout.readline() == "ready\n", error.read_text()[-3000:]
    for child in children:  # go
        child.stdin.close()
    results = []
    for child, error in zip(children, errors):
        out, err = child.stdout.read(), error.read_text()[-3000:]
        assert child.wait(timeout=60) == 0, err
        runs, failures = map(int, out.split())
        assert failures == 0, f"{failures} of {runs} failed; the first:\n{err}"
        results.append([runs, failures])
        error.unlink()
    return results


def _save_folders(path: Path) -> list[str]:
    return sorted(set(os.listdir(path)) - {"LATEST", ".lock"})


@pytest.mark.slow
def test_two_processes_saving_to_one_path_never_fail_each_other(tmp_path):
    path = tmp_path / "ck"
    (saves_1, _), (saves_2, _) = _run(tmp_path, ("save", path, 1), ("save", path, OTHER))
    assert saves_1 >= 5 and saves_2 >= 5
    assert _load(path, _model()) in (saves_1, OTHER + saves_2 - 1)  # one of the last two
    assert os.listdir(tmp_path) == ["ck"] and len(_save_folders(path)) == 2


@pytest.mark.slow
def test_loads_while_another_process_saves_never_fail(tmp_path):
    path = tmp_path / "ck"
    _save(path, _model(), 0)
    (saves, _), (loads, _) = _run(tmp_path, ("save", path, 1), ("load", path, 0))
    assert saves >= 5 and loads >= 50


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks the processes it kills")
def test_a_save_killed_at_a_random_moment_leaves_the_old_or_the_new_checkpoint(tmp_path):
    path = tmp_path / "ck"
    _save(path, _model(), 1)
    [(during_a_save, _)] = _run(tmp_path, ("kill", path, 30))
    assert during_a_save >= 1
    _save(path, _model(), 10**6)
    assert os.listdir(tmp_path) == ["ck"] and len(_save_folders(path)) == 2


# -- the children ------------------------------------------------------------------------------


def _repeat(action, seconds: float) -> str:
    """``action(i)`` for i = 0, 1, ... during ``seconds``; returns "<runs> <failures>" and
    prints the first failure to stderr."""
    runs = failures = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            action(runs)
        except Exception:
            failures += 1
            if failures == 1:
                traceback.print_exc()
        runs += 1
    return f"{runs} {failures}"


def _save_forever(path: Path, started, done) -> None:
    """Save steps ``started + 1``, ...; ``started`` is set before each save, ``done`` after."""
    model = _model()
    while True:
        step = started.value + 1
        started.value = step
        _save(path, model, step)
        done.value = step


def _kill_rounds(path: Path, rounds: int) -> str:
    """``rounds`` times: a forked process saves over and over until a SIGKILL at a random
    moment; then the path must hold the last completed save or the one killed (every file
    read and checked). Returns "<kills during a save> <failures>"; the first failure goes
    to stderr."""
    fork = multiprocessing.get_context("fork")
    started, done = fork.Value("q", 1, lock=False), fork.Value("q", 1, lock=False)
    model, failures, during_a_save = _model(), 0, 0
    for _ in range(rounds):
        begun = started.value
        child = fork.Process(target=_save_forever, args=(path, started, done))
        child.start()
        # The random moment counts from the child's first save, not from the fork: on a busy
        # machine a forked child can wait longer than 50 ms for a core, and a kill before its
        # first save tests nothing.
        while started.value == begun and child.is_alive():
            time.sleep(0.001)
        time.sleep(random.uniform(0.0, 0.05))
        child.kill()
        child.join()
        during_a_save += started.value != done.value
        try:  # a script that resumes when the path exists must find it, complete
            assert path.exists(), f"no checkpoint at {path} after a kill"
            step = _load(path, model)
            assert step in (done.value, started.value), (step, done.value, started.value)
        except Exception:
            failures += 1
            if failures == 1:
                traceback.print_exc()
            step = done.value
            _save(path, model, step)
        started.value = done.value = step  # the next round saves over this checkpoint
    return f"{during_a_save} {failures}"


def _main(mode: str, path: str, number: str) -> None:
    torch.set_num_threads(1)
    model, path = _model(), Path(path)
    with tempfile.TemporaryDirectory() as scratch:  # the first save imports and sets up a lot
        _save(Path(scratch) / "warm-up", model, 0)
        _load(Path(scratch) / "warm-up", model)
    print("ready", flush=True)
    sys.stdin.read()  # until the test closes it: all children go at once
    if mode == "save":
        print(_repeat(lambda i: _save(path, model, int(number) + i), SECONDS))
    elif mode == "load":
        print(_repeat(lambda i: _load(path, model), SECONDS))
    else:
        print(_kill_rounds(path, int(number)))


if __name__ == "__main__":
    _main(*sys.argv[1:])
