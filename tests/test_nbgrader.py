"""nbgrader: the committed notebooks carry its cell metadata, and a course grades them.

The end-to-end test runs nbgrader's command line on a temporary course with its default
SQLite database: generate_assignment for every notebook, then autograde, feedback and export
for three submissions of notebook 04 (see `test_autograde_...` for why only that one). The
Chinese edition (notebooks/zh_CN) carries the same metadata, and its notebook 04 grades the
same in a course of its own, with the feedback in Chinese. A submission whose cells replace
the checks gets no point: graded cells load the checks afresh.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import browser_support as bs
import nbformat
import pytest
from nbgrader_support import (
    BEGIN,
    GRADED,
    GRADING_TIMEOUT_S,
    answer,
    not_implemented,
    page_text,
    timed_out_cells,
    unwrapped,
)

from transformer_lib import i18n
from transformer_lib.teaching import exercises

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
pytest.importorskip("nbgrader", reason="nbgrader is the `instructor` extra; `make` installs it")
sys.path.insert(0, str(TOOLS))
import make_student  # noqa: E402
import nbgrader_metadata  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ZH_EDITION = ROOT / "notebooks" / "zh_CN"
COURSE_SETTINGS = """
c.CourseDirectory.root = {root!r}
c.CourseDirectory.course_id = "transformer-course"
"""


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


# -- the committed notebooks --------------------------------------------------------------


@pytest.mark.parametrize("path", bs.EDITION_PATHS, ids=bs.edition_id)
def test_every_exercise_carries_consistent_nbgrader_metadata(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    cells = notebook["cells"]
    meta = [cell["metadata"].get("nbgrader") for cell in cells]
    for index, cell in enumerate(cells):
        has_marker = cell["cell_type"] == "code" and BEGIN in _source(cell)
        is_solution = bool(meta[index] and meta[index]["solution"])
        assert has_marker == is_solution, f"cell {index}: markers and solution metadata disagree"
    solutions = [i for i, m in enumerate(meta) if m and m["solution"]]
    checks = [
        next(j for j in range(i + 1, len(cells)) if cells[j]["cell_type"] == "code")
        for i in solutions
    ]
    assert [i for i, m in enumerate(meta) if m] == sorted(solutions + checks), (
        "stray nbgrader cells"
    )
    for i, j in zip(solutions, checks):
        assert meta[i] == nbgrader_metadata.solution_metadata(meta[i]["grade_id"])
        assert meta[j] == nbgrader_metadata.check_metadata(meta[i]["grade_id"])
        assert _source(cells[j]).startswith(nbgrader_metadata.GRADED_LOAD), f"cell {j}"
    ids = [m["grade_id"] for m in meta if m]
    assert len(ids) == len(set(ids)), f"grade_ids repeat: {ids}"
    assert all(m["schema_version"] == 3 for m in meta if m)
    # Compared as data, as make_student does: the tool's --check also compares the file's
    # layout, and the Chinese files are written by tools/i18n_notebooks.py, not by the tool
    # (the English files' layout: test_slides.py, test_slide_metadata_is_up_to_date).
    expected = nbgrader_metadata.with_metadata(notebook, path.name)
    assert expected == notebook, "run tools/nbgrader_metadata.py"


# -- the metadata tool, on small notebooks --------------------------------------------------


def _cell(kind: str, source: str, **metadata) -> dict:
    cell = {"cell_type": kind, "id": f"c{abs(hash(source)) % 10**6}", "metadata": metadata}
    cell["source"] = source.splitlines(keepends=True)
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


SOLUTION = "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
CHECK = "exercises.check_double(double)"


def _notebook(*cells) -> dict:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_the_tool_marks_solution_and_check_cells_and_is_idempotent(tmp_path, capsys):
    stale = {"nbgrader": nbgrader_metadata.check_metadata("old")}
    notebook = _notebook(
        _cell("code", SOLUTION),
        _cell("markdown", "The check:"),
        _cell("code", CHECK),
        _cell("code", "print(1)", **stale),
    )
    path = tmp_path / "01_x.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    assert nbgrader_metadata.main([str(path)]) == 0
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert cells[0]["metadata"]["nbgrader"] == nbgrader_metadata.solution_metadata("double")
    assert cells[2]["metadata"]["nbgrader"]["grade_id"] == "test_double"
    assert _source(cells[2]) == nbgrader_metadata.GRADED_LOAD + CHECK  # the checks afresh
    assert (
        cells[2]["metadata"]["nbgrader"]["points"] == 1 and "nbgrader" not in cells[3]["metadata"]
    )
    text = path.read_text(encoding="utf-8")
    assert nbgrader_metadata.main([str(path)]) == 0 and path.read_text(encoding="utf-8") == text
    assert nbgrader_metadata.main(["--check", str(path)]) == 0
    assert "up to date" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ([SOLUTION], "no check cell after"),
        ([SOLUTION, "assert double(2) == 4"], "single call `exercises.check_"),
        ([SOLUTION, CHECK + "\nprint('done')"], "single call `exercises.check_"),
        ([SOLUTION, nbgrader_metadata.GRADED_LOAD + "print(1)"], "single call `exercises.check_"),
        (["### BEGIN SOLUTION\ny = 2\n### END SOLUTION\n", CHECK], "not inside a function body"),
        (["def f():\n    ### BEGIN SOLUTION\n    return 1\n", CHECK], "has no '### END SOLUTION'"),
        ([SOLUTION, "exercises.check_double(triple)"], "grades triple"),
        ([SOLUTION, CHECK, SOLUTION, CHECK], "a second exercise that grades double"),
        (["x = 1  # ### BEGIN SOLUTION"], "put it on a line alone"),
    ],
)
def test_the_tool_refuses_a_broken_exercise_naming_the_cell(tmp_path, capsys, cells, message):
    notebook = _notebook(_cell("markdown", "# Title"), *[_cell("code", s) for s in cells])
    path = tmp_path / "03_broken.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    assert nbgrader_metadata.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "03_broken.ipynb, cell " in err and message in err
    assert path.read_text(encoding="utf-8") == before


def test_the_tool_refuses_a_marker_in_markdown():
    notebook = _notebook(_cell("markdown", "Write between `### BEGIN SOLUTION` and the end."))
    with pytest.raises(nbgrader_metadata.StructureError, match="x.ipynb, cell 0 .* outside a code"):
        nbgrader_metadata.with_metadata(notebook, "x.ipynb")


# -- end to end: an nbgrader course -------------------------------------------------------


# nbgrader runs `alembic` from PATH, as in an activated environment
PATH = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])


def _nbgrader(root: Path, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "JUPYTER_PREFER_ENV_PATH": "1", "PATH": PATH},
        timeout=300,  # a stalled cell fails at GRADING_TIMEOUT_S well before this
    )
    assert result.returncode == 0, f"nbgrader {' '.join(args)}:\n{result.stdout}{result.stderr}"
    return result.stdout + result.stderr


def _exercise(notebook, check: str) -> tuple[int, ast.FunctionDef]:
    """The solution cell whose check is `check`, and the function it defines."""
    cells = notebook.cells
    for index, cell in enumerate(cells):
        if cell.metadata.get("nbgrader", {}).get("solution"):
            following = next(c for c in cells[index + 1 :] if c.cell_type == "code")
            if f"exercises.{check}(" in following.source:
                tree = ast.parse(cell.source)
                return index, next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    raise AssertionError(f"no exercise checked by {check}")


def _new_course(root: Path, notebooks: list[Path]) -> Path:
    """A course in `root` whose source/ holds each of `notebooks` as its own assignment, all
    generated."""
    config = (TOOLS / "nbgrader_config.py").read_text(encoding="utf-8")
    settings = config + COURSE_SETTINGS.format(root=str(root))
    settings += f"c.Execute.timeout = {GRADING_TIMEOUT_S}\n"
    (root / "nbgrader_config.py").write_text(settings)
    for path in notebooks:
        (root / "source" / path.stem).mkdir(parents=True)
        shutil.copy(path, root / "source" / path.stem / path.name)
    _nbgrader(root, "generate_assignment", "*")  # every assignment in source/, in one run
    return root


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course of every English notebook."""
    return _new_course(tmp_path_factory.mktemp("course"), NOTEBOOKS)


