"""make student: solutions become stubs, nothing else changes, and every check then says
"not implemented yet"."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import __future__  # noqa: E402

import ast  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from transformer_lib import exercises  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_spec = importlib.util.spec_from_file_location("make_student", ROOT / "tools" / "make_student.py")
make_student = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_student)


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _has_solution(cell) -> bool:
    return cell["cell_type"] == "code" and BEGIN in _source(cell)


def _outside_and_blocks(source: str) -> tuple[list[str], list[list[str]]]:
    """The text around the solution blocks (markers excluded) and each block's lines."""
    outside, blocks, current, block = [], [], [], None
    for line in source.splitlines(keepends=True):
        if line.strip() == BEGIN:
            outside.append("".join(current))
            current, block = [], []
        elif line.strip() == END:
            blocks.append(block)
            block = None
        elif block is not None:
            block.append(line)
        else:
            current.append(line)
    outside.append("".join(current))
    return outside, blocks


def assert_differs_only_in_solutions(original: dict, student: dict) -> int:
    """Cell by cell: identical outside solution blocks; each block is now a shorter stub."""
    assert student["metadata"] == original["metadata"]
    assert len(student["cells"]) == len(original["cells"])
    stubbed = 0
    for before, after in zip(original["cells"], student["cells"]):
        if not _has_solution(before):
            assert after == before
            continue
        assert after["outputs"] == [] and after["execution_count"] is None
        assert after["metadata"] == before["metadata"]
        outside, blocks = _outside_and_blocks(_source(before))
        text = _source(after)
        assert BEGIN not in text and END not in text
        assert text.startswith(outside[0]) and text.endswith(outside[-1].rstrip("\n"))
        position, pieces = len(outside[0]), []
        for segment in outside[1:-1]:
            found = text.index(segment, position) if segment else position
            pieces.append(text[position:found])
            position = found + len(segment)
        pieces.append(text[position : len(text) - len(outside[-1].rstrip("\n"))])
        for piece, block in zip(pieces, blocks):
            kept = [line for line in piece.splitlines() if line.strip()]
            assert any('raise NotImplementedError("Exercise' in line for line in kept), piece
            solution = {line.rstrip("\n") for line in block}
            assert all(line in solution or "NotImplementedError" in line for line in kept)
            assert len(kept) < len([line for line in block if line.strip()]) + 1
            stubbed += 1
    return stubbed


def _stub_functions(notebook: dict) -> dict[str, object]:
    """Each function that a stubbed cell defines, executed on its own."""
    functions = {}
    namespace = {"torch": torch, "nn": nn, "F": F, "math": math, "np": np}
    flags = __future__.annotations.compiler_flag
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code" or "NotImplementedError" not in _source(cell):
            continue
        for node in ast.parse(_source(cell)).body:
            if isinstance(node, ast.FunctionDef) and "NotImplementedError" in ast.unparse(node):
                node.decorator_list = []
                code = compile(ast.Module([node], type_ignores=[]), "<stub>", "exec", flags=flags)
                exec(code, namespace)
                functions[node.name] = namespace[node.name]
    return functions


def _check_calls(notebook: dict) -> list[tuple[str, str]]:
    """(check name, function name) for each `exercises.check_x(fn)` in the notebook."""
    calls = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        try:
            tree = ast.parse(_source(cell))
        except SyntaxError:  # cell magics
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name.startswith("check_") and isinstance(node.args[0], ast.Name):
                calls.append((name, node.args[0].id))
    return calls


# -- a synthetic notebook: the logic is covered even before any real notebook exists -----


def _cell(kind: str, source: str, outputs=None) -> dict:
    cell = {
        "cell_type": kind,
        "id": f"c{abs(hash(source)) % 10**6}",
        "metadata": {},
        "source": source.splitlines(keepends=True),
    }
    if kind == "code":
        cell["execution_count"] = 3 if outputs else None
        cell["outputs"] = outputs or []
    return cell


