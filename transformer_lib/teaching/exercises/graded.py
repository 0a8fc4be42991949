"""The exercise checks loaded afresh from the library's files, for grading.

nbgrader grades a notebook by running it, the student's cells included, so a cell may have
replaced a check (``exercises.check_x = lambda *a: None``), the library's answer a check
compares with (``masks.padding_mask = ...``) or an entry of ``sys.modules``. A graded cell
therefore runs this file and gets checks of its own::

    import runpy

    exercises = runpy.run_module("transformer_lib.teaching.exercises.graded")["exercises"]
    exercises.check_padding_mask(padding_mask)

``runpy`` executes this file from disk on each run (it never stays in ``sys.modules``).
``exercises`` here stands for ``transformer_lib.teaching.exercises``: reading a check from it
(``exercises.check_padding_mask``) executes ``transformer_lib`` anew from the folder this file
lies in, the package's core, ``exercises`` and the check's chapter module with what it imports
(not the whole library: see ``CHAPTERS`` in ``exercises/__init__.py``), with the notebook's
``transformer_lib`` entries of ``sys.modules`` set aside meanwhile and put back afterwards:
nothing a cell changed in ``transformer_lib`` reaches the copy.

Limits: grading runs in the student's process, and code written against the grader can
still cheat. This stops the replacements above, in ``transformer_lib`` and ``sys.modules``.
It trusts Python and its standard library, torch and numpy (a cell that rebinds
``runpy.run_module``, ``builtins.__import__`` or ``torch.allclose`` still cheats), the
search path (``sys.path``, a package's ``__path__``), and it cannot guard a check from the
student's function while the check runs it (the function could reach into the check's
frames). nbgrader's answer to these is hidden tests and reading the submissions.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PACKAGE = "transformer_lib"
EXERCISES = f"{PACKAGE}.teaching.exercises"


def _ours(name: str) -> bool:
    return name == PACKAGE or name.startswith(f"{PACKAGE}.")


def load_afresh(root: Path, name: str | None = None):
    """``transformer_lib.teaching.exercises`` executed anew from ``root``, the folder that holds
    ``transformer_lib``, or its attribute ``name`` (a check: imported with its chapter's
    module and what that imports); ``sys.modules`` ends as it began."""
    saved = {key: module for key, module in sys.modules.items() if _ours(key)}
    for key in saved:
        del sys.modules[key]
    try:
        spec = importlib.machinery.PathFinder.find_spec(PACKAGE, [str(root)])
        if spec is None:
            raise ImportError(f"{PACKAGE} is not in {root}")
        package = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = package
        spec.loader.exec_module(package)
        exercises = importlib.import_module(EXERCISES)
        return exercises if name is None else getattr(exercises, name)
    finally:
        for key in [key for key in sys.modules if _ours(key)]:
            del sys.modules[key]
        sys.modules.update(saved)


class Graded(ModuleType):
    """``transformer_lib.teaching.exercises`` for a graded cell: each public name read from it is
    loaded afresh (:func:`load_afresh`), once."""

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        value = load_afresh(ROOT, name)
        setattr(self, name, value)
        return value


ROOT = Path(__file__).resolve().parents[3]
exercises = Graded(EXERCISES, "The exercise checks, each loaded afresh when read.")
