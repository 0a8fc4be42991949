"""The Chinese edition's notebooks: built from the English ones plus gettext catalogues.

Usage: python tools/i18n_notebooks.py {extract,build,stats,library} [--lang zh_CN] [NOTEBOOK ...]
(default: every notebooks/NN_*.ipynb)

- ``extract`` updates ``locale/<lang>/LC_MESSAGES/<notebook>.po`` from the English notebook,
  as ``msgmerge`` does for software (Babel's ``Catalog.update``): a new cell gets an
  untranslated entry, a changed cell's entry turns fuzzy (its old English kept as
  ``#| msgid`` for the translator), a deleted cell's entry becomes obsolete (``#~``).
- ``build`` writes ``notebooks/<lang>/<notebook>.ipynb``: the English notebook with each
  translated text put in and its slides cut again for the translated text's heights (the
  English outputs stand in for the edition's own until ``make zh`` executes it). Untranslated or fuzzy text stays English, and
  ``tests/test_i18n.py`` fails until it is translated.
- ``stats`` prints, per catalogue, the entries, how many are translated, fuzzy and
  untranslated, and the English words they hold.
- ``library`` updates the library's catalogue,
  ``transformer_lib/locale/<lang>/LC_MESSAGES/transformer_lib.po``, as ``pybabel extract``
  and ``pybabel update`` would: from the messages the library marks with ``_()`` and
  ``N_()``, and from the sentences the English notebooks print with ``say()``
  (``transformer_lib.i18n.say``: a printed sentence is translated where it is printed,
  so the same code prints Chinese in the Chinese edition).

What is translated: every Markdown cell (one entry each, its cell id as the context) and
every comment in code that explains something (one entry per distinct comment in a cell).
Code, printed strings and outputs stay as they are, so both editions run the same code, but
for one line: the first code cell's ``set_language("en")`` becomes ``set_language("zh_CN")``,
so that the edition speaks its language wherever it is opened (the library's hints, labels
and messages come from its own catalogue, ``transformer_lib/locale``).
Directive comments (``# mirrors:``, nbgrader's ``### BEGIN SOLUTION``, ``# noqa``) and
comments without a word in them (``# (B, T, D) -> (B, H, T, Dh)``) are not translated.
"""

from __future__ import annotations

import argparse
import ast
import copy
import io
import json
import re
import sys
import tokenize
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LOCALE = ROOT / "locale"
LIBRARY = ROOT / "transformer_lib"
DIRECTIVES = re.compile(r"#+\s*(mirrors:|noqa|type:|fmt:|BEGIN |END |YOUR CODE|NBVAL_)")
A_WORD = re.compile(r"[A-Za-z]{3,}")
# The one line of code in which the editions differ: the edition's language, chosen in the
# notebook's first code cell (transformer_lib.i18n.set_language).
LANGUAGE_LINE = re.compile(r'^set_language\("en"\)', re.MULTILINE)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slide_metadata import _source, with_slides  # noqa: E402