PRINTED = [{"name": "stdout", "output_type": "stream", "text": ["✓ causal mask\n"]}]
SYNTHETIC = {
    "cells": [
        _cell("markdown", "Write your code between\n### BEGIN SOLUTION\nand\n### END SOLUTION\n"),
        _cell("code", "import torch\nfrom transformer_lib import exercises"),
        _cell(
            "code",
            'def causal(T):\n    """(T, T) bool."""\n    ### BEGIN SOLUTION\n'
            "    ones = torch.ones(T, T, dtype=torch.bool)\n    return torch.tril(ones)\n"
            "    ### END SOLUTION\n",
            PRINTED,
        ),
        _cell("code", "exercises.check_causal_mask(causal)", PRINTED),
        _cell(
            "code",
            "### BEGIN SOLUTION\n@staticmethod\ndef split(x, n_heads):\n"
            '    """(B, L, D) -> (B, H, L, Dh)."""\n    B, L, D = x.shape\n'
            "    return x.view(B, L, n_heads, D // n_heads).transpose(1, 2)\n\n\n"
            "def merge(x):\n    B, H, L, Dh = x.shape\n"
            "    return x.transpose(1, 2).reshape(B, L, H * Dh)\n### END SOLUTION\n"
            "exercises.check_split_heads(split)\nexercises.check_merge_heads(merge)",
            PRINTED,
        ),
        _cell(
            "code",
            "def softmax(x, dim):\n    if x.numel() == 0:\n        ### BEGIN SOLUTION\n"
            "        return x\n        ### END SOLUTION\n    # the general case\n    ### BEGIN SOLUTION\n"
            "    e = (x - x.max(dim, keepdim=True).values).exp()\n"
            "    return e / e.sum(dim, keepdim=True)\n    ### END SOLUTION",
        ),
        _cell("code", "exercises.check_softmax(softmax)"),
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.fixture
def built(tmp_path):
    src = tmp_path / "notebooks"
    src.mkdir()
    (src / "01_synthetic.ipynb").write_text(json.dumps(SYNTHETIC, indent=1), encoding="utf-8")
    assert make_student.main(["--src", str(src), "--out", str(tmp_path / "student")]) == 0
    return json.loads((tmp_path / "student" / "01_synthetic.ipynb").read_text(encoding="utf-8"))


def test_student_edition_differs_only_in_solution_blocks(built):
    assert assert_differs_only_in_solutions(SYNTHETIC, built) == 4
    assert _source(built["cells"][2]) == (
        'def causal(T):\n    """(T, T) bool."""\n'
        '    raise NotImplementedError("Exercise: write your solution here")\n'
    )


def test_a_top_level_block_of_defs_keeps_signatures_and_docstrings(built):
    source = _source(built["cells"][4])
    assert (
        '@staticmethod\ndef split(x, n_heads):\n    """(B, L, D) -> (B, H, L, Dh)."""\n'
        "    raise NotImplementedError(" in source
    )
    assert "def merge(x):\n    raise NotImplementedError(" in source
    assert source.endswith("exercises.check_merge_heads(merge)")


def test_every_check_on_a_stub_says_not_implemented_yet(built):
    functions = _stub_functions(built)
    calls = _check_calls(built)
    assert sorted(calls) == sorted(
        [
            ("check_causal_mask", "causal"),
            ("check_split_heads", "split"),
            ("check_merge_heads", "merge"),
            ("check_softmax", "softmax"),
        ]
    )
    for check, name in calls:
        with pytest.raises(exercises.ExerciseFailed, match="not implemented yet"):
            getattr(exercises, check)(functions[name])


def test_the_instructor_solutions_pass_their_checks(capsys):
    namespace = {}
    for cell in SYNTHETIC["cells"]:
        if cell["cell_type"] == "code":
            exec(_source(cell), namespace)
    assert capsys.readouterr().out.count("✓") == 4


def test_unbalanced_markers_are_refused(tmp_path, capsys):
    broken = {
        **SYNTHETIC,
        "cells": [_cell("code", "def f():\n    ### BEGIN SOLUTION\n    return 1\n")],
    }
    (tmp_path / "bad.ipynb").write_text(json.dumps(broken), encoding="utf-8")
    assert make_student.main(["--src", str(tmp_path), "--out", str(tmp_path / "out")]) == 1
    assert "bad.ipynb, cell 0" in capsys.readouterr().err
    with pytest.raises(ValueError, match="without a"):
        make_student.stub_source("x = 1\n### END SOLUTION\n")
    with pytest.raises(ValueError, match="--out must differ"):
        make_student.build(tmp_path, tmp_path)


def test_a_top_level_statement_block_is_stubbed_with_a_warning(capsys):
    source, blocks = make_student.stub_source("### BEGIN SOLUTION\nmask = 1\n### END SOLUTION\n")
    assert blocks == 1 and source.startswith("raise NotImplementedError(")
    assert "function body" in capsys.readouterr().err


# -- the real course ------------------------------------------------------------------------


def _real_notebooks() -> list[Path]:
    paths = sorted((ROOT / "notebooks").glob("*.ipynb"))
    return [p for p in paths if BEGIN in p.read_text(encoding="utf-8")]


def test_the_course_builds_a_student_edition(tmp_path):
    paths = _real_notebooks()
    if not paths:
        pytest.skip("no notebook in notebooks/ has a '### BEGIN SOLUTION' block yet")
    written = make_student.build(ROOT / "notebooks", tmp_path)
    assert {p.name for p, _ in written} >= {p.name for p in paths}
    checked = 0
    for path in paths:
        original = json.loads(path.read_text(encoding="utf-8"))
        student = json.loads((tmp_path / path.name).read_text(encoding="utf-8"))
        assert assert_differs_only_in_solutions(original, student) > 0, path.name
        functions = _stub_functions(student)
        calls = [(c, f) for c, f in _check_calls(student) if f in functions]
        for check, name in calls:
            if not hasattr(exercises, check):
                continue
            with pytest.raises(exercises.ExerciseFailed, match="not implemented yet"):
                getattr(exercises, check)(functions[name])
            checked += 1
    assert checked > 0, "no `exercises.check_*(function)` call found in the notebooks"
