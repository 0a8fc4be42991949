"""The language the library speaks to a student: English, or Simplified Chinese.

Each notebook chooses its edition's language in its first cell, ``set_language("en")`` or
``set_language("zh_CN")``, so a Chinese notebook speaks Chinese wherever it is opened (a plain
``jupyter lab``, VS Code, nbgrader, the class hub). ``set_language`` sets the environment
variable ``COURSE_LANG`` in the process, and the language is ``COURSE_LANG`` (``en``, the
default, or ``zh_CN``): outside a notebook (a script, the tests) the environment chooses.
Student-facing text (exercise hints, widget labels, the playground, progress bars) is
written in English as ``_("...")`` and looked up with Python's :mod:`gettext` in the
package's own catalogue, ``transformer_lib/locale/<lang>/LC_MESSAGES/transformer_lib.po``
(package data, so an installed wheel speaks Chinese too). Errors meant for programmers
(``ValueError``s) stay English.

Text with values in it is a template filled after the lookup, so that one catalogue entry
serves every value: ``_("got {shape}").format(shape=...)``, never an f-string inside ``_()``.
A notebook prints its own sentences the same way, with :func:`say`; they are in the same
catalogue (``tools/i18n_notebooks.py library`` collects them from the English notebooks).
"""

from __future__ import annotations

import functools
import gettext
import io
import os
import re
import unicodedata
from importlib import resources

from transformer_lib._checks import fail

LOCALE_DIR = resources.files(__package__) / "locale"
DOMAIN = "transformer_lib"
LANGUAGES = ("en", "zh_CN")


def _check_language(name: str, language: object, hint: str = "") -> None:
    if language not in LANGUAGES:
        fail(name, f"one of {', '.join(LANGUAGES)}", repr(language), hint)


def set_language(language: str) -> None:
    """Speak ``language`` (``"en"`` or ``"zh_CN"``) in this process from now on, whatever
    ``COURSE_LANG`` said: each notebook's first cell calls it with its edition's language.

    It sets ``COURSE_LANG`` in the process's environment, so that whatever runs later
    speaks it too: the exercise checks that grading loads afresh from the library's files
    (``exercises/graded.py``), and a process the notebook starts."""
    _check_language("language", language)
    os.environ["COURSE_LANG"] = language


def current_language() -> str:
    """``COURSE_LANG`` as the environment or ``set_language`` left it (``en`` when unset or
    empty); an unknown value is an error, not English."""
    language = os.environ.get("COURSE_LANG", "").strip() or "en"
    _check_language("COURSE_LANG", language, "Unset it for English.")
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


def say(template: str, /, **values: object) -> None:
    """Print ``template``, a sentence for the student to read, in the course's language,
    with its ``{fields}`` filled from ``values``: how a notebook prints prose, so that the
    Chinese edition, which runs the same code, prints it in Chinese. The template must be a
    string literal, ``say("{hidden} of the {total} keys are hidden.", hidden=3, total=7)``,
    so that ``tools/i18n_notebooks.py library`` puts it in the library's catalogue."""
    print(_(template).format(**values))


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
