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

import nbformat
import pytest
from babel.messages.extract import extract_from_dir
from notebook_runs import execute

from transformer_lib import i18n
from transformer_lib.teaching.exercises._core import MESSAGE_WIDTH, wrap_message

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
    built = tool.translated_notebook(_load(english), catalog, english.name, LANG)
    stored = _load(tool.edition_path(english, LANG))
    assert len(stored["cells"]) == len(built["cells"])
    for mine, theirs in zip(stored["cells"], built["cells"]):
        assert _cell_view(mine) == _cell_view(theirs)


def _code(cell: dict, lang: str = "en") -> str:
    """The cell's code as a tree (comments are not in it), choosing ``lang``."""
    return ast.dump(ast.parse(tool.with_language(tool._source(cell), lang)))


@pytest.mark.parametrize("english", ENGLISH, ids=IDS)
def test_both_editions_run_the_same_code(english):
    """The same code, but for the language the first code cell chooses (set_language)."""
    pairs = zip(_load(english)["cells"], _load(tool.edition_path(english, LANG))["cells"])
    for mine, theirs in pairs:
        if mine["cell_type"] == "code":
            assert _code(mine, LANG) == _code(theirs), mine["id"]


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
    built = tool.translated_notebook(notebook, catalog, "01_x", LANG)
    assert tool._source(built["cells"][1]) == "import os  # 答案\nimport re  # noqa: F401"

    cells[0]["source"] = "# One\n\nThe first text, changed."
    english.write_text(json.dumps(notebook), encoding="utf-8")
    catalog = tool.read_catalogue(tool.extract(english, LANG), LANG)
    entry = catalog.get("# One\n\nThe first text, changed.", context="a")
    assert entry.fuzzy and entry.string == "# 一\n\n第一段。"
    previous = [line for line in path.read_text(encoding="utf-8").splitlines() if line[:2] == "#|"]
    # The old English, for the translator, in whole strings (msgfmt reads them).
    assert previous == ['#| msgid ""', '#| "# One\\n"', '#| "\\n"', '#| "The first text."']
    assert _problems(catalog) == [f"a fuzzy: {entry.id[:60]!r}"]
    built = tool.translated_notebook(notebook, catalog, "01_x", LANG)
    assert tool._source(built["cells"][0]) == "# One\n\nThe first text, changed."


def test_a_long_changed_cell_extracted_twice_leaves_no_stray_comments(tmp_path, monkeypatch):
    """Babel wraps a long previous msgid (``#|``) mid-string and reads the pieces back as
    translator comments; a second extract must not turn them into ``# |`` lines."""
    monkeypatch.setattr(tool, "LOCALE", tmp_path / "locale")
    english = tmp_path / "01_x.ipynb"
    words = " ".join(f"word{i}" for i in range(60))
    cell = {"id": "a", "cell_type": "markdown", "metadata": {}, "source": words}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    english.write_text(json.dumps(notebook), encoding="utf-8")
    path = tool.extract(english, LANG)
    catalog = tool.read_catalogue(path, LANG)
    for message in catalog:
        message.string = "译文" if message.id else message.string
    tool.write_catalogue(catalog, path)
    cell["source"] = words + " changed"
    for _ in range(2):
        english.write_text(json.dumps(notebook), encoding="utf-8")
        tool.extract(english, LANG)
    stray = [line for line in path.read_text(encoding="utf-8").splitlines() if line[:3] == "# |"]
    assert stray == []


# -- the glossary ------------------------------------------------------------------------------


def _glossary_rows() -> list[list[str]]:
    """The cells of the glossary table's rows: English, 中文, Note, Avoid."""
    rows = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 4 and CJK.search(cells[1]):
            rows.append(cells)
    return [row for row in rows if row[0] != "English"]


def glossary() -> list[tuple[str, str]]:
    """(English, Chinese) rows of the glossary's table; "a / b" rows give one pair each."""
    pairs = []
    for cells in _glossary_rows():
        english = re.sub(r"\s*\(.*\)", "", cells[0])
        chinese = re.sub(r"（.*）", "", cells[1])
        pairs += zip(english.split(" / "), chinese.split(" / "))
    return pairs


def avoided() -> list[tuple[str, list[str], list[str]]]:
    """(English, its renderings, the renderings to avoid) for each row with an Avoid cell."""
    return [
        (cells[0], re.sub(r"（.*）", "", cells[1]).split(" / "), re.findall(r"`([^`]+)`", cells[3]))
        for cells in _glossary_rows()
        if cells[3]
    ]


def avoided_renderings(text: str) -> list[str]:
    """The avoided renderings ``text`` uses, each as "avoided (chosen)". An avoided string
    inside the row's own rendering (代码单元 in 代码单元格) is not counted."""
    found = []
    for english, chosen, avoid in avoided():
        rest = text
        for rendering in chosen:
            rest = rest.replace(rendering, "\0")
        found += [f"{bad} (→ {' / '.join(chosen)}: {english})" for bad in avoid if bad in rest]
    return found


