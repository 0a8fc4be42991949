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
  ``N_()``, from the templates its errors are written from (what an argument must be and
  the hint that ``transformer_lib._checks.fail`` is given: ``error_templates``), and from
  the sentences the English notebooks print with ``say()`` (or show in a figure with ``_()``)
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
import datetime
import io
import itertools
import json
import re
import string
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import normalize, read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LOCALE = ROOT / "locale"
LIBRARY = ROOT / "transformer_lib"
DIRECTIVES = re.compile(r"#+\s*(mirrors:|noqa|type:|fmt:|BEGIN |END |YOUR CODE|NBVAL_)")
A_WORD = re.compile(r"[A-Za-z]{3,}")
# The one line of code in which the editions differ: the edition's language, chosen in the
# notebook's first code cell (transformer_lib.i18n.set_language).
LANGUAGE_LINE = re.compile(r'^set_language\("en"\)', re.MULTILINE)
# Babel guesses a message's format flags from its English whenever it reads or adds one
# ("99.9 % sure" is a %-format to it, "$x_{i}$" a str.format template), and `msgfmt -c`
# then holds the translation to that format. The writers drop the flags that are false:
# a notebook's text (Markdown, comments) is no format at all, and the library's messages
# are str.format templates (transformer_lib.i18n), never %-formats.
NOT_FORMATS = frozenset({"python-format", "python-brace-format"})
LIBRARY_NOT_FORMATS = frozenset({"python-format"})

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
        catalog.add(text, context=context, auto_comments=[note])
    return catalog


def read_catalogue(path: Path, lang: str) -> Catalog:
    """The catalogue at ``path``. A msgid defined twice (by hand: the writers here cannot)
    is read as one entry when both give the same translation, and is an error when they
    differ, where Babel would keep the first and drop the other without a word."""
    _check_repeated_msgids(path, lang)
    with open(path, "rb") as po:
        catalog = read_po(po, locale=lang)
    # Babel reads a fuzzy entry's old English (the ``#|`` lines write_catalogue writes) back
    # as translator comments ("| ..."): drop them, or every extract would add more.
    for message in catalog:
        message.user_comments = [c for c in message.user_comments if not c.startswith("|")]
    return catalog


def catalogue_entries(path: Path, lang: str) -> list[tuple[int, Message]]:
    """Each entry of the catalogue at ``path`` as the file writes it, with the line of its
    ``msgid`` (the header and obsolete entries aside). Unlike ``read_po``, which merges a
    msgid defined twice into one entry and guesses format flags again from the English,
    this keeps every definition and the flags the file gives. Entries are separated by
    blank lines, as every PO writer separates them."""
    entries = []
    for first, block in _blocks(path.read_text(encoding="utf-8").splitlines(keepends=True)):
        msgids = [n for n, line in enumerate(block) if line.startswith("msgid ")]
        if len(msgids) > 1:
            raise ValueError(
                f"{path}:{first + msgids[1]}: a second entry with no blank line before it"
            )
        written = {
            f.strip() for line in block if line.startswith("#,") for f in line[2:].split(",")
        }
        for message in read_po(block, locale=lang):
            if message.id:
                message.flags = written
                entries.append((first + message.lineno - 1, message))
    return entries


def _check_repeated_msgids(path: Path, lang: str) -> None:
    first: dict[tuple, tuple[int, str]] = {}
    for line, message in catalogue_entries(path, lang):
        key = (message.context, message.id)
        if key in first and first[key][1] != message.string:
            raise ValueError(
                f"{path}:{line}: msgid {message.id[:60]!r} is defined again with another "
                f"translation (first at line {first[key][0]}); keep one of the two entries"
            )
        first.setdefault(key, (line, message.string))


def _blocks(lines: list[str]) -> list[tuple[int, list[str]]]:
    """(number of its first line, its lines) of each run of non-blank ``lines``."""
    blocks = []
    for text, run in itertools.groupby(
        enumerate(lines, start=1), key=lambda row: bool(row[1].strip())
    ):
        if text:
            rows = list(run)
            blocks.append((rows[0][0], [line for _, line in rows]))
    return blocks


