"""Make every notebook a deck for jupyterlab-slideshow, by rules, and move test scaffolding
off the slides.

Usage: python tools/slide_metadata.py [--check] [--report] [NOTEBOOK ...]
(default: notebooks/*.ipynb; --report prints each slide's estimated height)

Scaffolding (the tests read it from metadata, the audience never sees it):
- a first line ``# NBVAL_IGNORE_OUTPUT`` becomes nbval's cell tag ``nbval-ignore-output``;
- a first line ``# mirrors: transformer_lib.x.y.z [as Name]`` moves to the cell's metadata
  ``mirrors`` (tests/test_notebook_mirrors.py reads it there);
- ``assert ... .controls ...`` lines (nbval checks a widget's controls with them) move
  out of the widget's cell into a new code cell of their own, right after it, skipped;
- an exercise's solution cell is skipped; its text and its check cell stay on the slide.

Asides (STYLE.md): a Markdown cell that opens with ``**In more depth`` (the Chinese
edition's ``**深入一步``) is a methodological aside a first reading can skip, and the
slides skip it too.

Slides (jupyterlab-slideshow 0.3.4, where → goes to the next cell that is a slide, a
fragment or a plain cell, and only ↓ reaches a subslide):
- the first cell, and each Markdown cell that opens with a heading or with
  ``**Exercise``, starts a slide;
- every other shown cell continues its slide as a *layer* (metadata
  ``jupyterlab-slideshow.layer``): on screen with its slide, never a stop for →, so one →
  is one slide. The last slide's layers take the scope "deck" and the last shown cell
  stays plain, because the extension shows a "slide" layer only up to a later slide;
- a slide whose estimated height exceeds ``BUDGET_PX`` is split before the cell that
  overflows (before the Markdown that introduces that cell, if the two fit together);
- the notebook's metadata carries deck-mode CSS (via jupyterlab-fonts): code and prose at
  16 px, layers in the flow of the page, output images at most ``IMAGE_MAX_PX`` tall, no
  sideways scrollbar on Markdown.

Running it twice changes nothing; ``--check`` writes nothing and exits 1 on a change.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import re
import secrets
import struct
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from nbgrader_metadata import (  # noqa: E402
    StructureError,  # noqa: F401 (re-exported: the tests and callers catch it here)
    dumps,  # noqa: F401
    find_exercises,
    update_notebooks,
)

DECK = "jupyterlab-slideshow"
FONTS = "@deathbeds/jupyterlab-fonts"
IGNORE_MARKER, IGNORE_TAG = "# NBVAL_IGNORE_OUTPUT", "nbval-ignore-output"
MIRRORS = re.compile(r"^# mirrors: (transformer_lib(?:\.\w+)+(?: as \w+)?)\s*$")
CONTROLS = re.compile(r"^assert\b.*\.controls\b")
SLIDE_START = re.compile(r"^(#{1,6} |\*\*Exercise)")
ASIDES = ("**In more depth", "**深入一步")

# Deck-mode sizes in px on a 1400×900 screen, fitted to Chromium's (estimates err on the
# tall side: at most 20 px short on notebooks 00-07).
BUDGET_PX = 840
IMAGE_MAX_PX = 480
CODE_LINE_PX, CODE_CHARS = 21, 130  # 16 px code
TEXT_LINE_PX, TEXT_CHARS = 23, 170  # 16 px prose
HEADING_PX = {1: 64, 2: 52, 3: 44}
CELL_PX = 14  # padding around every cell
WIDGET_PX = 560  # a live widget: its controls and a figure
DECK_CSS = {
    "styles": {
        "": {
            "body[data-jp-deck-mode='presenting'] &": {
                "--jp-code-font-size": "16px",
                "--jp-content-font-size1": "16px",
                "& .jp-deck-mod-layer": {"position": "static"},
                # inline maths never wraps: let a formula at a line's end reach into the
                # margin instead of giving the paragraph a scrollbar
                "& .jp-RenderedMarkdown": {"overflow": "visible"},
                "& .jp-OutputArea-output img": {
                    "max-height": f"{IMAGE_MAX_PX}px",
                    "width": "auto",
                    "object-fit": "contain",
                },
            }
        }
    }
}


def _source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _set_source(cell: dict, text: str) -> None:
    lines = text.split("\n")
    cell["source"] = [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def _columns(line: str) -> float:
    """How wide ``line`` is in Latin letters of the deck's fonts: a CJK character is a full em
    wide, as wide as about 2.2 of them (fitted to Chromium on the Chinese edition's decks)."""
    return sum(2.2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def _wrapped(text: str, chars: int) -> int:
    return sum(max(1, math.ceil(_columns(line) / chars)) for line in text.split("\n"))


def _image_px(output: dict) -> int:
    png = base64.b64decode(output["data"]["image/png"][:64])
    width, height = struct.unpack(">II", png[16:24])
    return min(height, IMAGE_MAX_PX, round(height * 1300 / max(width, 1300)))


def _output_px(output: dict) -> int:
    data = output.get("data", {})
    if "application/vnd.jupyter.widget-view+json" in data:
        return WIDGET_PX
    if "image/png" in data:
        return _image_px(output) + 10
    text = output.get("text") or data.get("text/plain") or ""
    return _wrapped("".join(text).rstrip("\n"), CODE_CHARS) * CODE_LINE_PX + 10


def estimated_px(cell: dict) -> int:
    """How tall the cell stands in deck mode, from its source and stored outputs."""
    source = _source(cell).strip("\n")
    if cell["cell_type"] != "markdown":
        body = _wrapped(source, CODE_CHARS) * CODE_LINE_PX + 12
        return CELL_PX + body + sum(_output_px(o) for o in cell.get("outputs", []))
    height = CELL_PX
    for block in re.split(r"\n\s*\n", source):
        heading = re.match(r"^(#{1,6}) ", block)
        if heading:
            height += HEADING_PX.get(len(heading.group(1)), 40)
            block = block.split("\n", 1)[1] if "\n" in block else ""
        if block.strip():
            height += _wrapped(block, TEXT_CHARS) * TEXT_LINE_PX + 14
    return height


def _move_scaffolding(cell: dict) -> None:
    """Marker comments on a code cell's first line become a tag or metadata."""
    lines = _source(cell).split("\n")
    while lines and (lines[0].strip() == IGNORE_MARKER or MIRRORS.match(lines[0])):
        first = lines.pop(0)
        if first.strip() == IGNORE_MARKER:
            tags = cell["metadata"].setdefault("tags", [])
            if IGNORE_TAG not in tags:
                tags.append(IGNORE_TAG)
        else:
            cell["metadata"]["mirrors"] = MIRRORS.match(first).group(1)
    _set_source(cell, "\n".join(lines))


def _split_control_checks(cells: list[dict]) -> list[dict]:
    """Each cell's `assert ... .controls` lines move to a new cell right after it."""
    result = []
    for cell in cells:
        result.append(cell)
        lines = _source(cell).split("\n")
        checks = [line for line in lines if CONTROLS.match(line)]
        if cell["cell_type"] != "code" or not checks or len(checks) == len(lines):
            continue
        _set_source(cell, "\n".join(line for line in lines if not CONTROLS.match(line)).strip())
        new = {"cell_type": "code", "execution_count": None, "id": secrets.token_hex(4)}
        new |= {"metadata": {}, "outputs": []}
        _set_source(new, "\n".join(checks))
        result.append(new)
    return result


def _is_hidden(cell: dict, solutions: set[int], index: int) -> bool:
    lines = [line for line in _source(cell).split("\n") if line.strip()]
    controls_only = bool(lines) and all(CONTROLS.match(line) for line in lines)
    aside = cell["cell_type"] == "markdown" and _source(cell).startswith(ASIDES)
    return index in solutions or aside or (cell["cell_type"] == "code" and controls_only)


def slides(cells: list[dict], hidden: set[int]) -> list[list[int]]:
    """The shown cells' indexes, grouped into slides (see the module's rules)."""
    groups: list[list[int]] = []
    for index, cell in enumerate(cells):
        if index in hidden:
            continue
        starts = cell["cell_type"] == "markdown" and SLIDE_START.match(_source(cell))
        if not groups or starts:
            groups.append([index])
        else:
            groups[-1].append(index)
    return [part for group in groups for part in _split_tall(cells, group)]


def _height(cells: list[dict], indexes: list[int]) -> int:
    return sum(estimated_px(cells[i]) for i in indexes)


def _split_tall(cells: list[dict], group: list[int]) -> list[list[int]]:
    parts: list[list[int]] = [[]]
    for index in group:
        current = parts[-1]
        if current and _height(cells, [*current, index]) > BUDGET_PX:
            # a Markdown cell goes along with the cell it introduces, if both fit
            keep = len(current)
            introduces = cells[current[-1]]["cell_type"] == "markdown"
            if keep > 1 and introduces and _height(cells, [current[-1], index]) <= BUDGET_PX:
                keep -= 1
            parts[-1] = current[:keep]
            parts.append(current[keep:])
        parts[-1].append(index)
    return parts


def with_slides(notebook: dict, name: str = "notebook") -> dict:
    """A copy of ``notebook`` with its scaffolding moved and its slide metadata set."""
    notebook = json.loads(json.dumps(notebook))
    notebook["cells"] = _split_control_checks(notebook["cells"])
    cells = notebook["cells"]
    for cell in cells:
        if cell["cell_type"] == "code":
            _move_scaffolding(cell)
        cell["metadata"].pop("slideshow", None)
        cell["metadata"].pop(DECK, None)
    solutions = {exercise.solution for exercise in find_exercises(notebook, name)}
    hidden = {i for i, cell in enumerate(cells) if _is_hidden(cell, solutions, i)}
    groups = slides(cells, hidden)
    for index in hidden:
        cells[index]["metadata"]["slideshow"] = {"slide_type": "skip"}
    for number, group in enumerate(groups):
        last = number == len(groups) - 1
        cells[group[0]]["metadata"]["slideshow"] = {"slide_type": "slide"}
        for index in group[1 : len(group) - 1 if last else None]:
            cells[index]["metadata"][DECK] = {"layer": "deck" if last else "slide"}
    notebook["metadata"][FONTS] = DECK_CSS
    return notebook


def report(notebook: dict, name: str) -> str:
    """One line per slide of a notebook ``with_slides`` made: its cells and estimated height."""
    cells = notebook["cells"]
    heads = [
        i for i, c in enumerate(cells) if c["metadata"].get("slideshow") == {"slide_type": "slide"}
    ]
    lines = []
    for number, (head, end) in enumerate(zip(heads, [*heads[1:], len(cells)]), start=1):
        shown = [
            i
            for i in range(head, end)
            if "slide_type" not in cells[i]["metadata"].get("slideshow", {}) or i == head
        ]
        first = _source(cells[head]).split("\n", 1)[0][:60]
        lines.append(
            f"{name} slide {number:2}: cells {head}-{shown[-1]}, ~{_height(cells, shown)} px  {first}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 on a change")
    parser.add_argument("--report", action="store_true", help="print each slide's height")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(Path("notebooks").glob("*.ipynb"))

    def transform(notebook: dict, name: str) -> dict:
        notebook = with_slides(notebook, name)
        if args.report:
            print(report(notebook, name))
        return notebook

    return update_notebooks(paths, transform, args.check, "slide_metadata")


if __name__ == "__main__":
    sys.exit(main())
