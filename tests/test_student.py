"""make student: solutions become stubs, every output is cleared, and the student edition
runs top to bottom with one "not implemented yet" message per exercise and no traceback.
Both editions: the English notebooks and the Chinese ones (notebooks/zh_CN), whose messages
are in Chinese (COURSE_LANG=zh_CN)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import browser_support as bs
import nbformat
import pytest
from notebook_runs import execute

from transformer_lib import i18n
from transformer_lib.teaching.exercises._core import MESSAGE_WIDTH, NOT_IMPLEMENTED

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("nbgrader", reason="nbgrader is the `instructor` extra; `make` installs it")
sys.path.insert(0, str(ROOT / "tools"))
import make_student  # noqa: E402
import nbgrader_metadata  # noqa: E402

BEGIN, END = nbgrader_metadata.BEGIN, nbgrader_metadata.END
STUB = 'raise NotImplementedError("Exercise: write your solution here")'
STUB_ZH = 'raise NotImplementedError("练习：在这里写下你的解答")'  # the Chinese edition's
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ZH_EDITION = bs.NOTEBOOKS / "zh_CN"


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _stubbed(source: str, stub: str = STUB) -> str:
    """What the student edition must hold: each marked block replaced by the indented stub."""
    out, inside = [], False
    for line in source.split("\n"):
        if line.strip() == BEGIN:
            out.append(line[: len(line) - len(line.lstrip())] + stub)
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


def assert_is_student_edition(original: dict, student, stub: str = STUB) -> int:
    """Stubs where the markers were, no solution line left, no output; the rest unchanged."""
    assert len(student.cells) == len(original["cells"])
    assert "widgets" not in student.metadata
    exercises = 0
    for before, after in zip(original["cells"], student.cells):
        assert (after.cell_type, after.get("id")) == (before["cell_type"], before.get("id"))
        assert after.source == _stubbed(_source(before), stub)
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


def test_the_chinese_edition_gets_the_chinese_stub(tmp_path):
    """The language the notebook's first code cell chooses decides the stub's."""
    chinese = json.loads(json.dumps(SYNTHETIC))
    chinese["cells"][1]["source"] = [
        "from transformer_lib.i18n import set_language\n\n",
        'set_language("zh_CN")\n',
        "import torch",
    ]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "01_x.ipynb").write_text(json.dumps(chinese), encoding="utf-8")
    assert make_student.main(["--src", str(tmp_path / "src"), "--out", str(tmp_path / "out")]) == 0
    student = nbformat.read(tmp_path / "out" / "01_x.ipynb", as_version=4)
    assert assert_is_student_edition(chinese, student, STUB_ZH) == 1
    assert STUB_ZH in student.cells[2].source and "Exercise" not in student.cells[2].source


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
def editions(tmp_path_factory) -> dict[Path, Path]:
    """The student edition of each edition's folder: {notebooks/: ..., notebooks/zh_CN/: ...}."""
    built = {}
    for src in (bs.NOTEBOOKS, ZH_EDITION):
        built[src] = out = tmp_path_factory.mktemp(f"student_{src.name}")
        assert make_student.main(["--src", str(src), "--out", str(out)]) == 0
    return built


@pytest.mark.parametrize("path", bs.EDITION_PATHS, ids=bs.edition_id)
def test_the_course_builds_a_student_edition(editions, path):
    original = json.loads(path.read_text(encoding="utf-8"))
    student = nbformat.read(editions[path.parent] / path.name, as_version=4)
    stub = STUB_ZH if path.parent == ZH_EDITION else STUB
    assert assert_is_student_edition(original, student, stub) > 0, f"{path.name} has no exercise"


def _unwrapped(text: str) -> str:
    """`text` without whitespace: a message is shown broken into lines, at spaces or (in
    Chinese) between two characters."""
    return "".join(text.split())


def _not_implemented(check_cell) -> str:
    """What the check in `check_cell` says of a stub, in the course's language."""
    (name,) = re.search(r"exercises\.check_\w+\((\w+)\)$", check_cell.source.strip()).groups()
    return i18n._(NOT_IMPLEMENTED).format(name=f"`{name}`")


@pytest.mark.slow
# Every English notebook; of the Chinese edition, 04 alone (three exercises, seconds to run):
# its code is the English code, and only the messages' language differs.
@pytest.mark.parametrize(
    "path", bs.NOTEBOOK_PATHS + [ZH_EDITION / "04_masking.ipynb"], ids=bs.edition_id
)
def test_the_student_edition_runs_with_only_not_implemented_messages(editions, path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PREFER_ENV_PATH", "1")  # the venv's python3 kernel
    # The kernel inherits this process's environment: it speaks the edition's language, and
    # so does `_()` here.
    monkeypatch.setenv("COURSE_LANG", "zh_CN" if path.parent == ZH_EDITION else "en")
    edition = editions[path.parent]
    notebook = nbformat.read(edition / path.name, as_version=4)
    execute(
        notebook, f"{path.parent.name}/{path.name} (student edition)", edition, allow_errors=True
    )
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
        assert error.ename == "ExerciseFailed"
        assert error.evalue == _not_implemented(notebook.cells[index])
        # the message alone, in lines of at most MESSAGE_WIDTH columns: no traceback frames
        shown = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in error.traceback]
        assert _unwrapped("".join(shown)) == _unwrapped(f"ExerciseFailed: {error.evalue}"), shown
        assert max(map(i18n.display_width, shown)) <= MESSAGE_WIDTH, shown
        assert len(notebook.cells[index].outputs) == 1  # no ✓, nothing else
    assert "Traceback (most recent call last)" not in _outputs_text(notebook)
