"""Each Chinese document says what its English one says (issue 46, item 7), and `make`
leaves pip's index to the reader.

A Chinese document is X.zh-CN.md beside its English X.md. For every pair: the same section
structure (the heading levels, in order, and in each section as many paragraphs, list items,
table rows and code blocks, in the same order), the same links (each target as often as in the
English, a Chinese document or notebook counting for its English one), every code block and
every inline command of the English (`make ...`, `python ...`, `pip ...`, `bash ...`), and
the same counts written as words (three seeds, 三个种子; ten notebooks, 十个笔记本). Every
English document has its Chinese edition unless ENGLISH_ONLY says why not, and the number
of notebooks a document states is the number there are.

tests/test_i18n.py holds the rest of each pair (code names, numbers, no English prose, the
glossary); tests/test_docs.py the links that must exist.

A reader behind a slow link to PyPI sets `PIP_INDEX_URL` (and `PIP_EXTRA_INDEX_URL` for
PyTorch's CPU-only wheels), as the README says: `make install` and `make lab` must hand both
to pip unchanged, which the last test checks by running the Makefile against a stub venv.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import textwrap
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ZH = ".zh-CN.md"
# Folders that hold no document of the course: environments, generated editions, caches.
NOT_DOCUMENTS = {
    ".venv",
    "node_modules",
    "student",
    "student_zh_CN",
    "handouts",
    "handouts_zh_CN",
    "screenshots",
    "build",
    "checkpoints",
    "runs",
}
# English documents without a Chinese edition, and why a Chinese reader does without one.
ENGLISH_ONLY = {
    "data/README.md": "the corpus generator's grammar, for whoever changes the corpus; "
    "notebooks 01 and 07 describe the corpus to students in both languages",
    "locale/zh_CN/GLOSSARY.md": "bilingual already: the glossary the Chinese edition follows",
}

FENCE = re.compile(r"^([ \t]*)(```+)([^\n`]*)\n(.*?)^[ \t]*\2[ \t]*$", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*$", re.MULTILINE)
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")  # [text](target)
LINK_DEFINITION = re.compile(r"^[ \t]*\[[^\]\n]+\]:[ \t]*<?(\S+?)>?(?:[ \t].*)?$", re.MULTILINE)
BARE_URL = re.compile(r"(?<![(<\w/])https?://[^\s)>\]`]+")
SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:")
COMMENT = re.compile(r"(^|\s+)#(?!#).*")  # a shell or Python comment: translated
# An inline command: optional VAR=value settings, then a program the reader runs.
COMMAND = re.compile(
    r"^(?:[A-Z][A-Z0-9_]*=\S*\s+)*"
    r"(?:make|python3?|pip3?|bash|sudo|conda|jupyter|nbgrader|git|time|cd|"
    r"(?:\.\./)*\.venv/bin/\S+)(?:\s|$)"
)

# Counts written as words. "one" is left out (a, an, 一个 stand for it everywhere); "twice"
# is a count of two (两倍, 两遍).
ENGLISH_NUMBERS = {
    word: value
    for value, word in enumerate(
        "two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split(),
        start=2,
    )
} | {"twice": 2}
ENGLISH_COUNT = re.compile(rf"\b({'|'.join(ENGLISH_NUMBERS)})\b", re.IGNORECASE)
CHINESE_DIGITS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
# a numeral: a digit other than 一 (一个 is an article as often as "one"), or one with 十 (十一)
NUMERAL = "[二两三四五六七八九]?十[一二三四五六七八九]?|[二两三四五六七八九]"
# A Chinese numeral counts something when a measure word follows it (三个, 两遍, 十分钟; not
# 十分 "very", 两者 "both") and 第 does not precede it (第三 is "third").
MEASURE = "个种次遍套份名层步位倍行列张台本项道条组轮件人处类章节段句页格秒天周年"
CHINESE_COUNT = re.compile(rf"(?<![第一二两三四五六七八九十])({NUMERAL})(分钟|小时|[{MEASURE}])")


def chinese_value(numeral: str) -> int | None:
    """三 -> 3, 十 -> 10, 十一 -> 11, 二十 -> 20; None for what is not a plain numeral."""
    if "十" not in numeral:
        return CHINESE_DIGITS.get(numeral) if numeral != "一" else None
    tens, _, units = numeral.partition("十")
    if "十" in units or (tens and (tens not in CHINESE_DIGITS or tens == "一")):
        return None
    if units and units not in CHINESE_DIGITS:
        return None
    return (CHINESE_DIGITS[tens] if tens else 1) * 10 + (CHINESE_DIGITS[units] if units else 0)


def documents() -> list[Path]:
    """Every Markdown document of the course, English and Chinese."""
    return sorted(
        path
        for path in ROOT.rglob("*.md")
        if not any(
            part in NOT_DOCUMENTS or part.startswith(".") or part.endswith(".egg-info")
            for part in path.relative_to(ROOT).parts
        )
    )


def english_of(chinese: Path) -> Path:
    return chinese.with_name(chinese.name[: -len(ZH)] + ".md")


def chinese_of(english: Path) -> Path:
    return english.with_name(english.stem + ZH)


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


PAIRS = [(english_of(p), p) for p in documents() if p.name.endswith(ZH)]
PAIR_IDS = [rel(english) for english, _ in PAIRS]


# -- reading a document -------------------------------------------------------------------------


def code_blocks(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each fenced block as (language, lines): dedented, comments and blank lines dropped."""
    blocks = []
    for _, _, language, body in FENCE.findall(text):
        lines = textwrap.dedent(body).splitlines()
        kept = tuple(COMMENT.sub("", line).rstrip() for line in lines)
        blocks.append((language.strip(), tuple(line for line in kept if line.strip())))
    return blocks


