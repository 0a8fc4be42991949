"""Graded cells run checks loaded afresh (transformer_lib/teaching/exercises/graded.py): a student's
cell that replaced a check, the library's answer, the comparison or an entry of
``sys.modules`` fools a check the notebook can reach, but not the graded cell's; and the
notebook's ``sys.modules`` is left as it was.

Each cheat below is first shown to work on a plain check, so that the graded cell's refusal
is not a test that passes for nothing.
"""

import json
import os
import re
import runpy
import subprocess
import sys
import types
from pathlib import Path

import pytest

import transformer_lib.teaching.exercises as ex
from transformer_lib.model import masks
from transformer_lib.teaching.exercises import _compare, ch04_padding

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from nbgrader_metadata import GRADED_LOAD  # noqa: E402

GRADED_CELL = GRADED_LOAD + "exercises.check_padding_mask(padding_mask)"
PLAIN_CELL = "exercises.check_padding_mask(padding_mask)"  # today's check cell
IMPORTING_CELL = "from {module} import check_padding_mask\ncheck_padding_mask(padding_mask)"
INVERTED = "your mask is inverted"  # the hint the wrong answer below earns


def inverted(tokens, pad_id):
    """A wrong answer: True at the pads."""
    return (tokens == pad_id)[:, None, None, :]


def passes(*args, **kwargs):
    return None


def run_cell(source: str, namespace: dict) -> None:
    exec(compile(source, "<cell>", "exec"), namespace)


def ours() -> dict:
    return {name: module for name, module in sys.modules.items() if "transformer_lib" in name}


def _fake(name: str, **attributes) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


def test_a_graded_cell_grades_with_its_own_checks_and_leaves_sys_modules_alone(capsys):
    before = ours()
    namespace = {"exercises": ex, "padding_mask": masks.padding_mask}
    run_cell(GRADED_CELL, namespace)
    assert capsys.readouterr().out.startswith("✓ padding mask")
    assert namespace["exercises"] is not ex and namespace["exercises"].__name__ == ex.__name__
    assert ours() == before and all(ours()[name] is module for name, module in before.items())


CHEATS = {  # name: (what a student's cell does, a cell that it fools)
    "the check on the package": (
        lambda patch, namespace: patch.setattr(ex, "check_padding_mask", passes),
        PLAIN_CELL,
    ),
    "the notebook's `exercises`": (
        lambda patch, namespace: namespace.update(
            exercises=types.SimpleNamespace(check_padding_mask=passes)
        ),
        PLAIN_CELL,
    ),
    "the library's answer": (
        lambda patch, namespace: patch.setattr(masks, "padding_mask", inverted),
        PLAIN_CELL,
    ),
    "the comparison": (
        lambda patch, namespace: patch.setattr(_compare, "_same_result", lambda *a: True),
        PLAIN_CELL,
    ),
    "a helper imported by the chapter": (
        lambda patch, namespace: patch.setattr(ch04_padding, "_expect", passes),
        PLAIN_CELL,
    ),
    "the chapter module in sys.modules": (
        lambda patch, namespace: patch.setitem(
            sys.modules, ch04_padding.__name__, _fake("fake", check_padding_mask=passes)
        ),
        IMPORTING_CELL.format(module=ch04_padding.__name__),
    ),
    "the package in sys.modules": (
        lambda patch, namespace: patch.setitem(
            sys.modules, ex.__name__, _fake("fake", check_padding_mask=passes, __path__=ex.__path__)
        ),
        IMPORTING_CELL.format(module=ex.__name__),
    ),
}


@pytest.mark.parametrize(("cheat", "fooled"), CHEATS.values(), ids=CHEATS.keys())
def test_a_cheat_that_fools_a_check_the_notebook_reaches_does_not_fool_the_graded_cell(
    cheat, fooled, monkeypatch
):
    namespace = {"exercises": ex, "padding_mask": inverted}
    cheat(monkeypatch, namespace)
    run_cell(fooled, namespace)  # the wrong answer passes: the cheat works
    with pytest.raises(AssertionError, match=INVERTED):
        run_cell(GRADED_CELL, namespace)


@pytest.mark.filterwarnings(
    "ignore:'transformer_lib.teaching.exercises.graded' found in sys.modules"
)
@pytest.mark.parametrize(
    "name",
    ["transformer_lib.teaching.exercises.graded", "transformer_lib.teaching.exercises"],
    ids=["graded", "pkg"],
)
def test_a_fake_module_where_the_graded_cell_looks_fails_the_cell(name, monkeypatch):
    fake = _fake("fake", exercises=types.SimpleNamespace(check_padding_mask=passes))
    monkeypatch.setitem(sys.modules, name, fake)
    with pytest.raises((ImportError, ValueError)):
        run_cell(GRADED_CELL, {"padding_mask": inverted})


