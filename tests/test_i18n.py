"""The Chinese edition stays in step with the English one: every catalogue entry translated
and current, every Chinese notebook exactly what the build makes, the same code in both
editions, no English prose left, the glossary's terms introduced, the library's messages
translated, and Chinese failure messages wrapped by display width."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir

from transformer_lib import i18n
from transformer_lib.exercises._core import MESSAGE_WIDTH, wrap_message

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import i18n_notebooks as tool  # noqa: E402

LANG = "zh_CN"
ENGLISH = tool.english_notebooks()
IDS = [path.stem for path in ENGLISH]
LIBRARY_PO = ROOT / "transformer_lib" / "locale" / LANG / "LC_MESSAGES" / "transformer_lib.po"
GLOSSARY = tool.LOCALE / LANG / "GLOSSARY.md"
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)[^{}]*\}")


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _problems(catalog) -> list[str]:
    """Entries a reader of the Chinese edition would see in English: untranslated or fuzzy."""
    return [
        f"{m.context or ''} {'fuzzy' if m.fuzzy else 'untranslated'}: {m.id[:60]!r}"
        for m in catalog
        if m.id and (m.fuzzy or not m.string)
    ]


# -- the notebook catalogues -------------------------------------------------------------------


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_every_entry_is_translated_and_none_is_fuzzy(english):
    catalog = tool.read_catalogue(tool.catalogue_path(english, LANG), LANG)
    assert _problems(catalog) == []


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_the_catalogue_holds_exactly_the_english_notebooks_text(english):
    """An English change not yet extracted (`tools/i18n_notebooks.py extract`) fails here."""
    catalog = tool.read_catalogue(tool.catalogue_path(english, LANG), LANG)
    wanted = {(context, text) for context, text, _ in tool.messages(_load(english))}
    held = {(m.context, m.id) for m in catalog if m.id}
    assert (sorted(wanted - held)[:3], sorted(held - wanted)[:3]) == ([], [])


def _cell_view(cell: dict) -> tuple:
    return cell["id"], cell["cell_type"], tool._source(cell), cell["metadata"]


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_the_chinese_notebook_is_what_the_build_makes(english):
    """Nobody edits notebooks/zh_CN by hand: `make zh` rebuilds it from English + catalogue."""
    catalog = tool.read_catalogue(tool.catalogue_path(english, LANG), LANG)
    built = tool.translated_notebook(_load(english), catalog, english.name)
    stored = _load(tool.edition_path(english, LANG))
    assert len(stored["cells"]) == len(built["cells"])
    for mine, theirs in zip(stored["cells"], built["cells"]):
        assert _cell_view(mine) == _cell_view(theirs)


def _code(cell: dict) -> str:
    return ast.dump(ast.parse(tool._source(cell)))  # comments are not in the tree


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_both_editions_run_the_same_code(english):
    pairs = zip(_load(english)["cells"], _load(tool.edition_path(english, LANG))["cells"])
    for mine, theirs in pairs:
        if mine["cell_type"] == "code":
            assert _code(mine) == _code(theirs), mine["id"]


# Markdown that is not prose: code, maths, HTML tags, link targets, and paper quotes (which
# stay English, with a Chinese rendering after them), as blockquotes or in quotation marks.
NOT_PROSE = re.compile(
    r"```.*?```|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|<[^>]+>|\]\([^)]*\)|^>[^\n]*|https?://\S+"
    r'|"(?:[^"\n]|\n(?!\n))*"|“[^”]*”',  # a quote may wrap, but stays within its paragraph
    re.DOTALL | re.MULTILINE,
)
ENGLISH_RUN = re.compile(r"(?:\b[A-Za-z][A-Za-z'’-]*[\s,;:]+){7}[A-Za-z][A-Za-z'’-]*")


def english_prose(markdown: str) -> list[str]:
    """Runs of 8 or more English words outside code, maths, links and quotes."""
    return ENGLISH_RUN.findall(NOT_PROSE.sub(" ", markdown))


def test_the_english_prose_finder_finds_prose_and_skips_code_maths_and_quotes():
    assert english_prose("This sentence has more than eight words in it, sadly.")
    assert not english_prose("这是中文（token, mask）。`a b c d e f g h i j` $a b c d e f g h i$")
    assert not english_prose("> the paper says this in many more than eight words here\n\n译文")
    assert english_prose("> 引文\n\nThis sentence after a quote has more than eight words.")


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_no_markdown_cell_of_the_chinese_edition_is_english_prose(english):
    edition = _load(tool.edition_path(english, LANG))
    found = [
        (cell["id"], run)
        for cell in edition["cells"]
        if cell["cell_type"] == "markdown"
        for run in english_prose(tool._source(cell))
    ]
    assert found == []


def _structure(markdown: str) -> tuple:
    """What a translation must keep: headings' levels, code blocks and maths."""
    headings = re.findall(r"^(#+) ", re.sub(r"```.*?```", "", markdown, flags=re.DOTALL), re.M)
    blocks = re.findall(r"```.*?```", markdown, re.DOTALL)
    maths = sorted(re.findall(r"\$\$.*?\$\$|\$[^$\n]+\$", markdown, re.DOTALL))
    return headings, blocks, maths


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_translations_keep_headings_code_blocks_and_maths(english):
    catalog = tool.read_catalogue(tool.catalogue_path(english, LANG), LANG)
    changed = [
        m.context
        for m in catalog
        if m.id and m.string and m.auto_comments[0].startswith("Markdown")
        if _structure(m.id) != _structure(m.string)
    ]
    assert changed == []


