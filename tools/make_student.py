"""Build the student edition of the course with nbgrader's own preprocessors.

Usage: python tools/make_student.py [--src notebooks] [--out student]

The committed notebooks are the instructor edition. Each one goes through the steps that
``nbgrader generate_assignment`` applies, without an nbgrader course or its database:

- ClearSolutions: each block from ``### BEGIN SOLUTION`` to ``### END SOLUTION`` becomes
  ``raise NotImplementedError("Exercise: write your solution here")`` at the same indent
  (in the Chinese edition, ``raise NotImplementedError("练习：在这里写下你的解答")``: the
  language its first code cell chooses with ``set_language``), so the check below it
  reports "not implemented yet";
- ClearOutput: every output and execution count is cleared, and the saved widget state
  goes too, so nothing of the instructor's run (a check's ✓ line that spells the answer
  out, a figure drawn from the solution) is handed out;
- LockCells: the check cells become read-only and, with the solution cells, undeletable;
- ComputeChecksums and CheckCellMetadata: nbgrader's checksums and its metadata check.

The settings (the stub) come from ``tools/nbgrader_config.py``, the file an nbgrader course
starts from, so both ways hand out the same notebooks. The exercises' nbgrader cell metadata
must be up to date: ``python tools/nbgrader_metadata.py`` writes it from the markers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

import nbformat
from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearMarkScheme,
    ClearOutput,
    ClearSolutions,
    ComputeChecksums,
    LockCells,
)
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nbgrader_metadata  # noqa: E402 (the sibling tool)

TOOLS = Path(__file__).resolve().parent
# generate_assignment's order, less the steps that need a course: headers, the database
PREPROCESSORS = (
    LockCells,
    ClearSolutions,
    ClearOutput,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearMarkScheme,
    ComputeChecksums,
    CheckCellMetadata,
)


def course_config(language: str = "en") -> Config:
    """The course's nbgrader settings for an edition in ``language``, read from
    tools/nbgrader_config.py (which reads the language from COURSE_LANG)."""
    saved = os.environ.get("COURSE_LANG")
    os.environ["COURSE_LANG"] = language
    try:
        return PyFileConfigLoader("nbgrader_config.py", path=str(TOOLS)).load_config()
    finally:
        if saved is None:
            del os.environ["COURSE_LANG"]
        else:
            os.environ["COURSE_LANG"] = saved


_LANGUAGE_LINE = re.compile(r'^set_language\("(\w+)"\)', re.MULTILINE)


def edition_language(notebook: nbformat.NotebookNode) -> str:
    """The language ``notebook``'s first code cell chooses (``set_language("zh_CN")``), "en"
    where it chooses none."""
    first = next((cell for cell in notebook.cells if cell.cell_type == "code"), None)
    chosen = _LANGUAGE_LINE.search(first.source) if first is not None else None
    return chosen[1] if chosen else "en"


def student_notebook(notebook: nbformat.NotebookNode, name: str = "notebook"):
    """The student edition of one instructor notebook (a new NotebookNode)."""
    notebook = nbformat.from_dict(json.loads(json.dumps(notebook)))
    expected = nbgrader_metadata.with_metadata(notebook, name)
    if expected != notebook:
        raise ValueError(
            f"{name}: its nbgrader cell metadata is missing or out of date; "
            "run `python tools/nbgrader_metadata.py` first"
        )
    config, resources = course_config(edition_language(notebook)), {}
    for preprocessor in PREPROCESSORS:
        try:
            notebook, resources = preprocessor(config=config).preprocess(notebook, resources)
        except Exception as error:  # nbgrader raises RuntimeError or its ValidationError
            raise ValueError(f"{name}: nbgrader's {preprocessor.__name__}: {error}") from error
    notebook.metadata.pop("widgets", None)  # widget state saved by the instructor's run
    return notebook


def build(src: Path, out: Path) -> list[Path]:
    """Write the student edition of every notebook in ``src`` to ``out``."""
    src, out = Path(src), Path(out)
    if out.resolve() == src.resolve():
        raise ValueError(f"--out must differ from --src; got {out} for both")
    paths = sorted(src.glob("*.ipynb"))
    students = [student_notebook(nbformat.read(path, as_version=4), path.name) for path in paths]
    out.mkdir(parents=True, exist_ok=True)
    for path, student in zip(paths, students):
        nbformat.write(student, out / path.name)
    return [out / path.name for path in paths]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path("notebooks"), help="default: notebooks")
    parser.add_argument("--out", type=Path, default=Path("student"), help="default: student")
    args = parser.parse_args(argv)
    try:
        written = build(args.src, args.out)
    except (ValueError, nbgrader_metadata.StructureError) as error:
        print(f"make_student: {error}", file=sys.stderr)
        return 1
    for target in written:
        notebook = nbformat.read(target, as_version=4)
        count = sum(
            "nbgrader" in cell.metadata and cell.metadata.nbgrader["solution"]
            for cell in notebook.cells
        )
        print(f"{target}: {count} exercise(s), outputs cleared")
    if not written:
        print(f"make_student: no notebooks in {args.src}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
