"""Give every exercise its nbgrader cell metadata and its graded check, read from the markers.

Usage: python tools/nbgrader_metadata.py [--check] [NOTEBOOK ...]   (default: notebooks/*.ipynb)

An exercise is two code cells. The first holds the solution between ``### BEGIN SOLUTION``
and ``### END SOLUTION``, inside a function body: it becomes an nbgrader *solution cell*.
The next code cell (Markdown may come between) is its check, a call
``exercises.check_x(function)``: it becomes an *autograded test cell* worth one point,
locked so that students cannot change it, and the tool puts the two lines of
``GRADED_LOAD`` before the call, which load the checks afresh from the library's files
(``transformer_lib/teaching/exercises/graded.py``): a check that a student's cell replaced is not
the one that grades. The solution cell's ``grade_id`` is the name of the function (or
class) the check is given, and the check cell's is ``test_`` plus that name. Every other
cell loses any nbgrader metadata it had.

Running it twice changes nothing; a notebook is rewritten only if that changes its
metadata or a check cell.
A notebook whose exercises break the convention (a solution at the top level of a cell, no
check cell after a solution, a marker in a Markdown cell, ...) is refused with the
notebook and the cell named, and nothing is written. ``--check`` writes nothing and exits
with 1 if a notebook would change.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import dataclass
from pathlib import Path

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
GRADED_LOAD = (  # the checks, loaded afresh: see transformer_lib/teaching/exercises/graded.py
    "import runpy\n"
    "\n"
    'exercises = runpy.run_module("transformer_lib.teaching.exercises.graded")["exercises"]\n'
)
SCHEMA_VERSION = 3  # nbgrader 0.9's cell metadata schema
POINTS = 1


class StructureError(ValueError):
    """An exercise that does not follow the course's convention."""


@dataclass(frozen=True)
class Exercise:
    solution: int  # index of the solution cell
    check: int  # index of the check cell: the next code cell
    grade_id: str  # the graded function's name


def solution_metadata(grade_id: str) -> dict:
    return {
        "grade": False,
        "grade_id": grade_id,
        "locked": False,
        "schema_version": SCHEMA_VERSION,
        "solution": True,
        "task": False,
    }


def check_metadata(grade_id: str) -> dict:
    return {
        "grade": True,
        "grade_id": f"test_{grade_id}",
        "locked": True,
        "points": POINTS,
        "schema_version": SCHEMA_VERSION,
        "solution": False,
        "task": False,
    }


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _where(name: str, cells: list[dict], index: int) -> str:
    first = next((line for line in _source(cells[index]).splitlines() if line.strip()), "")
    return f"{name}, cell {index} (id {cells[index].get('id', '?')}: {first.strip()[:50]!r})"


def _marker_lines(source: str, where: str) -> list[int]:
    """1-based line numbers of the BEGIN markers; the markers must pair up, unnested."""
    begins, open_at = [], None
    for number, line in enumerate(source.splitlines(), start=1):
        marker = line.strip()
        if BEGIN not in line and END not in line:
            continue
        if marker not in (BEGIN, END):
            raise StructureError(
                f"{where}: line {number} mentions a marker; put it on a line alone"
            )
        if (marker == BEGIN) == (open_at is not None):
            raise StructureError(f"{where}: line {number}: '{marker}' out of order")
        open_at = number if marker == BEGIN else None
        if marker == BEGIN:
            begins.append(number)
    if open_at is not None:
        raise StructureError(f"{where}: '{BEGIN}' on line {open_at} has no '{END}' after it")
    return begins


def _graded_names(tree: ast.Module, begins: list[int], where: str) -> list[str]:
    """The top-level function or class that holds each solution block."""
    names = []
    for line in begins:
        holders = [node for node in tree.body if node.lineno < line <= node.end_lineno]
        inner = [
            node
            for holder in holders
            for node in ast.walk(holder)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.lineno < line <= node.end_lineno
        ]
        if not inner:
            raise StructureError(
                f"{where}: the solution on line {line} is not inside a function body; "
                "put it in one, so that the check can report 'not implemented yet'"
            )
        name = getattr(holders[0], "name", None)
        if name is None:
            raise StructureError(f"{where}: the solution on line {line} is not in a def or class")
        names.append(name)
    return names