def write_catalogue(
    catalog: Catalog, path: Path, not_formats: frozenset[str] = NOT_FORMATS
) -> None:
    """Write ``catalog`` to ``path`` in a form ``msgfmt -c`` accepts: without the format
    flags ``not_formats`` that Babel guessed (NOT_FORMATS: a notebook's; LIBRARY_NOT_FORMATS:
    the library's), and with a fuzzy entry's old English (``#| msgid``) in whole strings,
    as msgmerge writes it (Babel's ``include_previous`` wraps it like prose, inside its
    strings)."""
    messages = [*catalog, *catalog.obsolete.values()]
    for message in messages:
        message.flags -= not_formats
    written = io.BytesIO()
    write_po(written, catalog, sort_output=False)
    entries = written.getvalue().decode(catalog.charset).split("\n\n")
    assert len(entries) == len(messages) + 1, "an entry holds a blank line"  # and the end
    for number, message in enumerate(messages):
        if message.previous_id:
            lines = entries[number].split("\n")
            first = next(i for i, line in enumerate(lines) if line.startswith(("msgctxt", "msgid")))
            lines.insert(first, _previous(message.previous_id))
            entries[number] = "\n".join(lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("\n\n".join(entries).encode(catalog.charset))


def _previous(previous_id: list[str]) -> str:
    """The ``#|`` lines of an entry whose English was ``previous_id``, within 76 columns."""
    lines = []
    for keyword, text in zip(("msgid", "msgid_plural"), previous_id):
        first, *rest = normalize(text, width=73).split("\n")
        lines += [f"#| {keyword} {first}", *(f"#| {line}" for line in rest)]
    return "\n".join(lines)


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
            revision_date=datetime.datetime.now(datetime.timezone.utc),
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


LOOKUPS = ("say", "_", "i18n._")  # the calls whose first argument the catalogue must hold


def said(notebook: dict, name: str) -> list[str]:
    """The sentences ``notebook``'s code prints with ``say(...)`` or looks up with ``_(...)``
    (a figure's title, ``_("...").format(...)``), in order. A sentence that is not a string
    literal cannot be put in the catalogue: an error naming its cell."""
    found = []
    for number, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        for node in ast.walk(ast.parse(_source(cell))):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func) in LOOKUPS):
                continue
            first = node.args[0] if node.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                raise ValueError(
                    f"{name}, code cell {number} ({cell['id']}): {ast.unparse(node.func)}() "
                    f"takes its sentence as a string literal (its values as keywords); "
                    f"got {ast.unparse(node)}"
                )
            found.append(first.value)
    return found


def library_catalogue_path(lang: str) -> Path:
    return LIBRARY / "locale" / lang / "LC_MESSAGES" / "transformer_lib.po"


# The house error, transformer_lib._checks.fail(name, expected, got, hint="", error, **values):
# its arguments that are templates (looked up in the catalogue), by keyword and position.
ERROR_TEMPLATES = {"expected": 1, "hint": 3}
ERROR_NOTES = {
    "expected": "an error: what an argument must be (`{name}` must be …; got …)",
    "hint": "an error's hint, after `{name}` must be …; got …",
}


