"""The README is a newcomer's page and its documents are there: every relative link of the
two READMEs, and of the documents they link, names a file that exists; the two READMEs link
the same documents (a Chinese document counts for its English one, X.md for X.zh-CN.md, and
a Chinese notebook for its English one); every English document a README links has its
Chinese edition; the English README fits in 200 lines. What each Chinese document says is
held to its English one in tests/test_i18n.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READMES = (ROOT / "README.md", ROOT / "README.zh-CN.md")
MAX_README_LINES = 200
# Linked from both READMEs in English only: none (tests/test_doc_mirrors.py lists the English
# documents without a Chinese edition, none of which a README links, and says why).
ENGLISH_ONLY: set[Path] = set()
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def links(path: Path) -> set[Path]:
    """The files ``path``'s relative Markdown links name (anchors dropped, code blocks and
    web addresses skipped)."""
    text = CODE_SPAN.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    targets = {target.split("#", 1)[0] for target in LINK.findall(text)}
    return {
        (path.parent / target).resolve()
        for target in targets
        if target and not re.match(r"[a-z][a-z0-9+.-]*:", target)  # https:, mailto:
    }


def chinese_edition(path: Path) -> Path:
    """The Chinese counterpart of an English document or notebook: X.md -> X.zh-CN.md,
    notebooks/N.ipynb -> notebooks/zh_CN/N.ipynb; anything else stands for itself."""
    if path.suffix == ".md" and not path.name.endswith(".zh-CN.md"):
        return path.with_name(path.stem + ".zh-CN.md")
    if path.suffix == ".ipynb" and path.parent == ROOT / "notebooks":
        return path.parent / "zh_CN" / path.name
    return path


def documents() -> list[Path]:
    """The READMEs and every Markdown document they link, and those documents' links."""
    seen: list[Path] = []
    todo = list(READMES)
    while todo:
        path = todo.pop()
        if path in seen or not path.exists():
            continue
        seen.append(path)
        todo += [p for p in links(path) if p.suffix == ".md" and ROOT in p.parents]
    return sorted(seen)


def dead_links(path: Path) -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in links(path) if not p.exists())


def linked_documents(readme: Path) -> set[Path]:
    """What a README links, the other edition of itself left out."""
    return links(readme) - set(READMES)


def as_english(paths: set[Path]) -> set[Path]:
    """Chinese documents and notebooks named by their English counterparts."""
    english = {}
    for path in paths:
        for candidate in (
            path.with_name(path.name.replace(".zh-CN.md", ".md")),
            path.parent.parent / path.name if path.parent.name == "zh_CN" else path,
        ):
            if candidate != path and chinese_edition(candidate) == path:
                english[path] = candidate
    return {english.get(path, path) for path in paths}


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_names_a_file_that_exists(path):
    assert dead_links(path) == []


def test_the_two_readmes_link_the_same_documents():
    english, chinese = (linked_documents(readme) for readme in READMES)
    assert english == as_english(chinese)
    assert {chinese_edition(p) for p in english if p not in ENGLISH_ONLY} <= chinese


def test_every_english_document_the_readme_links_has_its_chinese_edition():
    english = [
        p for p in linked_documents(READMES[0]) if p.suffix == ".md" and p not in ENGLISH_ONLY
    ]
    assert english  # the README sends its reader on
    missing = sorted(str(p.relative_to(ROOT)) for p in english if not chinese_edition(p).exists())
    assert missing == []


def test_each_chinese_document_links_the_chinese_editions():
    """A Chinese document sends its reader to Chinese documents where they exist: its links
    are its English document's, each replaced by its Chinese edition."""
    for english in documents():
        if english.name.endswith(".zh-CN.md") or not chinese_edition(english).exists():
            continue
        chinese = chinese_edition(english)
        expected = {
            chinese_edition(p) if chinese_edition(p).exists() else p for p in links(english)
        }
        own = {english, chinese}
        assert links(chinese) - own == expected - own, chinese.name


def test_the_readme_is_read_in_five_minutes():
    for readme in READMES:
        lines = readme.read_text(encoding="utf-8").count("\n")
        assert lines <= MAX_README_LINES, f"{readme.name}: {lines} lines"


def test_the_link_reader_skips_code_and_web_addresses(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "[a](a.md) [b](https://example.org/b.md) [c](c.md#part) `[e](e.md)`\n"
        "[`f`](f.md)\n```\n[d](d.md)\n```\n",
        encoding="utf-8",
    )
    folder = tmp_path.resolve()
    assert links(page) == {folder / "a.md", folder / "c.md", folder / "f.md"}
    assert chinese_edition(ROOT / "notebooks" / "04_masking.ipynb") == (
        ROOT / "notebooks" / "zh_CN" / "04_masking.ipynb"
    )