def prose(text: str) -> str:
    """The text outside fenced blocks."""
    return FENCE.sub("", text)


def headings(text: str) -> list[tuple[int, str]]:
    return [(len(marks), title) for marks, title in HEADING.findall(prose(text))]


# The line under the title that links the other edition ("中文版：[X.zh-CN.md](...) ...",
# "English: [X.md](...)"): a pointer for the other language's reader, not content.
EDITION_LINK = re.compile(r"^(?:中文版：|English: )\[")


def block_kind(line: str) -> str | None:
    """What a stripped line starts: a list item, a table row, a code block (FENCE replaced
    by a marker) or, None, prose."""
    if re.match(r"(?:[-*+]|\d+\.)\s", line):
        return "item"
    if line.startswith("|"):
        return "row"
    return "code" if line == "\0code" else None


def blocks_by_section(text: str) -> list[tuple[str, list[str]]]:
    """Each section (the text before the first heading, then one per heading) as (heading,
    its blocks in order): "paragraph", "item" (one per list item), "row" (one per table row)
    and "code". A prose line continues the paragraph or list item before it; the line that
    links the other edition is no block."""
    text = FENCE.sub(lambda match: f"{match[1]}\0code", text)
    sections: list[tuple[str, list[str]]] = [("(before the first heading)", [])]
    for chunk in re.split(r"\n[ \t]*\n", text):
        lines = [line.strip() for line in chunk.splitlines() if line.strip()]
        lines = [line for line in lines if not EDITION_LINK.match(line)]
        previous = None
        for line in lines:
            if HEADING.match(line):
                sections.append((line, []))
                previous = None
                continue
            kind = block_kind(line)
            if kind is None and previous in {None, "code", "row"}:
                kind = "paragraph"
            if kind:
                sections[-1][1].append(kind)
                previous = kind
    return sections