@pytest.fixture(scope="module")
def zh_course(tmp_path_factory):
    """A course of the Chinese edition's notebook 04 alone: the one autograded."""
    return _new_course(tmp_path_factory.mktemp("course_zh_CN"), [ZH_EDITION / f"{GRADED}.ipynb"])


@pytest.mark.slow
def test_generate_assignment_hands_out_what_make_student_writes(course, tmp_path):
    student = tmp_path / "student"
    make_student.build(ROOT / "notebooks", student)
    for path in NOTEBOOKS:
        released = nbformat.read(course / "release" / path.stem / path.name, as_version=4)
        ours = nbformat.read(student / path.name, as_version=4)
        assert ours.cells == released.cells, path.name
        assert all(not cell.get("outputs") for cell in released.cells)


def _grade_three_submissions(course: Path, edition: Path, lang: str, monkeypatch) -> None:
    """Autograde `edition`'s notebook 04 as three students submit it, under COURSE_LANG=`lang`."""
    # _nbgrader hands this process's environment on: autograde's kernel speaks `lang`, and
    # so does `_()` here, which gives the messages the feedback must show.
    monkeypatch.setenv("COURSE_LANG", lang)
    name = f"{GRADED}.ipynb"
    instructor = nbformat.read(edition / name, as_version=4)
    wrong = nbformat.read(edition / name, as_version=4)
    index, function = _exercise(wrong, "check_causal_mask")
    (size,) = [arg.arg for arg in function.args.args]
    mistake = f"positions = torch.arange({size})\nreturn positions[None, :] > positions[:, None]"
    for position, cell in enumerate(wrong.cells):
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = answer(cell.source, mistake if position == index else None)
    submissions = {
        "instructor": instructor,
        "untouched": nbformat.read(course / "release" / GRADED / name, as_version=4),
        "wrong": wrong,
    }
    assert _graded(course, submissions) == {"instructor": 3.0, "untouched": 0.0, "wrong": 2.0}

    # the feedback names the mistake with the check's own hint, in the course's language
    namespace = {"torch": __import__("torch")}
    exec(f"def {function.name}({size}):\n" + textwrap.indent(mistake, "    "), namespace)
    with pytest.raises(exercises.ExerciseFailed) as failed:
        exercises.check_causal_mask(namespace[function.name])
    hints = [i18n._(m.hint) for m in exercises.check_causal_mask.mistakes]
    assert any(hint in str(failed.value) for hint in hints), str(failed.value)
    assert i18n.has_cjk(str(failed.value)) == (lang == "zh_CN"), str(failed.value)
    assert unwrapped(str(failed.value)) in unwrapped(_feedback(course, "wrong"))
    shown = _feedback(course, "untouched")
    stubs = not_implemented(submissions["untouched"])
    assert len(stubs) == 3 and all(unwrapped(stub) in unwrapped(shown) for stub in stubs)
    assert "Traceback (most recent call last)" not in shown