class _Module:
    """A module of the library as the error scan reads it: its tree, each node's parent, and
    where each imported name comes from."""

    def __init__(self, path: Path, root: Path) -> None:
        self.path = path
        parts = path.relative_to(root.parent).with_suffix("").parts
        self.package = ".".join(parts[:-1] if parts[-1] != "__init__" else parts)
        self.name = ".".join(parts) if parts[-1] != "__init__" else self.package
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.parent = {c: n for n in ast.walk(self.tree) for c in ast.iter_child_nodes(n)}
        self.imported: dict[str, tuple[str, str]] = {}  # local name -> (module, its name)
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ImportFrom):
                base = self.package.split(".")[: len(self.package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.level else [node.module or ""])
                for alias in node.names:
                    self.imported[alias.asname or alias.name] = (module.strip("."), alias.name)

    def function(self, node: ast.AST) -> ast.FunctionDef | None:
        """The function ``node`` stands in (None at module level)."""
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
        return None

    def top_level(self, name: str) -> list[ast.AST]:
        """The values the module's own top-level statements bind ``name`` to."""
        return _bound(self.tree.body, name)


def _bound(statements: list[ast.stmt], name: str) -> list[ast.AST]:
    """The values that the assignments among ``statements`` give ``name``."""
    return [
        node.value
        for node in statements
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        and node.value is not None
        and any(
            isinstance(t, ast.Name) and t.id == name
            for t in getattr(node, "targets", []) or [node.target]
        )
    ]


def _parameters(function: ast.FunctionDef) -> list[ast.arg]:
    args = function.args
    return [*args.posonlyargs, *args.args, *args.kwonlyargs]


def _argument(call: ast.Call, keyword: str, position: int) -> ast.AST | None:
    for given in call.keywords:
        if given.arg == keyword:
            return given.value
    return call.args[position] if position < len(call.args) else None


def _called(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def error_templates(root: Path = LIBRARY) -> dict[str, str]:
    """{template: "expected" or "hint"} of every error the library under ``root`` raises with
    ``fail()``, in the order of its files: each string literal given as ``expected`` or
    ``hint``, directly, through a name (a local one, a module's constant, ``N_()``-marked or
    not, an imported one) or through a helper's parameter (``check_real(..., hint="...")``).
    Anything else (an f-string, a sum, a call) cannot be looked up in the catalogue: a
    ValueError names each, and each template whose ``{fields}`` the call gives no keyword."""
    scan = _ErrorScan(root)
    for module in scan.modules.values():
        for call in ast.walk(module.tree):
            if isinstance(call, ast.Call) and _called(call) == "fail":
                scan.fail_call(module, call)
    scan.helpers()
    if scan.problems:
        raise ValueError("\n".join(scan.problems))
    return scan.templates


class _ErrorScan:
    """What :func:`error_templates` has found so far: the templates, the problems, and the
    helpers' parameters that reach ``fail()`` (their callers give the template)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules = {m.name: m for m in (_Module(p, root) for p in sorted(root.rglob("*.py")))}
        self.templates: dict[str, str] = {}
        self.problems: list[str] = []
        self.forwarded: list[tuple[_Module, ast.FunctionDef, str, str]] = []

    def problem(self, module: _Module, node: ast.AST, text: str) -> None:
        self.problems.append(f"{module.path.relative_to(self.root.parent)}:{node.lineno}: {text}")

    def fail_call(self, module: _Module, call: ast.Call) -> None:
        """The templates of one ``fail()`` call, and the fields it fills from no keyword."""
        found = [
            template
            for kind, position in ERROR_TEMPLATES.items()
            if (given := _argument(call, kind, position)) is not None
            for template in self.judge(module, given, kind, f"fail()'s {kind}")
        ]
        keywords = {k.arg for k in call.keywords}
        for template in found if None not in keywords else []:  # **values: given above
            missing = _fields(template) - keywords
            if missing:
                self.problem(
                    module,
                    call,
                    f"fail() fills {sorted(missing)} of {template!r} from no keyword "
                    "(a literal brace is written {{ or }})",
                )

    def judge(self, module: _Module, node: ast.AST, kind: str, what: str) -> list[str]:
        """The templates ``node`` may be, each kept in ``templates``; a problem where it is
        no string literal and no name of one."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value:
                self.templates.setdefault(node.value, kind)
            return [node.value] if node.value else []
        if isinstance(node, ast.Call) and _called(node) == "N_" and len(node.args) == 1:
            return self.judge(module, node.args[0], kind, what)
        if isinstance(node, ast.IfExp):
            return self.judge(module, node.body, kind, what) + self.judge(
                module, node.orelse, kind, what
            )
        if isinstance(node, ast.Name):
            function = module.function(node)
            if function and node.id in {a.arg for a in _parameters(function)}:
                self.forwarded.append((module, function, node.id, kind))
                return []
            source, values = self.bound(module, function, node.id)
            if values:
                return [t for value in values for t in self.judge(source, value, kind, what)]
        text = f"{what} is not a string literal (its values go as keywords): {ast.unparse(node)}"
        self.problem(module, node, text)
        return []

    def bound(self, module: _Module, function, name: str) -> tuple[_Module, list[ast.AST]]:
        """Where ``name`` is bound and the values it is bound to: in ``function``, else at
        the top of ``module``, else at the top of the module it is imported from."""
        values = _bound(list(ast.walk(function)), name) if function else []
        if values or module.top_level(name) or name not in module.imported:
            return module, values or module.top_level(name)
        origin, original = module.imported[name]
        source = self.modules.get(origin)
        return source, source.top_level(original) if source else []

    def helpers(self) -> None:
        """Judge what the callers of each helper give to a parameter that reaches fail()."""
        done = set()
        while self.forwarded:
            module, function, parameter, kind = self.forwarded.pop()
            if (module.name, function.name, parameter) in done:
                continue
            done.add((module.name, function.name, parameter))
            what = f"{function.name}()'s {parameter}, which fail() shows,"
            for arg, default in _defaults(function):
                if arg.arg == parameter:
                    self.judge(module, default, kind, what)
            position = [a.arg for a in _parameters(function) if a.arg not in ("self", "cls")]
            for caller, call in self.calls(module, function):
                given = _argument(call, parameter, position.index(parameter))
                if given is not None:
                    self.judge(caller, given, kind, what)

    def calls(self, module: _Module, function: ast.FunctionDef) -> Iterator[tuple]:
        """(module, call) of each call of ``function`` (of ``module``) by its name, in its
        module or where it is imported."""
        for caller in self.modules.values():
            names = {n for n, o in caller.imported.items() if o == (module.name, function.name)}
            names |= {function.name} if caller is module else set()
            for call in ast.walk(caller.tree):
                if isinstance(call, ast.Call) and getattr(call.func, "id", None) in names:
                    yield caller, call


def _fields(template: str) -> set[str]:
    """The names of the ``{fields}`` of a str.format template."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:
        return {f"(a broken template: {error})"}
    return {re.split(r"[.\[]", field)[0] for _, field, _, _ in parsed if field is not None}


def _defaults(function: ast.FunctionDef) -> list[tuple[ast.arg, ast.AST]]:
    """(parameter, its default) of each parameter of ``function`` that has one."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults))
    return pairs + [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]


def library_template(notebooks: list[Path]) -> Catalog:
    """What the library's catalogue must hold: the library's ``_()`` and ``N_()`` messages
    and its errors' templates (Babel's keywords cannot name ``fail()``'s second and fourth
    arguments, given by position or by keyword, nor follow a name to its literal:
    :func:`error_templates` reads them), then the sentences ``notebooks`` print with
    ``say()`` or look up with ``_()``."""
    catalog = Catalog(project="transformer_lib", version="0.1", fuzzy=False)
    marked = extract_from_dir(str(LIBRARY), keywords={"_": None, "N_": None})
    for _, _, message, comments, context in marked:
        catalog.add(message, auto_comments=comments, context=context)
    for template, kind in error_templates().items():
        catalog.add(template, auto_comments=[ERROR_NOTES[kind]])
    for path in notebooks:
        for sentence in said(json.loads(path.read_text(encoding="utf-8")), path.stem):
            catalog.add(sentence, auto_comments=[f"printed by notebook {path.stem}"])
    return catalog


def update_library(lang: str) -> Path:
    """The library's catalogue updated from ``library_template``, as ``pybabel update``
    writes it (a changed message turns fuzzy, its old English kept beside it; a vanished one
    obsolete)."""
    path = library_catalogue_path(lang)
    catalog = read_catalogue(path, lang)
    template = library_template(english_notebooks())
    catalog.update(template, update_header_comment=False, update_creation_date=False)
    write_catalogue(catalog, path, LIBRARY_NOT_FORMATS)
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
