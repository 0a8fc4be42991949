"""Chinese inside the Chinese edition's figures, never a box, and a record of what figures say.

How figure text is written: in English, wrapped in ``_()`` like every other sentence a
student reads, in the notebooks and in ``transformer_lib/teaching/viz``:
``ax.set_title(_("Learning to reverse"))``, ``ax.set_xlabel(_("step"))``, and a template
filled after the lookup, ``ax.set_title(_("step {step}").format(step=step))`` (never an
f-string inside ``_()``); then ``tools/i18n_notebooks.py library`` puts it in the library's
catalogue, where it is translated. Nothing else is needed; the library does the rest:

- **A CJK font.** In Chinese (``set_language("zh_CN")``, or ``COURSE_LANG=zh_CN`` and the
  first ``_()`` after matplotlib was imported) :func:`use_cjk_font` puts the first installed
  family of :data:`CJK_FAMILIES` (Debian/Ubuntu's ``fonts-noto-cjk``: Noto Sans CJK SC;
  macOS: PingFang SC, Hiragino Sans GB; Windows: Microsoft YaHei, SimHei; ...) at the head of
  matplotlib's ``font.sans-serif``, with DejaVu Sans after it for symbols and maths. A font
  installed after matplotlib cached its font list is found too. CJK text is drawn upright:
  a CJK family has no italic face.
- **No CJK font: English, and one notice.** Then, just before a figure is drawn, each of its
  texts that holds a CJK character becomes the English it was translated from (the
  catalogue read backwards, templates and their values included: the ``english`` function
  that ``transformer_lib.i18n`` hands over, :func:`~transformer_lib.i18n.english`),
  and the process prints once, in Chinese, which package to install. A glyph the font lacks
  would be drawn as a box; no CJK character reaches a font without CJK glyphs. A text
  joined from several messages falls back piece by piece (between lines and CJK
  punctuation); Chinese that never went through ``_()`` has no English to fall back to,
  and each run of it is drawn as "…".
- **A record of every figure's text.** With ``COURSE_FIGURE_TEXT=PATH`` in the environment
  (``make test-notebooks-zh`` sets it), each figure appends, as it is drawn, one JSON line
  per visible text (titles, axis labels, tick labels, legend entries, annotations) to PATH:
  ``{"kind": "tick" | "text", "text", "notebook", "kernel", "cell_id", "cell_sha1"}``: the
  notebook where a Jupyter server names it (``JPY_SESSION_NAME``), the kernel's process id,
  and the cell that drew the figure, by its id where the front end sends one and by the
  SHA-1 of its source, which finds it in the notebook under nbval (which sends no id);
  ``tests/test_zh_english.py`` reads it.

Both work on every matplotlib figure, pyplot's or a widget's ``Figure()``: ``Figure.draw``
is wrapped once, by :func:`install_figure_hook`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

# Characters a font needs CJK glyphs for: CJK punctuation, ideographs, full-width forms.
CJK_CHARACTERS = "\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef"  # a regex range
_A_CJK_CHARACTER = re.compile(f"[{CJK_CHARACTERS}]")

# Simplified Chinese first, each system's own font; then families with the same glyphs.
CJK_FAMILIES = (
    "Noto Sans CJK SC",  # Debian/Ubuntu: fonts-noto-cjk
    "Source Han Sans SC",  # the same font under Adobe's name
    "Noto Sans SC",  # Google Fonts' single-language cut
    "PingFang SC",  # macOS
    "Hiragino Sans GB",  # macOS
    "Microsoft YaHei",  # Windows
    "SimHei",  # Windows
    "WenQuanYi Zen Hei",  # Linux: fonts-wqy-zenhei
    "WenQuanYi Micro Hei",
    "Arial Unicode MS",  # macOS, Microsoft Office
    "Noto Sans CJK TC",  # the Noto CJK collections' other faces: every character, other shapes
    "Noto Sans CJK JP",
    "Source Han Sans CN",
)
SYMBOLS_FAMILY = "DejaVu Sans"  # matplotlib's own: arrows, Greek, maths
# In English: "No Chinese font on this computer: figure text is drawn in English (rather
# than as boxes). To draw Chinese, install one: on Debian/Ubuntu `sudo apt-get install
# fonts-noto-cjk` (elsewhere Noto Sans CJK SC or Source Han Sans), then restart the kernel."
# Only the Chinese edition needs a CJK font, so the notice is written in Chinese alone.
INSTALL_NOTICE = (
    "注意：这台计算机上没有找到中文字体，图中的文字将显示为英文（以免画成方框）。"
    "要在图中显示中文，请安装中文字体：Debian/Ubuntu 上运行 "
    "`sudo apt-get install fonts-noto-cjk`（其他系统请安装 Noto Sans CJK SC 或思源黑体），"
    "然后重启内核。"
)
ENV_RECORD = "COURSE_FIGURE_TEXT"
# File names of CJK fonts, to look for among the system's fonts matplotlib has not listed.
_CJK_FILE = re.compile(
    r"cjk|sourcehan|notosanssc|pingfang|hiragino|msyh|yahei|simhei|simsun|wqy|wenquanyi|unicode",
    re.IGNORECASE,
)
_NON_CJK_LEFT = "…"  # what a CJK run the catalogue cannot turn back into English becomes


def _first_installed(names: set[str]) -> str | None:
    return next((family for family in CJK_FAMILIES if family in names), None)


@functools.cache
def installed_cjk_family() -> str | None:
    """The first family of ``CJK_FAMILIES`` that matplotlib can use here, or None."""
    from matplotlib import font_manager

    manager = font_manager.fontManager
    family = _first_installed({font.name for font in manager.ttflist})
    if family is None:  # installed after matplotlib cached its list of fonts?
        for path in font_manager.findSystemFonts():
            if _CJK_FILE.search(Path(path).name):
                try:
                    manager.addfont(path)
                except (OSError, RuntimeError, ValueError):  # a font FreeType cannot read
                    continue
        family = _first_installed({font.name for font in manager.ttflist})
    return family


def has_cjk(text: str) -> bool:
    return _A_CJK_CHARACTER.search(text) is not None


def _no_english(text: str) -> str | None:
    return None


# The function that gives the English a translated text came from (None if it knows none).
_english: list[Callable[[str], str | None]] = [_no_english]


def use_cjk_font(english: Callable[[str], str | None] = _no_english) -> str | None:
    """Draw figures with the installed CJK family ahead of matplotlib's fonts and return
    it; with none installed, print the notice once and return None: figure text is then
    drawn in the English that ``english`` gives for it. Either way, install the figure hook."""
    import matplotlib

    _english[0] = english
    family = installed_cjk_family()
    if family is None:
        _notice()
    else:
        rest = [
            f for f in matplotlib.rcParams["font.sans-serif"] if f not in (family, SYMBOLS_FAMILY)
        ]
        matplotlib.rcParams["font.sans-serif"] = [family, SYMBOLS_FAMILY, *rest]
        matplotlib.rcParams["font.family"] = ["sans-serif"]
    install_figure_hook()
    return family


@functools.cache
def _notice() -> None:
    """The notice, printed once per process."""
    print(INSTALL_NOTICE, file=sys.stderr)


# -- the figure hook -------------------------------------------------------------------------


def install_figure_hook() -> None:
    """Wrap ``Figure.draw`` (once per process): before drawing, CJK text becomes English
    where no CJK font is installed; after it, with ``COURSE_FIGURE_TEXT`` set, the
    figure's visible texts are recorded."""
    from matplotlib.figure import Figure

    if getattr(Figure.draw, "_course_hook", False):
        return
    draw = Figure.draw

    @functools.wraps(draw)
    def hooked(self, renderer):
        _english_where_no_cjk_font(self)
        result = draw(self, renderer)
        if os.environ.get(ENV_RECORD):
            _record(self, Path(os.environ[ENV_RECORD]))
        return result

    hooked._course_hook = True
    Figure.draw = hooked
    _follow_cells()


