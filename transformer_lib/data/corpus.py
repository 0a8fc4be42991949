"""Sentence pairs, gold alignments, and the corpus files they come from.

Tokenizing lives in :mod:`transformer_lib.data.text` (re-exported here). A corpus file is a
regular file (not a pipe, device or folder) of UTF-8 text, read one line at a time: a leading
byte-order mark is dropped, any line ending is accepted, a line holds at most
:data:`MAX_LINE_CHARS` characters. Blank lines are skipped, both sides are normalised to NFC,
and a header before the first pair is skipped: a line whose columns are all header names
(``src``, ``source``, ``tgt``, ``target``, ``alignment``, ``id``; any case). A line is

- ``source<TAB>target``;
- ``source<TAB>target<TAB>third column``: the third column is the gold word alignment when
  it is in Pharaoh format (``0-0 1-2 2-1``: source token i aligns with target token j,
  0-based over :func:`tokenize`'s tokens; a link past either sentence's end is an error)
  and ignored otherwise, so the attribution column of the manythings.org/Tatoeba
  ``deu.txt`` exports is simply skipped;
- ``id<TAB>source<TAB>id<TAB>target`` with two integer ids: Tatoeba's own "sentence pairs"
  download, read as ``source<TAB>target`` (the ids are dropped).

Anything else (one column, four columns without the two ids, five or more, an empty side,
bytes that are not UTF-8, a NUL byte, a longer line) is a ``ValueError`` naming the file and
the 1-based line; a UTF-16 or UTF-32 file is named as such, with the command that converts it.
"""

from __future__ import annotations

import codecs
import hashlib
import itertools
import re
import stat
import unicodedata
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import torch

from transformer_lib._checks import check_int, fail
from transformer_lib.data.text import detokenize, tokenize
from transformer_lib.i18n import N_

__all__ = [
    "DATA_DIR",
    "SPLITS",
    "Example",
    "tokenize",
    "detokenize",
    "parse_alignment",
    "format_alignment",
    "alignment_matrix",
    "read_tsv",
    "load_split",
    "MAX_LINE_CHARS",
]

# The bundled corpus ships inside the package (package data), so an installed library has it;
# data/generate.py at the repository's root writes it.
DATA_DIR = Path(str(resources.files("transformer_lib.data") / "bundled"))
SPLITS = ("train", "valid", "test", "longer")

_PHARAOH = re.compile(r"\s*\d+-\d+(?:\s+\d+-\d+)*\s*")