def test_the_glossary_has_the_terms_the_issue_names():
    terms = dict(glossary())
    assert terms["token"] == "词元" and terms["mask"] == "掩码"
    assert terms["multi-head attention"] == "多头注意力" and terms["beam search"] == "束搜索"
    assert terms["layer normalization"] == "层规范化" and terms["label smoothing"] == "标签平滑"


def test_the_glossary_names_renderings_to_avoid_and_the_check_finds_them():
    rows = {english: (chosen, avoid) for english, chosen, avoid in avoided()}
    assert rows["to mask"] == (["掩蔽"], ["遮住", "遮键", "屏蔽"])
    assert rows["cell (of a notebook)"] == (["单元格"], ["代码单元"])
    assert avoided_renderings("下一个代码单元格；浏览器测试；重启内核；基本模型") == []
    assert avoided_renderings("下一个代码单元会把被遮住的键") == [
        "遮住 (→ 掩蔽: to mask)",
        "代码单元 (→ 单元格: cell (of a notebook))",
    ]
    assert avoided_renderings("在四种内核集下；BLEU分数") == [
        "BLEU分数 (→ BLEU得分: BLEU score)",
        "内核集 (→ 核函数集: kernel set)",
    ]


# Each Chinese document beside its English one: README.zh-CN.md, deploy/INSTRUCTORS.zh-CN.md, ...
CHINESE_DOCUMENTS = sorted({*ROOT.glob("*.zh-CN.md"), *ROOT.glob("*/*.zh-CN.md")})
CHINESE_TEXTS = [
    *(tool.catalogue_path(path, LANG) for path in ENGLISH),
    LIBRARY_PO,
    *CHINESE_DOCUMENTS,
]


@pytest.mark.parametrize(
    "path", CHINESE_TEXTS, ids=[str(p.relative_to(ROOT)) for p in CHINESE_TEXTS]
)
def test_the_chinese_edition_uses_no_rendering_the_glossary_avoids(path):
    """Every translation in a catalogue (Markdown, comments, the library's messages) and
    every Chinese document use the glossary's rendering, not one in its Avoid column."""
    if path.suffix == ".po":
        texts = [(m.context or m.id[:30], m.string) for m in tool.read_catalogue(path, LANG)]
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
        texts = [(f"line {number}", line) for number, line in enumerate(lines, 1)]
    found = [(where, bad) for where, text in texts if text for bad in avoided_renderings(text)]
    assert found == []


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
    """A message marked with _() or N_() in the library, or printed with say() by an English
    notebook, but not in the catalogue (or one left there after its code went) fails;
    refresh with `tools/i18n_notebooks.py library` (locale/README.md)."""
    marked = {m.id for m in tool.library_template(ENGLISH) if m.id}
    assert {
        message
        for *_, message, _, _ in extract_from_dir(
            str(ROOT / "transformer_lib"), keywords={"_": None, "N_": None}
        )
    } <= marked
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
    with pytest.raises(ValueError, match="`COURSE_LANG` must be one of en, zh_CN; got 'klingon'"):
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


# -- each edition chooses its own language --------------------------------------------------


def _language_calls(code: str) -> list[str]:
    """The argument of each top-level ``set_language(...)`` statement in ``code``."""
    return [
        ast.unparse(node.value.args[0]) if node.value.args else ""  # e.g. 'en'
        for node in ast.parse(code).body
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "set_language"
    ]


EDITIONS = [(path, "en") for path in ENGLISH] + [
    (tool.edition_path(path, LANG), LANG) for path in ENGLISH
]


@pytest.mark.parametrize(
    "notebook, lang", EDITIONS, ids=[f"{lang}-{path.stem}" for path, lang in EDITIONS]
)
def test_every_notebook_chooses_its_editions_language_in_its_first_code_cell(notebook, lang):
    """`set_language("en")` in the English notebook, `set_language("zh_CN")` in the Chinese
    one (the build writes it), once, in the first code cell: the notebook speaks its
    edition's language whatever COURSE_LANG says where it is opened."""
    code = [tool._source(cell) for cell in _load(notebook)["cells"] if cell["cell_type"] == "code"]
    assert _language_calls(code[0]) == [repr(lang)]
    assert "from transformer_lib.i18n import set_language" in code[0]
    assert [cell for cell in code[1:] if "set_language" in cell] == []


def test_set_language_overrides_course_lang_and_checks_its_argument(monkeypatch):
    message = next(m.id for m in library_catalogue() if m.id)
    monkeypatch.setenv("COURSE_LANG", "en")  # the class hub's deploy/ sets this for everyone
    i18n.set_language(LANG)
    assert i18n.current_language() == LANG and CJK.search(i18n._(message))
    i18n.set_language("en")
    assert i18n._(message) == message
    with pytest.raises(ValueError, match="`language` must be one of en, zh_CN; got 'zh'"):
        i18n.set_language("zh")
    assert i18n.current_language() == "en"


def test_the_build_makes_the_language_line_choose_the_editions_language():
    english = (
        'from transformer_lib.i18n import set_language\n\nset_language("en")  # the language\n'
    )
    assert tool.with_language(english, LANG) == english.replace('"en"', '"zh_CN"')
    assert tool.with_language('print(set_language("en"))', LANG) == 'print(set_language("en"))'


