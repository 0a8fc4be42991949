"""Build the student edition of the course: every solution replaced by a stub.

Usage: python tools/make_student.py [--src notebooks] [--out student]

The committed notebooks are the instructor edition. In a code cell, the lines from
``### BEGIN SOLUTION`` to ``### END SOLUTION`` (inclusive) become, at the same indentation,

    raise NotImplementedError("Exercise: write your solution here")

and the outputs of that cell are cleared; every other cell is copied unchanged.

Convention: a solution lives inside a function body, so the check that follows reports
"not implemented yet". A block at the top level of a cell that holds only ``def``s (and
imports) keeps each signature and docstring and stubs each body, which works the same
way; any other top-level block is stubbed with a warning, since the cell would then stop
before reaching its check.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = 'raise NotImplementedError("Exercise: write your solution here")'


def _text(source) -> str:
    return "".join(source) if isinstance(source, list) else source


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _stub_definitions(block: list[str], indent: str) -> list[str] | None:
    """Signatures and docstrings of a block made only of defs (and imports), bodies stubbed."""
    lines = [line[len(indent) :] if line.startswith(indent) else line.lstrip() for line in block]
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError:
        return None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom)
    defs = [node for node in tree.body if isinstance(node, kinds[:2])]
    if not defs or not all(isinstance(node, kinds) for node in tree.body):
        return None
    out: list[str] = []
    previous_end = None
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        if previous_end is not None:
            out.extend(lines[previous_end : start - 1])  # blank lines and comments between
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.extend(lines[start - 1 : node.end_lineno])
        else:
            first = node.body[0]
            if first.lineno == node.lineno:  # a one-line def: no room for a stub
                return None
            is_doc = (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and (isinstance(first.value.value, str))
            )
            out.extend(lines[start - 1 : first.end_lineno if is_doc else first.lineno - 1])
            out.append(" " * first.col_offset + STUB + "\n")
        previous_end = node.end_lineno
    return [indent + line if line.strip() else line for line in out]


def stub_source(source: str, where: str = "cell") -> tuple[str, int]:
    """``source`` with each solution block stubbed, and the number of blocks."""
    lines = source.splitlines(keepends=True)
    out: list[str] = []
    blocks, i = 0, 0
    while i < len(lines):
        if lines[i].strip() == END:
            raise ValueError(f"{where}: '{END}' without a '{BEGIN}' before it")
        if lines[i].strip() != BEGIN:
            out.append(lines[i])
            i += 1
            continue
        indent = _indent(lines[i])
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() in (BEGIN, END)), None)
        if end is None or lines[end].strip() != END:
            raise ValueError(f"{where}: '{BEGIN}' on line {i + 1} has no '{END}' after it")
        stub = _stub_definitions(lines[i + 1 : end], indent)
        if stub is None:
            if not indent:
                print(
                    f"warning: {where}: a solution at the top level of a cell; put it in a "
                    "function body so the check can report 'not implemented yet'",
                    file=sys.stderr,
                )
            stub = [indent + STUB + "\n"]
        if not lines[end].endswith("\n"):
            stub[-1] = stub[-1].rstrip("\n")  # the cell ended with the END line
        out.extend(stub)
        blocks += 1
        i = end + 1
    return "".join(out), blocks


def student_notebook(notebook: dict, name: str = "notebook") -> tuple[dict, int]:
    """A copy of ``notebook`` with solutions stubbed and those cells' outputs cleared."""
    notebook = json.loads(json.dumps(notebook))
    total = 0
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        source, blocks = stub_source(_text(cell["source"]), f"{name}, cell {index}")
        if blocks:
            total += blocks
            as_list = isinstance(cell["source"], list)
            cell["source"] = source.splitlines(keepends=True) if as_list else source
            cell["outputs"], cell["execution_count"] = [], None
    return notebook, total


def build(src: Path, out: Path) -> list[tuple[Path, int]]:
    """Write the student edition of every notebook in ``src`` to ``out``."""
    src, out = Path(src), Path(out)
    if out.resolve() == src.resolve():
        raise ValueError(f"--out must differ from --src; got {out} for both")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(src.glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        student, blocks = student_notebook(notebook, path.name)
        target = out / path.name
        # the layout nbformat and Jupyter write: indent 1, sorted keys, trailing newline
        text = json.dumps(student, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        target.write_text(text, encoding="utf-8")
        written.append((target, blocks))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--src",
        type=Path,
        default=Path("notebooks"),
        help="folder of instructor notebooks (default: notebooks)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("student"),
        help="folder for the student edition (default: student)",
    )
    args = parser.parse_args(argv)
    try:
        written = build(args.src, args.out)
    except ValueError as error:
        print(f"make_student: {error}", file=sys.stderr)
        return 1
    for target, blocks in written:
        print(f"{target}: {blocks} solution block(s) stubbed")
    if not written:
        print(f"make_student: no notebooks in {args.src}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