def _graded(course: Path, submissions: dict) -> dict[str, float]:
    """Each notebook of `submissions` submitted as its student's notebook 04, autograded,
    with feedback, and exported: each student's points out of 3."""
    for student, notebook in submissions.items():
        folder = course / "submitted" / student / GRADED
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{GRADED}.ipynb")
    _nbgrader(course, "autograde", GRADED)
    stopped = timed_out_cells(course / "autograded")
    assert not stopped, f"nbgrader stopped these cells at its time limit: {stopped}"
    _nbgrader(course, "generate_feedback", GRADED)
    _nbgrader(course, "export")
    with open(course / "grades.csv", newline="") as f:
        rows = [row for row in csv.DictReader(f) if row["assignment"] == GRADED]
    assert {float(row["max_score"]) for row in rows} == {3.0}
    return {row["student_id"]: float(row["raw_score"]) for row in rows}


def _feedback(course: Path, student: str) -> str:
    """The text of `student`'s feedback page."""
    return page_text((course / "feedback" / student / GRADED / f"{GRADED}.html").read_text())


@pytest.mark.slow
def test_autograde_feedback_and_export(course, monkeypatch):
    """Three submissions of notebook 04, autograded: full marks, zero, and all but one.

    Autograding runs each notebook top to bottom in a kernel; 04 has three exercises and runs
    in seconds, while 07 trains for minutes. Every notebook's checks report the same way, and
    test_student.py runs every student notebook.
    """
    _grade_three_submissions(course, ROOT / "notebooks", "en", monkeypatch)