def link_targets(path: Path, text: str) -> Counter:
    """The documents, files and addresses ``text`` links (code aside), each named as the
    English edition names it: X.zh-CN.md as X.md, notebooks/zh_CN/N.ipynb as notebooks/N.ipynb,
    and the document's other edition as "(the other edition)"."""
    outside_code = CODE_SPAN.sub("", prose(text))
    raw = (
        LINK.findall(outside_code)
        + LINK_DEFINITION.findall(outside_code)
        + BARE_URL.findall(outside_code)
    )
    chinese = path.name.endswith(ZH)
    partner = english_of(path) if chinese else chinese_of(path)
    targets: Counter = Counter()
    for target in raw:
        if SCHEME.match(target):
            targets[target] += 1
            continue
        file = target.split("#", 1)[0]
        if not file:
            targets["(a section of this document)"] += 1
            continue
        resolved = (path.parent / file).resolve()
        if resolved == partner:
            targets["(the other edition)"] += 1
            continue
        if chinese and resolved.name.endswith(ZH):
            resolved = english_of(resolved)
        elif chinese and resolved.parent == ROOT / "notebooks" / "zh_CN":
            resolved = ROOT / "notebooks" / resolved.name
        try:
            targets[rel(resolved)] += 1
        except ValueError:  # outside the repository
            targets[target] += 1
    return targets


def english_links_where_a_chinese_edition_exists(path: Path, text: str) -> list[str]:
    """Links of a Chinese document that name an English document whose Chinese edition
    exists, or an English notebook (the Chinese reader should land in Chinese)."""
    found = []
    for target in LINK.findall(CODE_SPAN.sub("", prose(text))):
        file = target.split("#", 1)[0]
        if not file or SCHEME.match(file):
            continue
        resolved = (path.parent / file).resolve()
        if resolved == english_of(path):
            continue
        if resolved.suffix == ".md" and not resolved.name.endswith(ZH):
            if chinese_of(resolved).exists():
                found.append(f"{target} (link {chinese_of(resolved).name})")
        elif resolved.suffix == ".ipynb" and resolved.parent == ROOT / "notebooks":
            found.append(f"{target} (link notebooks/zh_CN/{resolved.name})")
    return found


def inline_commands(text: str) -> set[str]:
    """Inline code spans of the prose that are commands, whitespace normalised."""
    spans = {" ".join(span.split()) for _, span in CODE_SPAN.findall(prose(text))}
    return {span for span in spans if COMMAND.match(span)}


def english_counts(text: str) -> Counter:
    outside_code = CODE_SPAN.sub("", prose(text))
    return Counter(ENGLISH_NUMBERS[w.lower()] for w in ENGLISH_COUNT.findall(outside_code))


def chinese_counts(text: str) -> Counter:
    outside_code = CODE_SPAN.sub("", prose(text))
    values = (chinese_value(numeral) for numeral, _ in CHINESE_COUNT.findall(outside_code))
    return Counter(value for value in values if value)


def difference(english: Counter, chinese: Counter) -> tuple[list[str], list[str]]:
    """(what the Chinese lacks, what only the Chinese has), each entry with its count."""

    def show(counter: Counter) -> list[str]:
        return [f"{key} ×{n}" if n > 1 else str(key) for key, n in sorted(counter.items())]

    return show(english - chinese), show(chinese - english)


# -- the pairs ----------------------------------------------------------------------------------


def test_every_english_document_has_its_chinese_edition():
    english = [p for p in documents() if not p.name.endswith(ZH)]
    assert len(english) >= 8, english  # the walk found the course's documents
    missing = [rel(p) for p in english if rel(p) not in ENGLISH_ONLY and not chinese_of(p).exists()]
    assert missing == [], (
        f"no Chinese edition (write X.zh-CN.md, or say why in ENGLISH_ONLY): {missing}"
    )
    orphans = [rel(p) for p in documents() if p.name.endswith(ZH) and not english_of(p).exists()]
    assert orphans == [], f"Chinese documents without their English one: {orphans}"
    stale = sorted(set(ENGLISH_ONLY) - {rel(p) for p in english})
    assert stale == [], f"ENGLISH_ONLY names documents that do not exist: {stale}"