def english_figure_text(text: str, to_english: Callable[[str], str | None]) -> str:
    """``text`` as a font without CJK glyphs can draw it: the English ``to_english`` gives,
    else line by line, else piece by piece between CJK punctuation (a title joined from two
    messages); CJK punctuation becomes ASCII, and a CJK run nothing turns back becomes an
    ellipsis."""
    if not has_cjk(text):
        return text
    english = to_english(text)
    if english is None:
        lines = text.split("\n")
        pieces = lines if len(lines) > 1 else _CJK_PUNCTUATION.split(text)
        if len(pieces) > 1:
            joined = "\n" if len(lines) > 1 else ""
            english = joined.join(english_figure_text(piece, to_english) for piece in pieces)
        else:
            english = text
    english = english.translate(_ASCII_PUNCTUATION)
    return re.sub(f"[{CJK_CHARACTERS}]+", _NON_CJK_LEFT, english)


_ASCII = {"：": ": ", "，": ", ", "；": "; ", "、": ", ", "（": " (", "）": ")", "。": ". ",
          "！": "! ", "？": "? ", "　": " "}  # fmt: skip
_ASCII_PUNCTUATION = str.maketrans(_ASCII)
_CJK_PUNCTUATION = re.compile(f"([{''.join(_ASCII)}])")