def english_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def catalogue_path(notebook: Path, lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / f"{notebook.stem}.po"


def edition_path(notebook: Path, lang: str) -> Path:
    return NOTEBOOKS / lang / notebook.name


def _comments(code: str) -> list[tuple[int, int, str]]:
    """(line, column, text without '#') of each translatable comment in ``code``."""
    found = []
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    for token in tokens:
        if token.type != tokenize.COMMENT or DIRECTIVES.match(token.string):
            continue
        text = token.string.lstrip("#").strip()
        if A_WORD.search(text):
            found.append((token.start[0], token.start[1], text))
    return found


def messages(notebook: dict) -> list[tuple[str, str, str]]:
    """(context, English text, note for the translator) of every translatable text."""
    found = []
    for number, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "markdown":
            found.append((cell["id"], _source(cell), f"Markdown cell {number}"))
        elif cell["cell_type"] == "code":
            for _, _, text in _comments(_source(cell)):
                found.append((cell["id"], text, f"comment in code cell {number}"))
    return found


def template(notebook: dict, name: str) -> Catalog:
    catalog = Catalog(project=f"Transformer course, notebook {name}", fuzzy=False)
    for context, text, note in messages(notebook):
        message = catalog.add(text, context=context, auto_comments=[note])
        message.flags.discard("python-format")  # "95% interval" is prose, not a %-format
    return catalog


def read_catalogue(path: Path, lang: str) -> Catalog:
    with open(path, "rb") as po:
        catalog = read_po(po, locale=lang)
    # Babel wraps a long previous msgid (``#|``) mid-string and reads the wrapped lines back
    # as translator comments ("# | ..."): drop them, or every extract would add more.
    for message in catalog:
        message.user_comments = [c for c in message.user_comments if not c.startswith("|")]
    return catalog


def write_catalogue(catalog: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as po:
        write_po(po, catalog, include_previous=True, sort_output=False)


def extract(notebook_path: Path, lang: str) -> Path:
    notebook = json.loads(notebook_path.read_text(encoding="utf-8"))
    path = catalogue_path(notebook_path, lang)
    fresh = template(notebook, notebook_path.stem)
    if path.exists():
        catalog = read_catalogue(path, lang)
        catalog.update(fresh, update_header_comment=False, update_creation_date=False)
    else:
        catalog = Catalog(
            locale=lang,
            project=fresh.project,
            version="0.1",
            header_comment=f"# {lang} translation of notebook {notebook_path.stem}: made and updated by\n"
            "# `python tools/i18n_notebooks.py extract`; translate the empty and fuzzy entries.",
            last_translator="Transformer course",
            language_team=f"{lang} <course glossary: locale/{lang}/GLOSSARY.md>",
            fuzzy=False,
        )
        catalog.update(fresh, update_creation_date=False)
    write_catalogue(catalog, path)
    return path


def _translated(catalog: Catalog, text: str, context: str) -> str:
    """The translation of ``text``, or ``text`` itself when there is none or it is fuzzy."""
    message = catalog.get(text, context=context)
    if message is None or message.fuzzy or not message.string:
        return text
    return message.string


def _translate_comments(code: str, catalog: Catalog, context: str) -> str:
    lines = code.split("\n")
    for line, column, text in _comments(code):
        row = lines[line - 1]
        lines[line - 1] = row[:column] + "# " + _translated(catalog, text, context)
    return "\n".join(lines)


def with_language(code: str, lang: str) -> str:
    """``code`` with the English edition's ``set_language("en")`` line choosing ``lang``."""
    return LANGUAGE_LINE.sub(f'set_language("{lang}")', code)


def translated_notebook(english: dict, catalog: Catalog, name: str, lang: str) -> dict:
    """The ``lang`` edition of ``english`` that ``catalog`` makes: text translated, its
    language chosen, slides cut again."""
    notebook = copy.deepcopy(english)
    for cell in notebook["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = _translated(catalog, _source(cell), cell["id"])
        elif cell["cell_type"] == "code":
            code = _translate_comments(_source(cell), catalog, cell["id"])
            cell["source"] = with_language(code, lang)
    return with_slides(notebook, name)


def build(notebook_path: Path, lang: str) -> Path:
    english = json.loads(notebook_path.read_text(encoding="utf-8"))
    catalog = read_catalogue(catalogue_path(notebook_path, lang), lang)
    edition = translated_notebook(english, catalog, notebook_path.name, lang)
    out = edition_path(notebook_path, lang)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(edition, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def said(notebook: dict, name: str) -> list[str]:
    """The sentences ``notebook``'s code prints with ``say(...)``, in order. A sentence that
    is not a string literal cannot be put in the catalogue: an error naming its cell."""
    found = []
    for number, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse(_source(cell))):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func) == "say"):
                continue
            first = node.args[0] if node.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                raise ValueError(
                    f"{name}, code cell {number} ({cell['id']}): say() takes its sentence as "
                    f"a string literal (its values as keywords); got {ast.unparse(node)}"
                )
            found.append(first.value)
    return found


def library_catalogue_path(lang: str) -> Path:
    return LIBRARY / "locale" / lang / "LC_MESSAGES" / "transformer_lib.po"


def library_template(notebooks: list[Path]) -> Catalog:
    """What the library's catalogue must hold: the library's ``_()`` and ``N_()`` messages,
    then the sentences ``notebooks`` print with ``say()``."""
    catalog = Catalog(project="transformer_lib", version="0.1", fuzzy=False)
    marked = extract_from_dir(str(LIBRARY), keywords={"_": None, "N_": None})
    for _, _, message, comments, context in marked:
        catalog.add(message, auto_comments=comments, context=context)
    for path in notebooks:
        for sentence in said(json.loads(path.read_text(encoding="utf-8")), path.stem):
            catalog.add(sentence, auto_comments=[f"printed by notebook {path.stem}"])
    return catalog


def update_library(lang: str) -> Path:
    """The library's catalogue updated from ``library_template``, as ``pybabel update``
    writes it (a changed message turns fuzzy, a vanished one obsolete)."""
    path = library_catalogue_path(lang)
    catalog = read_catalogue(path, lang)
    template = library_template(english_notebooks())
    catalog.update(template, update_header_comment=False, update_creation_date=False)
    with open(path, "wb") as po:
        write_po(po, catalog)
    return path


def _row(name: str, counts: list[int]) -> str:
    return f"{name:<34}" + "".join(f"{n:>{w}}" for n, w in zip(counts, (8, 6, 6, 6, 8)))


def stats(paths: list[Path], lang: str) -> str:
    rows = [f"{'catalogue':<34}{'entries':>8}{'done':>6}{'fuzzy':>6}{'todo':>6}{'words':>8}"]
    totals = [0, 0, 0, 0, 0]
    for path in paths:
        entries = [m for m in read_catalogue(path, lang) if m.id]
        counts = [
            len(entries),
            sum(bool(m.string) and not m.fuzzy for m in entries),
            sum(m.fuzzy for m in entries),
            sum(not m.string for m in entries),
            sum(len(m.id.split()) for m in entries),
        ]
        totals = [a + b for a, b in zip(totals, counts)]
        rows.append(_row(path.name, counts))
    return "\n".join([*rows, _row("total", totals)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["extract", "build", "stats", "library"])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--lang", default="zh_CN")
    args = parser.parse_args(argv)
    notebooks = [path.resolve() for path in args.notebooks] or english_notebooks()
    if args.command == "library":
        print(f"library: {update_library(args.lang).relative_to(ROOT)}")
        return 0
    if args.command == "stats":
        library = library_catalogue_path(args.lang)
        paths = [catalogue_path(path, args.lang) for path in notebooks]
        print(stats(paths + [library] * library.exists(), args.lang))
        return 0
    for path in notebooks:
        done = extract(path, args.lang) if args.command == "extract" else build(path, args.lang)
        print(f"{args.command}: {done.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
