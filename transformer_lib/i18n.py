"""The language the library speaks to a student: English, or Simplified Chinese.

Each notebook chooses its edition's language in its first cell, ``set_language("en")`` or
``set_language("zh_CN")``, so a Chinese notebook speaks Chinese wherever it is opened (a plain
``jupyter lab``, VS Code, nbgrader, the class hub). ``set_language`` sets the environment
variable ``COURSE_LANG`` in the process, and the language is ``COURSE_LANG`` (``en``, the
default, or ``zh_CN``): outside a notebook (a script, the tests) the environment chooses.
Student-facing text (exercise hints, widget labels, the playground, progress bars) is
written in English as ``_("...")`` and looked up with Python's :mod:`gettext` in the
package's own catalogue, ``transformer_lib/locale/<lang>/LC_MESSAGES/transformer_lib.po``
(package data, so an installed wheel speaks Chinese too). The library's errors are read
from it too: :func:`transformer_lib._checks.fail` looks up what an argument must be and the
hint, so a Chinese notebook shows them in Chinese (the argument's name and what arrived, a
repr or a dtype and shape, as the code writes them). Both read the catalogue through
:mod:`transformer_lib._catalogue`.

Text with values in it is a template filled after the lookup, so that one catalogue entry
serves every value: ``_("got {shape}").format(shape=...)``, never an f-string inside ``_()``.
A notebook prints its own sentences the same way, with :func:`say`; they are in the same
catalogue (``tools/i18n_notebooks.py library`` collects them from the English notebooks).

A figure's text is ``_()`` too, ``ax.set_title(_("Learning to reverse"))``: in Chinese the
library draws it with a CJK font found on the machine, and in English (with one notice
saying which font to install) where there is none, so that a figure never shows a box for a
missing glyph (:mod:`transformer_lib.fonts`; :func:`english` reads the catalogue backwards).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import unicodedata

from transformer_lib import fonts
from transformer_lib._catalogue import LANGUAGES, catalogue, language_setting, translations
from transformer_lib._checks import fail


def _check_language(name: str, language: object, hint: str = "") -> None:
    if language not in LANGUAGES:
        fail(name, "one of {choices}", repr(language), hint, choices=", ".join(LANGUAGES))


def set_language(language: str) -> None:
    """Speak ``language`` (``"en"`` or ``"zh_CN"``) in this process from now on, whatever
    ``COURSE_LANG`` said: each notebook's first cell calls it with its edition's language.

    It sets ``COURSE_LANG`` in the process's environment, so that whatever runs later
    speaks it too: the exercise checks that grading loads afresh from the library's files
    (``exercises/graded.py``), and a process the notebook starts."""
    _check_language("language", language)
    os.environ["COURSE_LANG"] = language
    _prepare_figures(language)


def _prepare_figures(language: str) -> None:
    """Chinese figures get a CJK font (or English text where none is installed); with
    ``COURSE_FIGURE_TEXT`` set, every figure's text is recorded (:mod:`transformer_lib.fonts`)."""
    if language != "en":
        fonts.use_cjk_font(english)
    elif os.environ.get(fonts.ENV_RECORD):
        fonts.install_figure_hook()


def current_language() -> str:
    """``COURSE_LANG`` as the environment or ``set_language`` left it (``en`` when unset or
    empty); an unknown value is an error, not English."""
    language = language_setting()
    _check_language("COURSE_LANG", language, N_("Unset it for English."))
    return language


_figures_prepared: set[str] = set()


def _(message: str) -> str:
    """``message`` in the course's language (itself in English, or when not translated)."""
    language = current_language()
    if language != "en" and language not in _figures_prepared and "matplotlib" in sys.modules:
        # COURSE_LANG chose Chinese without set_language: a figure may be on its way.
        _figures_prepared.add(language)
        _prepare_figures(language)
    return translations(language).gettext(message)


_FIELD = re.compile(r"\{(\w*)(?:[!:][^{}]*)?\}")


@functools.cache
def _backwards(language: str) -> tuple[dict[str, str], list[tuple[re.Pattern, str]]]:
    """The catalogue read backwards: {translation: English} for the messages without
    fields, and (pattern of the translation, English) for the templates."""
    exact, templates = {}, []
    for message in catalogue(language):
        if not message.id or not message.string or not isinstance(message.id, str):
            continue
        if not _FIELD.search(message.id):
            exact.setdefault(message.string, message.id)
            continue
        if not _FIELD.sub("", message.string).strip():  # "{text}" alone: matches anything
            continue
        pattern, seen, at = "", set(), 0
        for field in _FIELD.finditer(message.string):
            pattern += re.escape(message.string[at : field.start()])
            name = field[1]
            pattern += f"(?P={name})" if name in seen else f"(?P<{name}>.+?)"
            seen.add(name)
            at = field.end()
        pattern += re.escape(message.string[at:])
        try:
            templates.append((re.compile(pattern, re.DOTALL), message.id))
        except re.error:  # a positional field "{}" or an odd name: left to the exact lookup
            continue
    # The template with the most words of its own first: "{a}：{b}" matches nearly anything.
    templates.sort(key=lambda template: -len(_FIELD.sub("", template[1])))
    return exact, templates


def english(text: str) -> str | None:
    """The English that ``text``, a message in the course's language as ``_()`` returns it
    (a template's fields filled in), was translated from; None when the catalogue holds no
    such translation. How a figure falls back to English where no CJK font is installed."""
    language = current_language()
    if language == "en":
        return text
    exact, templates = _backwards(language)
    if text in exact:
        return exact[text]
    for pattern, message in templates:
        match = pattern.fullmatch(text)
        if not match:
            continue
        # A value in Chinese must itself be a message ("{what}：{value}" matches anything).
        values = {
            name: english(v) if has_cjk(v) and v != text else v
            for name, v in match.groupdict().items()
        }
        if None not in values.values():
            return _FIELD.sub(lambda field, v=values: v.get(field[1], field[0]), message)
    return None


def say(template: str, /, **values: object) -> None:
    """Print ``template``, a sentence for the student to read, in the course's language,
    with its ``{fields}`` filled from ``values``: how a notebook prints prose, so that the
    Chinese edition, which runs the same code, prints it in Chinese. The template must be a
    string literal, ``say("{hidden} of the {total} keys are hidden.", hidden=3, total=7)``,
    so that ``tools/i18n_notebooks.py library`` puts it in the library's catalogue."""
    print(_(template).format(**values))


def translated(text: str | None) -> str | None:
    """``text``, a label as it is shown (a figure's, a study's variant, a table's column), in
    the course's language: looked up where it is shown, after the notebook chose its language.
    A label the catalogue lacks, Chinese already, an empty label or None comes back unchanged
    (``_("")`` would be the catalogue's header)."""
    return _(text) if isinstance(text, str) and text else text


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue; translated later, where it is shown, with ``_``."""
    return message


# Chinese has no spaces: a line may break between any two CJK characters, but not before
# closing punctuation (it moves to the next line with the character before it).
_CJK = fonts.CJK_CHARACTERS
_PIECES = re.compile(rf"\s+|[{_CJK}]|[^\s{_CJK}]+")
_NO_LINE_START = set("，。、；：！？）》」』】”’…")


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal or a monospace output: 2 for a CJK character."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, width: int) -> str:
    """``text`` and spaces to ``width`` columns (:func:`display_width`): a column of names
    that lines up in either language."""
    return text + " " * (width - display_width(text))


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


has_cjk = fonts.has_cjk