@pytest.mark.slow
def test_the_chinese_edition_autogrades_with_feedback_in_chinese(zh_course, monkeypatch):
    """The same three submissions of the Chinese notebook 04, autograded by a kernel with
    COURSE_LANG=zh_CN: the same points, and the checks' messages in Chinese."""
    _grade_three_submissions(zh_course, ZH_EDITION, "zh_CN", monkeypatch)


# Lines in a student's solution cell that make a stub pass a check the notebook can reach
# (tests/test_exercises_graded.py shows such cheats working there).
CHEATS = {
    "check_causal_mask": "import sys\n\nimport transformer_lib.teaching.exercises\n\n"
    'sys.modules["transformer_lib.teaching.exercises"].check_causal_mask = lambda *a, **k: None',
    "check_padding_mask": "import transformer_lib.teaching.exercises as E\n\n"
    "E.check_padding_mask = lambda *a, **k: None",
    "check_target_mask": "import types\n\n"
    "exercises = types.SimpleNamespace(check_target_mask=lambda *a, **k: None)",
}


@pytest.mark.slow
def test_autograde_gives_no_point_for_a_check_that_a_students_cell_replaced(tmp_path):
    """Notebook 04 with its check cells as nbgrader_metadata.py writes them, submitted with a
    stub and a line replacing the check in each solution cell: no point, and the feedback
    shows what the checks loaded afresh said of each stub."""
    source = tmp_path / "src" / f"{GRADED}.ipynb"
    source.parent.mkdir()
    (tmp_path / "course").mkdir()
    notebook = json.loads((ROOT / "notebooks" / source.name).read_text(encoding="utf-8"))
    source.write_text(nbgrader_metadata.dumps(nbgrader_metadata.with_metadata(notebook)), "utf-8")
    course = _new_course(tmp_path / "course", [source])
    released = nbformat.read(course / "release" / GRADED / source.name, as_version=4)
    cheater = nbformat.read(course / "release" / GRADED / source.name, as_version=4)
    for check, cheat in CHEATS.items():
        index, _function = _exercise(cheater, check)
        cheater.cells[index].source += "\n\n\n" + cheat
    submissions = {"instructor": nbformat.read(source, as_version=4), "cheater": cheater}
    assert _graded(course, submissions) == {"instructor": 3.0, "cheater": 0.0}
    stubs = not_implemented(released)
    shown = _feedback(course, "cheater")
    assert len(stubs) == 3 and all(unwrapped(stub) in unwrapped(shown) for stub in stubs)


def test_a_cell_nbgrader_stopped_at_its_time_limit_is_named(tmp_path):
    """nbgrader records a cell that reached its limit and grades on; the tests name it."""
    stopped = nbformat.v4.new_code_cell("import time\ntime.sleep(3600)")
    stopped.outputs = [
        nbformat.v4.new_output("error", ename="CellTimeoutError", evalue="", traceback=[])
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), stopped])
    path = tmp_path / "alice" / GRADED / f"{GRADED}.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, path)
    assert timed_out_cells(tmp_path) == [f"{path}: cell 1 ('import time')"]
    stopped.outputs = []
    nbformat.write(notebook, path)
    assert timed_out_cells(tmp_path) == []
