"""make student: solutions become stubs, every output is cleared, and the student edition
runs top to bottom with one "not implemented yet" message per exercise and no traceback."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from transformer_lib.exercises._core import MESSAGE_WIDTH

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("nbgrader", reason="nbgrader is the `instructor` extra; `make` installs it")
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402
import nbgrader_metadata  # noqa: E402

BEGIN, END = nbgrader_metadata.BEGIN, nbgrader_metadata.END
STUB = 'raise NotImplementedError("Exercise: write your solution here")'
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _stubbed(source: str) -> str:
    """What the student edition must hold: each marked block replaced by the indented stub."""
    out, inside = [], False
    for line in source.split("\n"):
        if line.strip() == BEGIN:
            out.append(line[: len(line) - len(line.lstrip())] + STUB)
        if line.strip() in (BEGIN, END):
            inside = line.strip() == BEGIN
        elif not inside:
            out.append(line)
    return "\n".join(out)


def _solution_lines(source: str) -> set[str]:
    """Lines of the solution blocks that the rest of the cell does not also contain."""
    inside, solution, rest = False, set(), set()
    for line in source.split("\n"):
        if line.strip() in (BEGIN, END):
            inside = line.strip() == BEGIN
        elif line.strip():
            (solution if inside else rest).add(line.strip())
    return solution - rest


def _outputs_text(notebook) -> str:
    return json.dumps([cell.get("outputs", []) for cell in notebook["cells"]], ensure_ascii=False)


def assert_is_student_edition(original: dict, student) -> int:
    """Stubs where the markers were, no solution line left, no output; the rest unchanged."""
    assert len(student.cells) == len(original["cells"])
    assert "widgets" not in student.metadata
    exercises = 0
    for before, after in zip(original["cells"], student.cells):
        assert (after.cell_type, after.get("id")) == (before["cell_type"], before.get("id"))
        assert after.source == _stubbed(_source(before))
        if after.cell_type == "code":
            assert after.outputs == [] and after.execution_count is None
        if BEGIN in _source(before):
            exercises += 1
            kept = {line.strip() for line in after.source.split("\n")}
            assert not kept & _solution_lines(_source(before)), after.source
            assert after.metadata["deletable"] is False
        if before["metadata"].get("nbgrader", {}).get("grade"):
            assert after.metadata["editable"] is False  # the check cell
    assert "✓" not in _outputs_text(student)
    return exercises


# -- a small notebook ------------------------------------------------------------------------


def _cell(kind: str, source: str, outputs=None) -> dict:
    cell = {"cell_type": kind, "id": f"c{abs(hash(source)) % 10**6}", "metadata": {}}
    cell["source"] = source.splitlines(keepends=True)
    if kind == "code":
        cell.update(execution_count=3 if outputs else None, outputs=outputs or [])
    return cell


PRINTED = [{"name": "stdout", "output_type": "stream", "text": ["✓ causal mask: q kᵀ\n"]}]
SYNTHETIC = nbgrader_metadata.with_metadata(
    {
        "cells": [
            _cell("markdown", "Write the body of `causal`; the next cell checks it."),
            _cell("code", "import torch\nfrom transformer_lib import exercises", PRINTED),
            _cell(
                "code",
                'def causal(T):\n    """(T, T) bool."""\n    ### BEGIN SOLUTION\n'
                "    ones = torch.ones(T, T, dtype=torch.bool)\n    return torch.tril(ones)\n"
                "    ### END SOLUTION\n\n\nprint('defined')",
                PRINTED,
            ),
            _cell("code", "exercises.check_causal_mask(causal)", PRINTED),
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}, "widgets": {}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
)


def test_a_student_edition_has_stubs_and_no_outputs(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "01_x.ipynb").write_text(json.dumps(SYNTHETIC), encoding="utf-8")
    assert make_student.main(["--src", str(tmp_path / "src"), "--out", str(tmp_path / "out")]) == 0
    student = nbformat.read(tmp_path / "out" / "01_x.ipynb", as_version=4)
    assert assert_is_student_edition(SYNTHETIC, student) == 1
    assert student.cells[2].source == (
        f'def causal(T):\n    """(T, T) bool."""\n    {STUB}\n\n\nprint(\'defined\')'
    )


def test_notebooks_without_up_to_date_metadata_are_refused(tmp_path, capsys):
    stale = json.loads(json.dumps(SYNTHETIC))
    del stale["cells"][3]["metadata"]["nbgrader"]
    (tmp_path / "02_stale.ipynb").write_text(json.dumps(stale), encoding="utf-8")
    assert make_student.main(["--src", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert "02_stale.ipynb" in capsys.readouterr().err and not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="--out must differ"):
        make_student.build(tmp_path, tmp_path)


# -- the course -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def edition(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    assert make_student.main(["--src", str(ROOT / "notebooks"), "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_course_builds_a_student_edition(edition, path):
    original = json.loads(path.read_text(encoding="utf-8"))
    student = nbformat.read(edition / path.name, as_version=4)
    assert assert_is_student_edition(original, student) > 0, f"{path.name} has no exercise"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_student_edition_runs_with_only_not_implemented_messages(edition, path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", "1")  # the venv's python3 kernel
    notebook = nbformat.read(edition / path.name, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        allow_errors=True,
        timeout=1800,  # a cell, generous: notebook 07 trains for ~30 s on a quiet 2-core CPU
        resources={"metadata": {"path": str(edition)}},
    )
    client.execute()
    checks = [
        i for i, c in enumerate(notebook.cells) if c.metadata.get("nbgrader", {}).get("grade")
    ]
    errors = [
        (index, output)
        for index, cell in enumerate(notebook.cells)
        for output in cell.get("outputs", [])
        if output.output_type == "error"
    ]
    assert [index for index, _ in errors] == checks, "one error per exercise, in its check cell"
    for index, error in errors:
        assert error.ename == "ExerciseFailed" and "is not implemented yet" in error.evalue
        # the message alone, in lines of at most MESSAGE_WIDTH: no traceback frames
        shown = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in error.traceback]
        assert " ".join(shown).split() == f"ExerciseFailed: {error.evalue}".split(), shown
        assert max(map(len, shown)) <= MESSAGE_WIDTH, shown
        assert len(notebook.cells[index].outputs) == 1  # no ✓, nothing else
    assert "Traceback (most recent call last)" not in _outputs_text(notebook)