def _english_where_no_cjk_font(figure) -> None:
    """CJK text in English where no CJK font is installed; where one is, upright: a CJK
    family has no italic face, and matplotlib would draw italic CJK text in a Latin italic
    font without CJK glyphs (boxes)."""
    from matplotlib.text import Text

    texts = [text for text in figure.findobj(Text) if has_cjk(text.get_text())]
    if not texts:
        return
    if installed_cjk_family() is not None:
        for text in texts:
            text.set_fontstyle("normal")
        return
    _notice()
    for text in texts:
        text.set_text(english_figure_text(text.get_text(), _english[0]))


# -- the record of figure text ----------------------------------------------------------------

_cell: dict[str, str | None] = {"cell_id": None, "cell_sha1": None}


def _follow_cells() -> None:
    """Remember which notebook cell runs (IPython's pre_run_cell), to name it in the record."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return

    def remember(info) -> None:
        source = info.raw_cell or ""
        _cell["cell_id"] = getattr(info, "cell_id", None)
        _cell["cell_sha1"] = hashlib.sha1(source.encode("utf-8")).hexdigest()

    shell.events.register("pre_run_cell", remember)


def visible_texts(figure) -> list[tuple[str, str]]:
    """``(kind, text)`` for each text with a letter in it that ``figure`` shows: kind "tick"
    for a tick label, "text" for every other (title, axis label, legend entry, annotation,
    colour-bar label)."""
    from matplotlib.text import Text

    ticks, shown = set(), []
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ticks.update((id(tick.label1), id(tick.label2)))
            if axes.get_visible():  # the ticks in view, as Axis.draw picks them
                drawn = axis._update_ticks()
                shown += [("tick", t) for tick in drawn for t in (tick.label1, tick.label2)]
    shown += [("text", t) for t in figure.findobj(Text) if id(t) not in ticks]
    return [
        (kind, text.get_text())
        for kind, text in shown
        if text.get_visible() and _has_a_letter(text.get_text()) and _axes_visible(text)
    ]


def _has_a_letter(text: str) -> bool:
    return any(character.isalpha() for character in text)


def _axes_visible(text) -> bool:
    return text.axes is None or text.axes.get_visible()


_last_recorded: dict[int, list] = {}


def _record(figure, path: Path) -> None:
    texts = visible_texts(figure)
    if _last_recorded.get(id(figure)) == texts:  # drawn again unchanged (tight bbox, widgets)
        return
    _last_recorded[id(figure)] = texts
    notebook = os.environ.get("JPY_SESSION_NAME")  # the notebook's path, where Jupyter says
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        for kind, text in texts:
            entry = {"kind": kind, "text": text, "notebook": notebook, "kernel": os.getpid()}
            entry.update(_cell)
            file.write(json.dumps(entry, ensure_ascii=False) + "\n")
