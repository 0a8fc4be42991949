"""The language the library speaks to a student: English, or Simplified Chinese.

The one place the course's language is chosen is the environment variable ``COURSE_LANG``
(``en``, the default, or ``zh_CN``; ``make lab-zh`` sets it). Student-facing text (exercise
hints, widget labels, the playground, progress bars) is written in English as
``_("...")`` and looked up with Python's :mod:`gettext` in the package's own catalogue,
``transformer_lib/locale/<lang>/LC_MESSAGES/transformer_lib.po`` (package data, so an
installed wheel speaks Chinese too). Errors meant for programmers (``ValueError``s) stay English.

Text with values in it is a template filled after the lookup, so that one catalogue entry
serves every value: ``_("got {shape}").format(shape=...)``, never an f-string inside ``_()``.
"""

from __future__ import annotations

import functools
import gettext
import io
import os
import re
import unicodedata
from importlib import resources

LOCALE_DIR = resources.files(__package__) / "locale"
DOMAIN = "transformer_lib"
LANGUAGES = ("en", "zh_CN")


def current_language() -> str:
    """``COURSE_LANG`` (``en`` when unset or empty); an unknown value is an error, not English."""
    language = os.environ.get("COURSE_LANG", "").strip() or "en"
    if language not in LANGUAGES:
        raise ValueError(
            f"COURSE_LANG must be one of {', '.join(LANGUAGES)}; got {language!r}. "
            "Unset it for English."
        )
    return language


@functools.cache
def _translations(language: str) -> gettext.NullTranslations:
    if language == "en":
        return gettext.NullTranslations()
    # Compiled from the .po on first use (no .mo file to go stale beside its source).
    from babel.messages import mofile, pofile

    with (LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po").open("rb") as po:
        catalog = pofile.read_po(po, locale=language)
    compiled = io.BytesIO()
    mofile.write_mo(compiled, catalog)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def _(message: str) -> str:
    """``message`` in the course's language (itself in English, or when not translated)."""
    return _translations(current_language()).gettext(message)


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue; translated later, where it is shown, with ``_``."""
    return message


# Chinese has no spaces: a line may break between any two CJK characters, but not before
# closing punctuation (it moves to the next line with the character before it).
_CJK = "\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff00-\uffef"
_PIECES = re.compile(rf"\s+|[{_CJK}]|[^\s{_CJK}]+")
_A_CJK_CHARACTER = re.compile(f"[{_CJK}]")
_NO_LINE_START = set("，。、；：！？）》」』】”’…")


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal or a monospace output: 2 for a CJK character."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_cjk(paragraph: str, width: int) -> list[str]:
    """``paragraph`` in lines of at most ``width`` columns, broken at spaces or between CJK
    characters (a word wider than ``width`` keeps a line to itself)."""
    lines: list[list[str]] = [[]]  # each line: its pieces, a space before a piece kept in it
    space = ""
    for piece in _PIECES.findall(paragraph):
        if piece.isspace():
            space = piece
            continue
        line = lines[-1]
        spaced = space + piece if line or len(lines) == 1 else piece
        space = ""
        if not line or display_width("".join(line) + spaced) <= width:
            line.append(spaced)
        elif piece in _NO_LINE_START and len(line) > 1:
            lines.append([line.pop().lstrip(), piece])
        else:
            lines.append([piece])
    return ["".join(line) for line in lines]


def has_cjk(text: str) -> bool:
    return _A_CJK_CHARACTER.search(text) is not None
