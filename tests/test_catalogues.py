"""Every gettext catalogue is one GNU gettext accepts: ``msgfmt -c`` passes each ``.po`` file
without an error or a warning, no msgid is defined twice, a format flag holds in the
translation, and no message carries a format flag it does not have. Babel reads past all of
these (it keeps a repeated msgid's first translation and guesses format flags afresh), so
neither the library nor the build would notice; a translator's editor, ``msgfmt`` or a
distribution's packaging would refuse the file."""

from __future__ import annotations

import ast
import json
import os
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import TranslationError
from babel.messages.checkers import python_format

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import i18n_notebooks as tool  # noqa: E402

LANG = "zh_CN"
CATALOGUES = [
    *sorted(tool.LOCALE.glob("*/LC_MESSAGES/*.po")),
    *sorted((tool.LIBRARY / "locale").glob("*/LC_MESSAGES/*.po")),
]
IDS = [str(path.relative_to(ROOT)) for path in CATALOGUES]

HEADER = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
# Lines 6 and 10 are flagged a %-format and a str.format template; neither msgstr keeps it.
BAD_FORMATS = f"""{HEADER}
#, python-format
msgid "99.9 % sure"
msgstr "99.9%的把握"

#, python-brace-format
msgid "{{n}} keys"
msgstr "{{m}}个键"
"""
# Line 8 defines line 5's msgid again.
REPEATED = f"""{HEADER}
msgid "twice"
msgstr "两次"

msgid "twice"
msgstr "{{translation}}"
"""


def msgfmt(path: Path) -> subprocess.CompletedProcess:
    """``msgfmt -c`` run on ``path``, its messages in English."""
    program = shutil.which("msgfmt")
    if program is None:
        pytest.fail(
            "GNU gettext's msgfmt is not installed: install Debian's `gettext` package "
            "(sudo apt-get install gettext), or gettext from your system's packages"
        )
    return subprocess.run(
        [program, "--check", "--output-file", os.devnull, str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},
    )


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}"


def duplicates(path: Path) -> list[str]:
    """Each msgid (in its context) that ``path`` defines again, as "file:line: ..."."""
    first: dict[tuple, int] = {}
    found = []
    for line, message in tool.catalogue_entries(path, LANG):
        key = (message.context, message.id)
        if key in first:
            found.append(
                f"{_where(path, line)}: msgid {message.id[:60]!r} defined again "
                f"(first at line {first[key]})"
            )
        first.setdefault(key, line)
    return found


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def _check_brace_format(msgid: str, msgstr: str) -> None:
    if _fields(msgid) != _fields(msgstr):
        raise TranslationError(
            f"fields {sorted(_fields(msgid))} in the msgid, {sorted(_fields(msgstr))} in the msgstr"
        )


def format_mismatches(path: Path) -> list[str]:
    """Each translation that breaks the format its entry is flagged with, as "file:line:
    why: msgid": a %-format's placeholders (Babel's checker), a str.format template's
    fields. A fuzzy translation is not used, so not checked (msgfmt does the same)."""
    found = []
    for line, message in tool.catalogue_entries(path, LANG):
        if not message.string or message.fuzzy:
            continue
        try:
            python_format(None, message)
            if "python-brace-format" in message.flags:
                _check_brace_format(message.id, message.string)
        except (TranslationError, ValueError) as error:
            found.append(f"{_where(path, line)}: {error}: msgid {message.id[:60]!r}")
    return found


def not_formats(path: Path) -> frozenset[str]:
    """The format flags no entry of ``path`` may carry (see the tool's NOT_FORMATS)."""
    library = path.is_relative_to(tool.LIBRARY)
    return tool.LIBRARY_NOT_FORMATS if library else tool.NOT_FORMATS


def false_flags(path: Path, wrong: frozenset[str]) -> list[str]:
    """Each entry of ``path`` flagged with a format in ``wrong``, as "file:line: ..."."""
    return [
        f"{_where(path, line)}: flagged {', '.join(sorted(flags))}: msgid {message.id[:60]!r}"
        for line, message in tool.catalogue_entries(path, LANG)
        if (flags := message.flags & wrong)
    ]


# -- the catalogues ----------------------------------------------------------------------------


def test_the_catalogues_are_found_where_the_tool_writes_them():
    """(A notebook without a catalogue yet fails in tests/test_i18n.py.)"""
    written = [tool.catalogue_path(path, LANG) for path in tool.english_notebooks()]
    assert {tool.library_catalogue_path(LANG), *filter(Path.exists, written)} <= {*CATALOGUES}


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_msgfmt_accepts_the_catalogue_without_a_warning(path):
    run = msgfmt(path.relative_to(ROOT))
    assert run.returncode == 0 and not run.stderr, run.stderr


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_no_msgid_is_defined_twice(path):
    assert duplicates(path) == []


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_every_translation_keeps_the_format_its_entry_is_flagged_with(path):
    assert format_mismatches(path) == []


@pytest.mark.parametrize("path", CATALOGUES, ids=IDS)
def test_no_entry_is_flagged_with_a_format_it_does_not_have(path):
    """Notebook text is no format; the library's messages are never %-formats."""
    assert false_flags(path, not_formats(path)) == []