@pytest.mark.slow
@pytest.mark.parametrize("course_lang", [None, "en"], ids=["no-COURSE_LANG", "COURSE_LANG=en"])
def test_the_chinese_edition_speaks_chinese_wherever_it_is_opened(
    course_lang, monkeypatch, tmp_path
):
    """Notebook 00 of the Chinese edition, run as a plain `jupyter lab`, VS Code or nbgrader
    runs it (no COURSE_LANG) and as the class hub does (deploy/ sets COURSE_LANG=en): its
    exercise checks answer in Chinese."""
    if course_lang is None:
        monkeypatch.delenv("COURSE_LANG", raising=False)
    else:
        monkeypatch.setenv("COURSE_LANG", course_lang)
    path = tool.edition_path(ENGLISH[0], LANG)
    notebook = nbformat.read(path, as_version=4)
    execute(notebook, path.name, tmp_path)
    printed = [
        line
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if output.get("name") == "stdout"
        for line in output["text"].splitlines()
        if line.startswith("✓")  # what an exercise check prints when the answer is right
    ]
    assert printed and all(CJK.search(line) for line in printed), printed


# -- README.zh-CN.md and the other Chinese documents ----------------------------------------------


@pytest.mark.parametrize(
    "chinese", CHINESE_DOCUMENTS, ids=[str(p.relative_to(ROOT)) for p in CHINESE_DOCUMENTS]
)
def test_the_chinese_readme_has_every_section_command_code_name_and_number_of_the_english(
    chinese,
):
    """README.zh-CN.md (and each Chinese document: X.zh-CN.md beside X.md) is whole, not a
    pointer to the English one: the same headings (level and order), every line of code
    blocks (comments aside, they are translated), every inline code span (commands, file
    names, settings) and the same numbers, no English prose, and no sentence that sends the
    reader to the English edition for the rest."""
    fence = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
    names = "January February March April May June July August September October November December"
    months = rf"\b(?:{'|'.join(names.split())})\b"  # 25 November 2026: the 11 of 2026年11月25日

    def month(match: re.Match) -> str:
        return str(names.split().index(match[0]) + 1)

    def parts(path: Path) -> dict:
        text = path.read_text(encoding="utf-8")
        prose = fence.sub("", text)
        code = [
            re.sub(r"(^|\s+)#(?!#).*", "", line).rstrip()  # a comment is translated
            for block in fence.findall(text)
            for line in block.splitlines()[1:-1]
        ]
        return {
            "headings": re.findall(r"^#+(?= )", prose, re.MULTILINE),
            "code": {line for line in code if line.strip()},
            "spans": {" ".join(s.split()) for _, s in re.findall(r"(`+)(.+?)\1", prose, re.S)},
            "numbers": set(re.findall(r"\d+(?:[.,]\d+)*", re.sub(months, month, text))),
            "text": text,
        }

    original = chinese.with_name(chinese.name.replace(".zh-CN.md", ".md"))
    english, chinese = parts(original), parts(chinese)
    assert chinese["headings"] == english["headings"]
    assert sorted(english["code"] - chinese["code"]) == []
    assert sorted(english["spans"] - chinese["spans"]) == []
    assert (
        sorted(english["numbers"] - chinese["numbers"]),
        sorted(chinese["numbers"] - english["numbers"]),
    ) == ([], [])
    assert english_prose(fence.sub("", chinese["text"])) == []
    assert chinese["text"].count(f"]({original.name})") == 1  # the English edition, on top


# -- sentences a notebook prints ---------------------------------------------------------------


def test_say_prints_a_sentence_in_the_language_the_notebook_chose(monkeypatch, capsys):
    """A notebook prints prose with say(): the same code prints English in the English
    edition and Chinese in the Chinese one, from the library's catalogue."""
    monkeypatch.setenv("COURSE_LANG", "en")  # so that monkeypatch restores what set_language sets
    i18n.set_language("en")
    i18n.say("German: {text}", text="Hund")
    i18n.set_language(LANG)
    i18n.say("German: {text}", text="Hund")
    assert capsys.readouterr().out == "German: Hund\n德语：Hund\n"


def test_the_sentences_a_notebook_says_are_found_and_must_be_literals():
    def notebook(*codes: str) -> dict:
        cells = [
            {"id": f"c{n}", "cell_type": "code", "source": code} for n, code in enumerate(codes)
        ]
        return {"cells": [{"id": "m", "cell_type": "markdown", "source": "say('no')"}, *cells]}

    found = notebook('say("{n} keys are hidden.", n=3)', 'if x:\n    say("None is.")\nprint("x")')
    assert tool.said(found, "01_x") == ["{n} keys are hidden.", "None is."]
    for wrong in ('say(f"{n} keys are hidden.")', "say(sentence)", "say()"):
        with pytest.raises(
            ValueError, match=r"01_x, code cell 2 \(c1\): say\(\) takes its sentence"
        ):
            tool.said(notebook("x = 1", wrong), "01_x")