@pytest.mark.parametrize(("english", "chinese"), PAIRS, ids=PAIR_IDS)
def test_the_same_sections_in_the_same_order(english, chinese):
    ours = headings(english.read_text(encoding="utf-8"))
    theirs = headings(chinese.read_text(encoding="utf-8"))
    if [level for level, _ in ours] == [level for level, _ in theirs]:
        return
    outline = [
        f"  {'#' * a[0] if a else '-':6} {a[1] if a else '(none)':50.50} | "
        f"{'#' * b[0] if b else '-':6} {b[1] if b else '(none)'}"
        for a, b in (
            (ours[i] if i < len(ours) else None, theirs[i] if i < len(theirs) else None)
            for i in range(max(len(ours), len(theirs)))
        )
    ]
    pytest.fail(
        f"{rel(chinese)}: its headings are not {rel(english)}'s "
        f"({len(theirs)} against {len(ours)}; level by level, in order):\n" + "\n".join(outline)
    )


@pytest.mark.parametrize(("english", "chinese"), PAIRS, ids=PAIR_IDS)
def test_the_same_paragraphs_lists_tables_and_code_in_each_section(english, chinese):
    """Nothing dropped or added between headings: each section holds as many paragraphs,
    list items, table rows and code blocks as the English one, in the same order."""
    ours = blocks_by_section(english.read_text(encoding="utf-8"))
    theirs = blocks_by_section(chinese.read_text(encoding="utf-8"))
    differ = [
        f"  {title_en} / {title_zh}: English {' '.join(a) or '(nothing)'}; "
        f"Chinese {' '.join(b) or '(nothing)'}"
        for (title_en, a), (title_zh, b) in zip(ours, theirs)
        if a != b
    ]
    assert differ == [], (
        f"{rel(chinese)}: sections whose blocks are not {rel(english)}'s:\n" + "\n".join(differ)
    )


@pytest.mark.parametrize(("english", "chinese"), PAIRS, ids=PAIR_IDS)
def test_the_same_links(english, chinese):
    ours = link_targets(english, english.read_text(encoding="utf-8"))
    text = chinese.read_text(encoding="utf-8")
    lacks, extra = difference(ours, link_targets(chinese, text))
    english_links = english_links_where_a_chinese_edition_exists(chinese, text)
    assert (lacks, extra, english_links) == ([], [], []), (
        f"{rel(chinese)} against {rel(english)}: links it lacks {lacks}; links only it has "
        f"{extra}; English documents or notebooks it links where a Chinese one exists "
        f"{english_links}"
    )


@pytest.mark.parametrize(("english", "chinese"), PAIRS, ids=PAIR_IDS)
def test_every_command_of_the_english(english, chinese):
    ours, theirs = (p.read_text(encoding="utf-8") for p in (english, chinese))
    lacks_blocks = Counter(code_blocks(ours)) - Counter(code_blocks(theirs))
    lacks_blocks_shown = [
        f"```{language} block starting {lines[0]!r}" if lines else f"empty ```{language} block"
        for language, lines in lacks_blocks
    ]
    lacks_commands = sorted(
        inline_commands(ours) - {" ".join(s.split()) for _, s in CODE_SPAN.findall(prose(theirs))}
    )
    assert (lacks_blocks_shown, lacks_commands) == ([], []), (
        f"{rel(chinese)} lacks what {rel(english)} tells the reader to run: code blocks "
        f"{lacks_blocks_shown} (comments aside); inline commands {lacks_commands}"
    )


