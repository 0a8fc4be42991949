"""Every notebook is a deck that jupyterlab-slideshow presents well: its slide metadata is
what tools/slide_metadata.py derives from its cells, and no test scaffolding is projected
(no browser needed; tests/test_browser.py walks the decks in a real browser). The structural
checks cover both editions, the English notebooks and the Chinese ones in notebooks/zh_CN."""

import json
import sys

import browser_support as bs
import pytest

sys.path.insert(0, str(bs.REPO / "tools"))
import slide_metadata as sm  # noqa: E402
from nbgrader_metadata import dumps, find_exercises  # noqa: E402

NOTEBOOK_PATHS = bs.NOTEBOOK_PATHS
IDS = [p.stem for p in NOTEBOOK_PATHS]
EDITION_PATHS = bs.EDITION_PATHS


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _kind(cell):
    return cell["metadata"].get("slideshow", {}).get("slide_type")


# English only: a Chinese notebook's slide metadata is recomputed for its own text by the
# build, and tests/test_i18n.py checks that each one is exactly what the build makes.
@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=IDS)
def test_slide_metadata_is_up_to_date(path):
    text = path.read_text(encoding="utf-8")
    assert dumps(sm.with_slides(json.loads(text), path.name)) == text, (
        f"{path.name}: slide metadata out of date: run `python tools/slide_metadata.py`"
    )


@pytest.mark.parametrize("path", EDITION_PATHS, ids=bs.edition_id)
def test_slide_types_are_ones_deck_mode_shows(path):
    # jupyterlab-slideshow never shows a cell whose slide_type it does not know, such as
    # the classic "-": leave the key out (JupyterLab 4's "-") to continue a slide.
    kinds = [_kind(c) for c in _cells(path)]
    unknown = {k for k in kinds if k not in bs.DECK_SLIDE_TYPES}
    assert not unknown, f"{path.name}: slide types deck mode cannot show: {unknown}"
    assert kinds[0] == "slide", f"{path.name}: the title cell is not a slide"
    assert kinds.count("slide") >= 3, f"{path.name}: fewer than 3 slides"


@pytest.mark.parametrize("path", EDITION_PATHS, ids=bs.edition_id)
def test_right_arrow_walks_the_deck_in_reading_order(path):
    # → stops at slides, fragments and plain cells, never at a subslide or a layer: so
    # every shown cell is a slide or a layer of one, but the last, which closes the deck.
    cells = _cells(path)
    shown = [i for i, c in enumerate(cells) if _kind(c) != "skip"]
    for index in shown[:-1]:
        cell = cells[index]
        layer = cell["metadata"].get(sm.DECK, {}).get("layer")
        assert _kind(cell) == "slide" or layer in ("slide", "deck"), (
            f"{path.name}, cell {index}: → would stop inside a slide (type {_kind(cell)!r})"
        )


@pytest.mark.parametrize("path", EDITION_PATHS, ids=bs.edition_id)
def test_no_test_scaffolding_is_projected(path):
    cells = _cells(path)
    solutions = {e.solution for e in find_exercises({"cells": cells}, path.name)}
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        where = f"{path.name}, cell {index}"
        assert sm.IGNORE_MARKER not in source, f"{where}: use the tag {sm.IGNORE_TAG}"
        assert "# mirrors:" not in source, f"{where}: a mirrors comment (metadata instead)"
        if _kind(cell) == "skip":
            continue
        assert index not in solutions, f"{where}: an exercise's solution is projected"
        lines = source.split("\n")
        assert not any(sm.CONTROLS.match(line) for line in lines), (
            f"{where}: widget-control assertions are projected"
        )


def test_the_tool_moves_the_scaffolding_the_tests_rely_on():
    cells = [c for path in EDITION_PATHS for c in _cells(path)]
    tagged = [c for c in cells if sm.IGNORE_TAG in c["metadata"].get("tags", [])]
    hidden_checks = [c for c in cells if sm.CONTROLS.match("".join(c["source"]))]
    assert tagged and all(c["cell_type"] == "code" for c in tagged)
    assert hidden_checks and all(_kind(c) == "skip" for c in hidden_checks)


def test_an_in_more_depth_aside_is_skipped_in_both_languages():
    """A first reading, and so the deck, skips a methodological aside (STYLE.md)."""

    def markdown(text):
        return {"cell_type": "markdown", "metadata": {}, "source": text}

    for marker in ("**In more depth", "**深入一步"):
        notebook = {
            "metadata": {},
            "cells": [
                markdown("# A heading"),
                markdown(f"{marker}: how the bootstrap counts.** Details."),
                markdown("The point again."),
            ],
        }
        kinds = [_kind(cell) for cell in sm.with_slides(notebook)["cells"]]
        assert kinds == ["slide", "skip", None], (marker, kinds)
