"""What the nbgrader tests share: a student's answers and what the feedback shows.

tests/test_nbgrader.py grades submissions in a temporary course; tests/test_hub.py grades
them on a real JupyterHub. Both build the submissions and read the feedback the same way.
"""

from __future__ import annotations

import html
import re
import sys
import textwrap
from pathlib import Path

import nbformat
from notebook_runs import first_line

from transformer_lib import i18n
from transformer_lib.teaching.exercises._core import NOT_IMPLEMENTED

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import nbgrader_metadata  # noqa: E402

BEGIN, END = nbgrader_metadata.BEGIN, nbgrader_metadata.END
GRADED = "04_masking"  # the notebook autograded: three exercises, about 5 s to run
# The tests' limit (s) for one cell when nbgrader runs a notebook (the course's own is 600 s,
# tools/nbgrader_config.py, for notebook 07's training on a loaded hub): notebook 04's cells
# take seconds, so a cell still without a reply after 2 minutes is a stall, and fails fast.
GRADING_TIMEOUT_S = 120


def timed_out_cells(autograded: Path) -> list[str]:
    """The cells of the autograded notebooks under `autograded` that nbgrader stopped at its
    time limit (it records them as a CellTimeoutError and grades on), each named."""
    return [
        f"{path}: cell {index} ({first_line(cell)!r})"
        for path in sorted(autograded.rglob("*.ipynb"))
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells)
        for output in cell.get("outputs", [])
        if output.get("ename") == "CellTimeoutError"
    ]


def answer(source: str, body: str | None = None) -> str:
    """A student's finished cell: each solution block's body kept, or replaced by `body`."""
    lines, out, inside = source.split("\n"), [], False
    for line in lines:
        if line.strip() in (BEGIN, END):
            inside = line.strip() == BEGIN
            indent = line[: len(line) - len(line.lstrip())]
            if inside and body is not None:
                out.extend(textwrap.indent(body, indent).split("\n"))
        elif not inside or body is None:
            out.append(line)
    return "\n".join(out)


def not_implemented(notebook) -> list[str]:
    """What each check of `notebook` says of a stub, in the course's language."""
    checks = [c.source for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade")]
    names = [re.search(r"exercises\.check_\w+\((\w+)\)$", s.strip())[1] for s in checks]
    return [i18n._(NOT_IMPLEMENTED).format(name=f"`{name}`") for name in names]


def unwrapped(text: str) -> str:
    """`text` without whitespace: a message is shown broken into lines, at spaces or (in
    Chinese) between two characters."""
    return "".join(text.split())


def page_text(page: str) -> str:
    """The text of a feedback page: a message as the student saw it, broken into lines, the
    name in a coloured span."""
    return html.unescape(re.sub(r"<[^>]+>", " ", page))