def test_the_checks_find_a_repeated_msgid_and_broken_formats(tmp_path):
    repeated, formats = tmp_path / "repeated.po", tmp_path / "formats.po"
    repeated.write_text(REPEATED, encoding="utf-8")
    formats.write_text(BAD_FORMATS, encoding="utf-8")
    assert duplicates(repeated) == [f"{repeated}:8: msgid 'twice' defined again (first at line 5)"]
    assert [problem.split(": ")[0] for problem in format_mismatches(formats)] == [
        f"{formats}:6",
        f"{formats}:10",
    ]
    assert false_flags(formats, tool.NOT_FORMATS) == [
        f"{formats}:6: flagged python-format: msgid '99.9 % sure'",
        f"{formats}:10: flagged python-brace-format: msgid '{{n}} keys'",
    ]
    assert f"{repeated}:8: duplicate message definition" in msgfmt(repeated).stderr
    errors = msgfmt(formats).stderr
    assert f"{formats}:7: 'msgstr' is not a valid Python format string" in errors
    assert f"{formats}:11: a format specification for argument 'm' doesn't exist" in errors


# -- the tool that writes them -----------------------------------------------------------------


def test_extract_flags_no_format_in_notebook_text_however_often_it_runs(tmp_path, monkeypatch):
    """Babel flags "99.9 % sure" a %-format each time it reads it; the writer drops it."""
    monkeypatch.setattr(tool, "LOCALE", tmp_path / "locale")
    english = tmp_path / "01_x.ipynb"
    cells = [
        {"id": "a", "cell_type": "markdown", "metadata": {}, "source": "A model 99.9 % sure."},
        {"id": "b", "cell_type": "markdown", "metadata": {}, "source": "Row $x_{i}$ of $X$."},
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    english.write_text(json.dumps(notebook), encoding="utf-8")
    path = tool.extract(english, LANG)
    catalog = tool.read_catalogue(path, LANG)
    for message in catalog:
        message.string = {"a": "一个有99.9%把握的模型。", "b": "$X$的第$x_{i}$行。"}.get(
            message.context, message.string
        )
    tool.write_catalogue(catalog, path)
    tool.extract(english, LANG)
    assert false_flags(path, tool.NOT_FORMATS) == []
    assert (msgfmt(path).stderr, duplicates(path)) == ("", [])


def test_the_library_update_keeps_str_format_flags_and_drops_percent_ones(tmp_path, monkeypatch):
    path = tmp_path / "transformer_lib.po"
    shutil.copy(tool.library_catalogue_path(LANG), path)
    monkeypatch.setattr(tool, "library_catalogue_path", lambda lang: path)
    tool.update_library(LANG)
    assert false_flags(path, tool.LIBRARY_NOT_FORMATS) == []
    assert any("python-brace-format" in m.flags for _, m in tool.catalogue_entries(path, LANG))
    assert (msgfmt(path).stderr, duplicates(path), format_mismatches(path)) == ("", [], [])


def test_reading_merges_a_repeated_msgid_and_refuses_two_translations_of_it(tmp_path):
    """Babel would keep the first translation and drop the second without a word."""
    path = tmp_path / "repeated.po"
    path.write_text(REPEATED.replace("{translation}", "两次"), encoding="utf-8")
    catalog = tool.read_catalogue(path, LANG)
    tool.write_catalogue(catalog, path)
    assert [(m.id, m.string) for m in tool.read_catalogue(path, LANG) if m.id == "twice"] == [
        ("twice", "两次")
    ]
    assert duplicates(path) == []
    path.write_text(REPEATED.replace("{translation}", "两遍"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"repeated.po:8: msgid 'twice' .*line 5"):
        tool.read_catalogue(path, LANG)


def test_a_changed_long_cell_keeps_its_old_english_in_lines_msgfmt_reads(tmp_path, monkeypatch):
    """Babel wraps a long ``#| msgid`` like a comment, inside its strings: a syntax error."""
    monkeypatch.setattr(tool, "LOCALE", tmp_path / "locale")
    english = tmp_path / "01_x.ipynb"
    words = " ".join(f"word{i}" for i in range(40))
    cell = {"id": "a", "cell_type": "markdown", "metadata": {}, "source": f"{words}\n\nEnd."}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    english.write_text(json.dumps(notebook), encoding="utf-8")
    path = tool.extract(english, LANG)
    catalog = tool.read_catalogue(path, LANG)
    for message in catalog:
        message.string = "译文" if message.id else message.string
    tool.write_catalogue(catalog, path)
    cell["source"] = f"{words}\n\nThe end."
    english.write_text(json.dumps(notebook), encoding="utf-8")
    tool.extract(english, LANG)
    previous = [line for line in path.read_text(encoding="utf-8").splitlines() if line[:2] == "#|"]
    assert previous[0] == '#| msgid ""' and all(len(line) <= 76 for line in previous)
    strings = [line.removeprefix("#| ") for line in previous[1:]]
    assert all(piece[0] == piece[-1] == '"' for piece in strings)
    assert "".join(ast.literal_eval(piece) for piece in strings) == f"{words}\n\nEnd."
    assert (msgfmt(path).stderr, duplicates(path)) == ("", [])