# A sentence pair is a few hundred characters; a file with no newline at all (a binary file,
# a dump) must not be read into memory whole.
MAX_LINE_CHARS = 1_000_000
_HEADER_NAMES = frozenset({"src", "source", "tgt", "target", "alignment", "id"})
_FILE_KINDS = {  # by stat.filemode()'s first letter
    "d": "a directory",
    "p": "a named pipe (FIFO)",
    "c": "a character device",
    "b": "a block device",
    "s": "a socket",
}
_BOMS = (  # UTF-32's marks first: UTF-32LE's starts with UTF-16LE's
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
# UTF-16/32 without a mark: the NUL bytes beside each ASCII letter ("x" is any other byte).
_NUL_SHAPES = (
    ("x000", "UTF-32LE"),
    ("000x", "UTF-32BE"),
    ("x0x0", "UTF-16LE"),
    ("0x0x", "UTF-16BE"),
)


class Example(NamedTuple):
    """One sentence pair; `alignment` holds gold (source index, target index) links or None."""

    src: str
    tgt: str
    alignment: tuple[tuple[int, int], ...] | None = None


def parse_alignment(text: str) -> tuple[tuple[int, int], ...]:
    """``"0-0 1-2 2-1"`` -> ``((0, 0), (1, 2), (2, 1))`` (Pharaoh format, 0-based)."""
    if not isinstance(text, str) or not _PHARAOH.fullmatch(text):
        expected = "Pharaoh text like '0-0 1-2 2-1' (source-target token indices)"
        fail("alignment", expected, repr(text)[:80])
    return tuple((int(i), int(j)) for i, j in (pair.split("-") for pair in text.split()))


def format_alignment(alignment: Iterable[tuple[int, int]]) -> str:
    """Inverse of :func:`parse_alignment`."""
    return " ".join(f"{i}-{j}" for i, j in alignment)


def alignment_matrix(
    alignment: Iterable[tuple[int, int]], src_len: int, tgt_len: int
) -> torch.Tensor:
    """Gold alignment as a bool matrix laid out like cross-attention weights.

    Shapes: -> (T, S); row j (target token j, i.e. decoder step j) is True at its source words.
    """
    check_int("src_len", src_len, minimum=1)
    check_int("tgt_len", tgt_len, minimum=1)
    alignment = tuple(alignment)
    bad = _link_outside(alignment, src_len, tgt_len)
    if bad is not None:
        expected = "pairs i-j with 0 <= i < {src_len} and 0 <= j < {tgt_len}"
        hint = "Tokenize both sides with data.tokenize()."
        fail("alignment", expected, bad, hint, src_len=src_len, tgt_len=tgt_len)
    matrix = torch.zeros(tgt_len, src_len, dtype=torch.bool)  # (T, S)
    for i, j in alignment:
        matrix[j, i] = True
    return matrix


def _link_outside(alignment: Iterable[tuple[int, int]], src_len: int, tgt_len: int) -> str | None:
    """The first link ``"i-j"`` that points outside a src_len x tgt_len pair, or None."""
    for i, j in alignment:
        if not (0 <= i < src_len and 0 <= j < tgt_len):
            return f"{i}-{j}"
    return None


def _check_regular_file(path: Path) -> None:
    """Refuse pipes, devices and folders: reading one may block forever or never end."""
    mode = path.stat().st_mode  # before opening: opening a named pipe blocks
    if not stat.S_ISREG(mode):
        kind = _FILE_KINDS.get(stat.filemode(mode)[0], "not a regular file")
        hint = "read_tsv reads a corpus saved on disk; save the stream to a file first."
        fail(str(path), "a regular file", kind, hint)


# The hint for a file in another encoding (``guess``: the encoding asked about, as people
# name it), filled by _convert().
_CONVERT = N_(
    "Convert it to UTF-8: `iconv -f {encoding} -t UTF-8 {file} > {out}`, or in Python "
    "read it with open(path, encoding={codec}) and write it with encoding='utf-8'."
)
_GUESS_AND_CONVERT = N_(
    "Is it {guess}? Convert it to UTF-8: `iconv -f {encoding} -t UTF-8 {file} > {out}`, or in "
    "Python read it with open(path, encoding={codec}) and write it with encoding='utf-8'."
)


def _convert(path: Path, encoding: str) -> dict[str, str]:
    """The values of the hints _CONVERT and _GUESS_AND_CONVERT for ``path`` in ``encoding``."""
    out = f"{path.stem}-utf8{path.suffix}"
    return {"encoding": encoding, "file": path.name, "out": out, "codec": repr(encoding.lower())}


def _check_not_wide(path: Path) -> None:
    """Name UTF-16 and UTF-32 from the first bytes, before they show up as odd columns."""
    with path.open("rb") as file:
        head = file.read(4)
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            got = f"a {encoding} byte-order mark"
            fail(str(path), "UTF-8 text", got, _CONVERT, **_convert(path, encoding))
    shape = "".join("0" if byte == 0 else "x" for byte in head)
    for start, encoding in _NUL_SHAPES:
        if shape.startswith(start):
            got = f"NUL bytes between the letters, as in {encoding}"
            fail(str(path), "UTF-8 text", got, _CONVERT, **_convert(path, encoding))


def _check_line(path: Path, number: int, line: str) -> None:
    """A line as read by readline(MAX_LINE_CHARS + 1): not too long, NUL-free, UTF-8."""
    where = f"{path}, line {number}"
    if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
        hint = "Is this a corpus file? Sentence pairs are far shorter."
        expected = "at most {n} characters long"
        fail(where, expected, "a longer line", hint, n=f"{MAX_LINE_CHARS:,}")
    if "\x00" in line:
        got = f"a NUL byte at character {line.index(chr(0)) + 1}"
        values = _convert(path, "UTF-16")
        fail(where, "UTF-8 text", got, _GUESS_AND_CONVERT, guess="UTF-16", **values)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError as error:  # a surrogate: bytes that errors="surrogateescape" kept
        bad = line[error.start : error.end].encode("utf-8", "surrogateescape")
        got = f"bytes {bad!r} at character {error.start + 1}"
        values = _convert(path, "latin1")
        fail(where, "UTF-8 text", got, _GUESS_AND_CONVERT, guess="Latin-1", **values)


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based number, line without its ending), one line in memory at a time."""
    _check_not_wide(path)
    with path.open(encoding="utf-8-sig", errors="surrogateescape", newline=None) as file:
        for number in itertools.count(1):
            line = file.readline(MAX_LINE_CHARS + 1)  # bounded even if there is no newline
            if not line:
                return
            _check_line(path, number, line)
            yield number, line.rstrip("\n")


def _is_header(line: str) -> bool:
    columns = [column.strip().lower() for column in line.split("\t")]
    return len(columns) >= 2 and set(columns) <= _HEADER_NAMES


def _columns(path: Path, number: int, line: str) -> tuple[str, str, str]:
    """(source, target, third column or "") of one line, NFC-normalised."""
    columns = line.split("\t")
    if len(columns) == 4 and columns[0].strip().isdecimal() and columns[2].strip().isdecimal():
        columns = [columns[1], columns[3]]  # Tatoeba's id<TAB>text<TAB>id<TAB>text
    src, tgt = (c.strip() for c in columns[:2]) if len(columns) >= 2 else ("", "")
    if not 2 <= len(columns) <= 3 or not src or not tgt:
        got = f"an empty {'source' if not src else 'target'}"
        got = got if 2 <= len(columns) <= 3 else f"{len(columns)} column(s)"
        expected = (
            "'source<TAB>target[<TAB>alignment or attribution]' or Tatoeba's "
            "'id<TAB>source<TAB>id<TAB>target', with two non-empty sides"
        )
        hint = "Check the separator is a real tab and that no sentence contains one."
        fail(f"{path}, line {number}", expected, f"{got}: {line[:60]!r}", hint)
    third = columns[2] if len(columns) == 3 else ""
    return unicodedata.normalize("NFC", src), unicodedata.normalize("NFC", tgt), third


def _check_links(
    path: Path, number: int, alignment: tuple[tuple[int, int], ...], src: str, tgt: str
) -> None:
    """Every link i-j of a gold alignment must point inside both tokenised sentences."""
    src_len, tgt_len = len(tokenize(src)), len(tokenize(tgt))
    bad = _link_outside(alignment, src_len, tgt_len)
    if bad is not None:
        expected = "an alignment with links i-j, i < {src_len} and j < {tgt_len}"
        hint = "Links are 0-based over data.tokenize()'s tokens of each side."
        where = f"{path}, line {number}"
        fail(where, expected, f"link {bad}", hint, src_len=src_len, tgt_len=tgt_len)


def read_tsv(path: str | Path) -> list[Example]:
    """Read a corpus file: ``source<TAB>target[<TAB>alignment or anything else]`` lines.

    The module docstring gives the accepted formats and the header rule. Raises ValueError,
    naming the file and the 1-based line where there is one, for what is not a regular file,
    text that is not UTF-8, a line too long or malformed, or an out-of-range link.
    """
    path = Path(path)
    _check_regular_file(path)
    examples = []
    for number, line in _lines(path):
        if not line.strip() or (not examples and _is_header(line)):  # a header: before any pair
            continue
        src, tgt, third = _columns(path, number, line)
        alignment = parse_alignment(third) if _PHARAOH.fullmatch(third) else None
        if alignment is not None:
            _check_links(path, number, alignment, src, tgt)
        examples.append(Example(src, tgt, alignment))
    return examples


def _read_checksums(data_dir: Path) -> dict[str, str]:
    sums_path = data_dir / "SHA256SUMS"
    if not sums_path.exists():
        hint = "Pass verify=False for a corpus without checksums."
        fail("data_dir", "a folder with a SHA256SUMS file", str(data_dir), hint)
    sums = {}
    for line in sums_path.read_text(encoding="ascii").splitlines():
        digest, name = line.split(maxsplit=1)
        sums[name.lstrip("*")] = digest
    return sums


def load_split(name: str, data_dir: str | Path | None = None, verify: bool = True) -> list[Example]:
    """Load a split of the bundled corpus (:data:`DATA_DIR`, or ``data_dir``), checking its
    SHA-256 against the ``SHA256SUMS`` file beside it.

    `name` is one of ``"train"``, ``"valid"``, ``"test"``, ``"longer"``.
    """
    if name not in SPLITS:
        fail("name", "one of {choices}", repr(name), choices=", ".join(SPLITS))
    data_dir = DATA_DIR if data_dir is None else Path(data_dir)
    path = data_dir / f"{name}.tsv"
    if not path.exists():
        hint = "Regenerate the corpus with `python data/generate.py`."
        fail("data_dir", "a folder containing {split}.tsv", str(data_dir), hint, split=name)
    if verify:
        recorded = _read_checksums(data_dir).get(path.name)
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != recorded:
            hint = "The file was modified; restore it or run `python data/generate.py`."
            expected = "unchanged (SHA-256 {digest} in SHA256SUMS)"
            fail(str(path), expected, actual, hint, digest=recorded)
    return read_tsv(path)