def test_a_changed_english_cell_turns_fuzzy_and_stays_english_until_translated(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(tool, "LOCALE", tmp_path / "locale")
    monkeypatch.setattr(tool, "NOTEBOOKS", tmp_path / "notebooks")
    english = tmp_path / "notebooks" / "01_x.ipynb"
    english.parent.mkdir()
    cells = [
        {"id": "a", "cell_type": "markdown", "metadata": {}, "source": "# One\n\nThe first text."},
        {"id": "b", "cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "import os  # the answer\nimport re  # noqa: F401"},
    ]  # fmt: skip
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    english.write_text(json.dumps(notebook), encoding="utf-8")
    path = tool.extract(english, LANG)
    catalog = tool.read_catalogue(path, LANG)
    assert [(m.context, m.id) for m in catalog if m.id] == [
        ("a", "# One\n\nThe first text."),
        ("b", "the answer"),
    ]
    for message in catalog:
        message.string = {"a": "# 一\n\n第一段。", "b": "答案"}.get(message.context, "")
    tool.write_catalogue(catalog, path)
    built = tool.translated_notebook(notebook, catalog, "01_x")
    assert tool._source(built["cells"][1]) == "import os  # 答案\nimport re  # noqa: F401"

    cells[0]["source"] = "# One\n\nThe first text, changed."
    english.write_text(json.dumps(notebook), encoding="utf-8")
    catalog = tool.read_catalogue(tool.extract(english, LANG), LANG)
    entry = catalog.get("# One\n\nThe first text, changed.", context="a")
    assert entry.fuzzy and entry.string == "# 一\n\n第一段。"
    previous = [line for line in path.read_text(encoding="utf-8").splitlines() if line[:2] == "#|"]
    assert previous == ['#| msgid "" "# One\\n" "\\n" "The first text."']  # for the translator
    assert _problems(catalog) == [f"a fuzzy: {entry.id[:60]!r}"]
    built = tool.translated_notebook(notebook, catalog, "01_x")
    assert tool._source(built["cells"][0]) == "# One\n\nThe first text, changed."


# -- the glossary ------------------------------------------------------------------------------


def glossary() -> list[tuple[str, str]]:
    """(English, Chinese) rows of the glossary's table; "a / b" rows give one pair each."""
    pairs = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and CJK.search(cells[1]) and cells[0] != "English":
            english = re.sub(r"\s*\(.*\)", "", cells[0])
            chinese = re.sub(r"（.*）", "", cells[1])
            pairs += zip(english.split(" / "), chinese.split(" / "))
    return pairs


def test_the_glossary_has_the_terms_the_issue_names():
    terms = dict(glossary())
    assert terms["token"] == "词元" and terms["mask"] == "掩码"
    assert terms["multi-head attention"] == "多头注意力" and terms["beam search"] == "束搜索"
    assert terms["layer normalization"] == "层规范化" and terms["label smoothing"] == "标签平滑"


KEY_TERMS = ["token", "mask", "multi-head attention", "positional encoding", "beam search"]


def _introduced(text: str, chinese: str, english: str) -> bool:
    """Whether the first ``chinese`` in ``text`` has ``english`` in the parentheses after
    it (or after the longer term it is part of); True when ``chinese`` is not used."""
    first = text.find(chinese)
    after = text[first + len(chinese) : first + len(chinese) + len(english) + 16]
    return first < 0 or english.lower() in after.lower()


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_key_terms_are_introduced_with_their_english_name(english):
    """The first use of a key term in a notebook carries its English name in parentheses,
    e.g. 词元（token）, or is part of a longer term that does: 填充掩码（padding mask). A
    notebook's title may name the term plainly when its first sentence introduces it."""
    terms = dict(glossary())
    prose = "\n".join(
        NOT_PROSE.sub(" ", tool._source(cell))
        for cell in _load(tool.edition_path(english, LANG))["cells"]
        if cell["cell_type"] == "markdown"
    )
    body = "\n".join(line for line in prose.splitlines() if not line.startswith("#"))
    missing = [
        term
        for term in KEY_TERMS
        if not (_introduced(prose, terms[term], term) or _introduced(body, terms[term], term))
    ]
    assert missing == []


# -- the library's catalogue -------------------------------------------------------------------


def library_catalogue():
    return tool.read_catalogue(LIBRARY_PO, LANG)


def test_the_library_catalogue_holds_exactly_the_marked_messages():
    """A message marked with _() or N_() but not in the catalogue (or one left there after
    its code went) fails; refresh with `pybabel extract` and `pybabel update` (README)."""
    marked = {
        message
        for *_, message, _, _ in extract_from_dir(
            str(ROOT / "transformer_lib"), keywords={"_": None, "N_": None}
        )
    }
    held = {m.id for m in library_catalogue() if m.id}
    assert (sorted(marked - held)[:3], sorted(held - marked)[:3]) == ([], [])


def test_every_library_message_is_translated_with_its_placeholders():
    catalog = library_catalogue()
    assert _problems(catalog) == []
    wrong = [
        m.id
        for m in catalog
        if m.id and sorted(PLACEHOLDER.findall(m.id)) != sorted(PLACEHOLDER.findall(m.string))
    ]
    assert wrong == []


def test_the_language_comes_from_course_lang(monkeypatch):
    message = next(m.id for m in library_catalogue() if m.id)
    monkeypatch.delenv("COURSE_LANG", raising=False)
    assert i18n._(message) == message
    monkeypatch.setenv("COURSE_LANG", LANG)
    assert CJK.search(i18n._(message))
    monkeypatch.setenv("COURSE_LANG", "klingon")
    with pytest.raises(ValueError, match="COURSE_LANG must be one of en, zh_CN; got 'klingon'"):
        i18n._(message)


# -- wrapping Chinese ---------------------------------------------------------------------------


def test_chinese_failure_messages_wrap_by_display_width():
    text = "你的掩码形状是 (B, 1, 1, S)，但分数的形状是 `(B, H, T, S)`：" * 6
    lines = wrap_message(text)
    assert len(lines) > 1 and "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(i18n.display_width(line) <= MESSAGE_WIDTH for line in lines)
    assert max(i18n.display_width(line) for line in lines) > MESSAGE_WIDTH - 4
    assert not any(line.startswith(("，", "。", "：", "）")) for line in lines)


def test_english_failure_messages_still_break_only_at_spaces():
    text = "the pattern is right but the dtype is torch.float32; masks are torch.bool " * 3
    lines = wrap_message(text.strip())
    assert " ".join(lines) == text.strip()
    assert all(len(line) <= MESSAGE_WIDTH for line in lines)
