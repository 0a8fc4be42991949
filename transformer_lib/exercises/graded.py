"""The exercise checks loaded afresh from the library's files, for grading.

nbgrader grades a notebook by running it, the student's cells included, so a cell may have
replaced a check (``exercises.check_x = lambda *a: None``), the library's answer a check
compares with (``masks.padding_mask = ...``) or an entry of ``sys.modules``. A graded cell
therefore runs this file and gets checks of its own::

    import runpy

    exercises = runpy.run_module("transformer_lib.exercises.graded")["exercises"]
    exercises.check_padding_mask(padding_mask)

``runpy`` executes this file from disk on each run (it never stays in ``sys.modules``), and
the file executes every module of ``transformer_lib`` anew from the folder it lies in, with
the notebook's ``transformer_lib`` entries of ``sys.modules`` set aside meanwhile and put
back afterwards: nothing a cell changed in ``transformer_lib`` reaches the copy.

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


def _ours(name: str) -> bool:
    return name == PACKAGE or name.startswith(f"{PACKAGE}.")


def load_afresh(root: Path) -> ModuleType:
    """``transformer_lib.exercises`` executed anew from ``root``, the folder that holds
    ``transformer_lib``; ``sys.modules`` ends as it began."""
    saved = {name: module for name, module in sys.modules.items() if _ours(name)}
    for name in saved:
        del sys.modules[name]
    try:
        spec = importlib.machinery.PathFinder.find_spec(PACKAGE, [str(root)])
        if spec is None:
            raise ImportError(f"{PACKAGE} is not in {root}")
        package = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = package
        spec.loader.exec_module(package)
        return importlib.import_module(f"{PACKAGE}.exercises")
    finally:
        for name in [name for name in sys.modules if _ours(name)]:
            del sys.modules[name]
        sys.modules.update(saved)


exercises = load_afresh(Path(__file__).resolve().parents[2])
