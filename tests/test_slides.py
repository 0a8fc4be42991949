"""Every notebook is a slide deck that jupyterlab-slideshow can present (no browser needed;
tests/test_browser.py presents one in a real browser)."""

import json

import browser_support as bs
import pytest

NOTEBOOK_PATHS = bs.NOTEBOOK_PATHS


@pytest.mark.parametrize("path", NOTEBOOK_PATHS, ids=[p.stem for p in NOTEBOOK_PATHS])
def test_slide_types_are_ones_deck_mode_shows(path):
    # jupyterlab-slideshow never shows a cell whose slide_type it does not know, such as
    # the classic "-": leave the key out (JupyterLab 4's "-") to continue a slide.
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    kinds = [c["metadata"].get("slideshow", {}).get("slide_type") for c in cells]
    unknown = {k for k in kinds if k not in bs.DECK_SLIDE_TYPES}
    assert not unknown, f"{path.name}: slide types deck mode cannot show: {unknown}"
    assert kinds[0] == "slide", f"{path.name}: the title cell is not a slide"
    assert kinds.count("slide") >= 3, f"{path.name}: fewer than 3 slides"
