"""tools/slide_metadata.py: scaffolding moves off the slides, slide types follow the rules,
tall slides are split, and a second run changes nothing."""

import itertools
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import slide_metadata as sm  # noqa: E402

IDS = itertools.count()


def markdown(source: str) -> dict:
    return {"cell_type": "markdown", "id": f"m{next(IDS)}", "metadata": {}, "source": source}


def code(source: str) -> dict:
    cell = {"cell_type": "code", "execution_count": None, "id": f"c{next(IDS)}"}
    return cell | {"metadata": {}, "outputs": [], "source": source}


def notebook(*cells: dict) -> dict:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def kinds(nb: dict) -> list:
    return [c["metadata"].get("slideshow", {}).get("slide_type") for c in nb["cells"]]


def layers(nb: dict) -> list:
    return [c["metadata"].get(sm.DECK, {}).get("layer") for c in nb["cells"]]


COURSE = notebook(
    markdown("# Title\n\nWhat this notebook does."),
    code("import torch"),
    markdown("## A section\n\nSome text."),
    code(
        "# mirrors: transformer_lib.model.masks.causal_mask as my_mask\ndef my_mask(n):\n    pass"
    ),
    code("# NBVAL_IGNORE_OUTPUT\nw = make_widget()\ndisplay(w)\nassert set(w.controls) == {'a'}"),
    markdown("## Exercises\n\n**Exercise 1.** Write `double`."),
    code("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION"),
    code("exercises.check_double(double)"),
    markdown("Next: notebook 02."),
)


def test_scaffolding_moves_to_tags_metadata_and_a_skipped_cell():
    cells = sm.with_slides(COURSE)["cells"]
    assert cells[3]["metadata"]["mirrors"] == "transformer_lib.model.masks.causal_mask as my_mask"
    assert cells[3]["source"][0] == "def my_mask(n):\n"
    widget, checks = cells[4], cells[5]
    assert widget["metadata"]["tags"] == [sm.IGNORE_TAG]
    assert "".join(widget["source"]) == "w = make_widget()\ndisplay(w)"
    assert "".join(checks["source"]) == "assert set(w.controls) == {'a'}"
    assert checks["metadata"]["slideshow"] == {"slide_type": "skip"}
    solution = cells[7]
    assert solution["metadata"]["slideshow"] == {"slide_type": "skip"}


def test_headings_start_slides_and_the_rest_are_layers():
    nb = sm.with_slides(COURSE)
    # title, import | section, mirror, widget, (checks: skip) | exercises, (solution: skip),
    # check, closing words (the last slide's layers reach to the end; the last cell is plain)
    assert kinds(nb) == ["slide", None, "slide", None, None, "skip", "slide", "skip", None, None]
    assert layers(nb) == [None, "slide", None, "slide", "slide", None, None, None, "deck", None]
    assert nb["metadata"][sm.FONTS] == sm.DECK_CSS


def test_a_second_run_changes_nothing():
    once = sm.with_slides(COURSE)
    assert sm.dumps(sm.with_slides(once)) == sm.dumps(once)


def test_a_tall_slide_is_split_before_the_text_that_introduces_the_overflowing_cell():
    long_code = "\n".join(f"x{i} = {i}" for i in range(25))  # about 560 px each
    nb = sm.with_slides(
        notebook(
            markdown("## One section"),
            code(long_code),
            markdown("Then more."),
            code(long_code),
            markdown("## Closing"),
        )
    )
    assert kinds(nb) == ["slide", None, "slide", None, "slide"]
    assert layers(nb) == [None, "slide", None, "slide", None]


def test_a_broken_exercise_is_refused_with_the_cell_named():
    broken = notebook(markdown("# T"), code("### BEGIN SOLUTION\nx = 1\n### END SOLUTION"))
    with pytest.raises(sm.StructureError, match="cell 1"):
        sm.with_slides(broken)


def test_check_reports_and_writes_nothing(tmp_path, capsys):
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(COURSE), encoding="utf-8")
    assert sm.main(["--check", str(path)]) == 1
    assert json.loads(path.read_text(encoding="utf-8")) == COURSE
    assert sm.main([str(path)]) == 0
    assert sm.main(["--check", str(path)]) == 0
    assert "up to date" in capsys.readouterr().out