def _check_call(source: str, where: str) -> ast.Expr:
    """The statement ``exercises.check_x(...)`` of a check cell: alone, or after the lines of
    ``GRADED_LOAD``."""
    try:
        body = ast.parse(source).body
    except SyntaxError as error:
        raise StructureError(f"{where}: not valid Python ({error.msg})") from None
    load = [ast.dump(node) for node in ast.parse(GRADED_LOAD).body]
    if [ast.dump(node) for node in body[: len(load)]] == load:
        body = body[len(load) :]
    call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Expr) else None
    func = getattr(call, "func", None)
    if not (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == "exercises"
        and func.attr.startswith("check_")
    ):
        raise StructureError(
            f"{where}: the cell after a solution must be its check, a single call "
            "`exercises.check_...(function)`"
        )
    return body[0]


def graded_source(source: str) -> str:
    """A check cell's source as it must be: ``GRADED_LOAD``, then its call."""
    statement = _check_call(source, "check cell")
    return GRADED_LOAD + ast.get_source_segment(source, statement)


def find_exercises(notebook: dict, name: str = "notebook") -> list[Exercise]:
    """Every (solution cell, check cell) pair, validated; StructureError names the cell."""
    cells, found = notebook["cells"], []
    for index, cell in enumerate(cells):
        where = _where(name, cells, index)
        source = _source(cell)
        if cell["cell_type"] != "code":
            if BEGIN in source or END in source:
                raise StructureError(f"{where}: a solution marker outside a code cell")
            continue
        begins = _marker_lines(source, where)
        if not begins:
            continue
        try:
            tree = ast.parse(source)
        except SyntaxError as error:
            raise StructureError(f"{where}: not valid Python ({error.msg})") from None
        holders = set(_graded_names(tree, begins, where))
        check = next(
            (i for i in range(index + 1, len(cells)) if cells[i]["cell_type"] == "code"), None
        )
        if check is None:
            raise StructureError(f"{where}: no check cell after this solution")
        call = _check_call(_source(cells[check]), _where(name, cells, check)).value
        graded = call.args[0].id if call.args and isinstance(call.args[0], ast.Name) else None
        if graded not in holders:
            if graded is not None or len(holders) != 1:
                raise StructureError(
                    f"{where}: the check after it grades {graded or 'something'}, but the "
                    f"solution is in {', '.join(sorted(holders))}"
                )
            (graded,) = holders
        if any(exercise.grade_id == graded for exercise in found):
            raise StructureError(f"{where}: a second exercise that grades {graded}")
        found.append(Exercise(index, check, graded))
    return found


def with_metadata(notebook: dict, name: str = "notebook") -> dict:
    """A copy of ``notebook`` whose nbgrader metadata is exactly that of its exercises, and
    whose check cells load the checks afresh (``GRADED_LOAD``)."""
    notebook = json.loads(json.dumps(notebook))
    exercises = find_exercises(notebook, name)
    for cell in notebook["cells"]:
        cell["metadata"].pop("nbgrader", None)
    for exercise in exercises:
        cells = notebook["cells"]
        cells[exercise.solution]["metadata"]["nbgrader"] = solution_metadata(exercise.grade_id)
        check = cells[exercise.check]
        check["metadata"]["nbgrader"] = check_metadata(exercise.grade_id)
        graded = graded_source(_source(check))
        if _source(check) != graded:
            check["source"] = graded.splitlines(keepends=True)
    return notebook


def dumps(notebook: dict) -> str:
    """The layout nbformat and Jupyter write: indent 1, sorted keys, a trailing newline."""
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 on a change")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(Path("notebooks").glob("*.ipynb"))
    return update_notebooks(paths, with_metadata, args.check, "nbgrader_metadata")


def update_notebooks(paths: list[Path], transform, check: bool, tool: str) -> int:
    """Write ``transform(notebook, name)`` over each notebook that it changes (with
    ``check``: write nothing, exit status 1 if any would change); print each one's state."""
    updates = {}
    try:
        for path in paths:
            text = path.read_text(encoding="utf-8")
            new = dumps(transform(json.loads(text), path.name))
            if new != text:
                updates[path] = new
    except StructureError as error:
        print(f"{tool}: {error}", file=sys.stderr)
        return 1
    for path in paths:
        state = "out of date" if check else "updated"
        print(f"{path}: {state if path in updates else 'up to date'}")
        if path in updates and not check:
            path.write_text(updates[path], encoding="utf-8")
    return 1 if check and updates else 0


if __name__ == "__main__":
    sys.exit(main())