@pytest.mark.parametrize(("english", "chinese"), PAIRS, ids=PAIR_IDS)
def test_the_same_counts(english, chinese):
    """Counts written as words agree: three ↔ 三, ten ↔ 十, and so on, as often in both.
    Chinese says 两 for "both" as well, so it may count two more often than the English."""
    ours = english_counts(english.read_text(encoding="utf-8"))
    theirs = chinese_counts(chinese.read_text(encoding="utf-8"))
    lacks, extra = difference(ours, theirs)
    extra = [entry for entry in extra if entry.split(" ")[0] != "2"]
    assert (lacks, extra) == ([], []), (
        f"{rel(chinese)} against {rel(english)}: counts it lacks {lacks}; counts only it has "
        f"{extra} (numbers written as words in the English, as numerals with a measure word "
        f"in the Chinese: ten notebooks, 十个笔记本)"
    )


NOTEBOOK_COUNT_EN = re.compile(
    rf"\b(?:the same|the course's|all(?: the)?) ({'|'.join(ENGLISH_NUMBERS)}) notebooks\b",
    re.IGNORECASE,
)
NOTEBOOK_COUNT_ZH = re.compile(rf"(?:同样|全部|课程的?)({NUMERAL})个笔记本")


def test_the_documents_count_the_notebooks_there_are():
    """notebooks/ holds as many notebooks as a document says the course has ("the same ten
    notebooks", 同样十个笔记本)."""
    there_are = len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    stated = []
    for path in documents():
        text = prose(path.read_text(encoding="utf-8"))
        stated += [
            (rel(path), m[0], ENGLISH_NUMBERS[m[1].lower()])
            for m in NOTEBOOK_COUNT_EN.finditer(text)
        ]
        stated += [(rel(path), m[0], chinese_value(m[1])) for m in NOTEBOOK_COUNT_ZH.finditer(text)]
    assert stated  # the READMEs say how many notebooks there are
    wrong = [f"{path}: {words!r}" for path, words, value in stated if value != there_are]
    assert wrong == [], f"notebooks/ holds {there_are} notebooks; these say otherwise: {wrong}"


def test_the_readers_find_what_they_need():
    """The extraction above sees what it must: a count, a command, a link, a heading."""
    text = (
        "# T\n\n## A\n\nRun `make lab` or `PIP_INDEX_URL=x make install`; see [g](g.md), "
        "[n](notebooks/01_embeddings.ipynb) and https://example.org/x. Three seeds, twice.\n"
        "```bash\nmake test   # a comment\n```\n"
    )
    assert headings(text) == [(1, "T"), (2, "A")]
    assert blocks_by_section(
        "中文版：[x](x.md)\n\n# T\n\nA\nB\n\n- a\n- b\n\n| h |\n|---|\n" + text
    ) == [
        ("(before the first heading)", []),
        ("# T", ["paragraph", "item", "item", "row", "row"]),
        ("# T", []),
        ("## A", ["paragraph", "code"]),
    ]
    assert inline_commands(text) == {"make lab", "PIP_INDEX_URL=x make install"}
    assert code_blocks(text) == [("bash", ("make test",))]
    assert english_counts(text) == Counter({3: 1, 2: 1})
    page = ROOT / "docs.zh-CN.md"
    zh = "[英文](docs.md) [g](g.zh-CN.md) [n](notebooks/zh_CN/01_embeddings.ipynb) 三个种子、十分钟、第三个、十分重要、两者、十二层"
    assert link_targets(page, zh) == Counter(
        {"(the other edition)": 1, "g.md": 1, "notebooks/01_embeddings.ipynb": 1}
    )
    assert chinese_counts(zh) == Counter({3: 1, 10: 1, 12: 1})
    assert chinese_counts("同样十一个笔记本、一个词元、二十一层") == Counter({11: 1, 21: 1})
    pip = ["-i", "x", "--index=x", "-ihttps://x", "--isol", "-e", ".", "--extra-index-url", "y"]
    assert overriding_options(pip) == ["-i", "--index=x", "-ihttps://x", "--isol"]


# -- pip's index, left to the reader -----------------------------------------------------------