def test_the_students_function_cannot_reach_the_graded_copy_by_importing(monkeypatch):
    def cheating(tokens, pad_id):
        import transformer_lib.teaching.exercises._compare as compare  # the notebook's, not the grader's

        monkeypatch.setattr(compare, "_same_result", lambda *a: True)
        return inverted(tokens, pad_id)

    run_cell(PLAIN_CELL, {"exercises": ex, "padding_mask": cheating})  # it fools a plain check
    with pytest.raises(AssertionError, match=INVERTED):
        run_cell(GRADED_CELL, {"padding_mask": cheating})


def test_loading_afresh_puts_sys_modules_back_even_when_it_fails(tmp_path):
    load_afresh = runpy.run_module("transformer_lib.teaching.exercises.graded")["load_afresh"]
    before = ours()
    with pytest.raises(ImportError, match="is not in"):
        load_afresh(tmp_path)
    assert ours() == before


def test_the_module_docstring_shows_the_graded_cell():
    doc = runpy.run_module("transformer_lib.teaching.exercises.graded")["__doc__"]
    assert all(line in doc for line in GRADED_CELL.splitlines() if line)


# What a graded cell loads: its chapter's checks and the library code they check. A package
# is named with the first notebook whose checks may load it (None: no check loads it).
FIRST_NEEDED = {
    "transformer_lib.train": 7,  # the loss and the schedule (notebook 07), never the loop
    "transformer_lib.train.loop": None,
    "transformer_lib.train.checkpoint": None,
    "transformer_lib.train.evaluate": 7,  # the alignment error rate, never BLEU
    "transformer_lib.train.evaluate.bleu": None,
    "transformer_lib.inference.decode": 7,
    "transformer_lib.teaching.studies": 8,
    "transformer_lib.data.text": None,  # the vocabulary (data.vocab) only: no corpus, no batches
    "transformer_lib.data.corpus": None,
    "transformer_lib.data.batching": None,
    "transformer_lib.inference.translate": None,
    "sacrebleu": None,
    "safetensors": None,
}
NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("0[0-9]_*.ipynb"))
LOADS = r"""
import importlib.machinery, json, runpy, sys

import transformer_lib.teaching.exercises  # as the notebook has it

find_spec = importlib.machinery.PathFinder.find_spec.__func__
found = set()


def recording(cls, name, path=None, target=None):
    found.add(name)
    return find_spec(cls, name, path, target)


importlib.machinery.PathFinder.find_spec = classmethod(recording)
loads = {}
for notebook, checks in json.loads(sys.argv[1]).items():  # in the course's order
    found.clear()
    exercises = runpy.run_module("transformer_lib.teaching.exercises.graded")["exercises"]
    for check in checks:
        getattr(exercises, check)
    loads[notebook] = sorted(found)
print(json.dumps(loads))
"""


def _checks_of(notebook: Path) -> list[str]:
    return sorted(set(re.findall(r"exercises\.(check_\w+)", notebook.read_text("utf-8"))))


@pytest.fixture(scope="module")
def graded_loads() -> dict[str, list[str]]:
    """For each notebook, the modules its graded cells load: a fresh interpreter runs the two
    lines of ``GRADED_LOAD`` and reads the notebook's checks, notebook after notebook, and
    every module found on disk meanwhile is recorded: all of the graded copy's own, and each
    other module the first time it is imported."""
    checks = {notebook.name: _checks_of(notebook) for notebook in NOTEBOOKS}
    run = subprocess.run(
        [sys.executable, "-c", LOADS, json.dumps(checks)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    return json.loads(run.stdout)


_CHAPTER_OF = {check: module for module, checks in ex.CHAPTERS.items() for check in checks}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda path: path.name[:2])
def test_a_graded_cell_loads_its_chapters_checks_not_the_whole_library(notebook, graded_loads):
    number = int(notebook.name[:2])
    loads = graded_loads[notebook.name]
    assert f"transformer_lib.teaching.exercises.{_CHAPTER_OF[_checks_of(notebook)[0]]}" in loads
    too_early = {
        module
        for module in loads
        for package, first in FIRST_NEEDED.items()
        if _within(module, package) and (first is None or number < first)
    }
    assert not too_early, f"notebook {notebook.name[:2]}'s checks load {sorted(too_early)}"