MIRROR = "https://pypi.tuna.tsinghua.edu.cn/simple"
CPU_WHEELS = "https://download.pytorch.org/whl/cpu"
# pip options that replace or ignore the index the environment names.
OVERRIDES = ("-i", "--index-url", "--no-index", "--isolated")
STUB = """#!/bin/sh
printf '%s\\t%s\\t%s\\n' "$(basename "$0") $*" "${PIP_INDEX_URL-(unset)}" \\
    "${PIP_EXTRA_INDEX_URL-(unset)}" >> "$CALLS"
"""


def overriding_options(arguments: list[str]) -> list[str]:
    """The options among ``arguments`` that set or drop the index: -i, --index-url, --no-index,
    --isolated (which ignores the environment), also as pip accepts them abbreviated
    (--index, --isol) or joined to their value (-iURL, --index-url=URL)."""
    found = []
    for arg in arguments:
        name = arg.split("=", 1)[0]
        long = (
            name.startswith("--") and len(name) > 3 and any(o.startswith(name) for o in OVERRIDES)
        )
        if long or name == "-i" or re.match(r"-[a-zA-Z]*i", name) and not name.startswith("--"):
            found.append(arg)
    return found


@pytest.mark.parametrize("target", ["install", "lab"])
def test_make_hands_pip_index_url_to_pip(tmp_path, target):
    """`PIP_INDEX_URL=... PIP_EXTRA_INDEX_URL=... make install` (or `make lab`) runs pip with
    both in its environment and no option that replaces them. The Makefile runs in a copy of
    the course's build inputs whose .venv is a stub: each program logs its arguments and the
    two variables; nothing is installed."""
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "tools" / "lab_settings", tmp_path / "tools" / "lab_settings")
    stubs = tmp_path / ".venv" / "bin"
    stubs.mkdir(parents=True)
    for name in ("python", "python3", "pip", "pip3", "jupyter"):
        (stubs / name).write_text(STUB, encoding="utf-8")
        (stubs / name).chmod(0o755)
    calls = tmp_path / "calls.log"
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"} and not key.startswith("PIP_")
    }
    env |= {
        "PIP_INDEX_URL": MIRROR,
        "PIP_EXTRA_INDEX_URL": CPU_WHEELS,
        "CALLS": str(calls),
        "PATH": f"{stubs}{os.pathsep}{env.get('PATH', '')}",  # a bare `pip` is the stub too
    }
    result = subprocess.run(
        ["make", "--no-print-directory", target, f"PYTHON={stubs / 'python'}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    logged = [line.split("\t") for line in calls.read_text(encoding="utf-8").splitlines()]
    pip_runs = [
        (shlex.split(command), index, extra)
        for command, index, extra in logged
        if " -m pip " in f" {command} " or command.split()[0] in {"pip", "pip3"}
    ]
    assert pip_runs, f"`make {target}` ran no pip: {logged}"
    for arguments, index, extra in pip_runs:
        command = " ".join(arguments)
        assert (index, extra) == (MIRROR, CPU_WHEELS), (
            f"Makefile: `make {target}` ran `{command}` with PIP_INDEX_URL={index} and "
            f"PIP_EXTRA_INDEX_URL={extra}, not the reader's"
        )
        assert overriding_options(arguments) == [], (
            f"Makefile: `make {target}` runs `{command}`, whose "
            f"{overriding_options(arguments)} replaces the index the reader set"
        )
        files = [
            b
            for a, b in zip(arguments, arguments[1:])
            if a in {"-c", "-r", "--constraint", "--requirement"}
        ]
        for file in files:
            options = [
                line.split()[0]
                for line in (tmp_path / file).read_text(encoding="utf-8").splitlines()
                if line.strip().startswith("-")
            ]
            assert overriding_options(options) == [], (
                f"{file}: {overriding_options(options)} replaces the index the reader set"
            )
