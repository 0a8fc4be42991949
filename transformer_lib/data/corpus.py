"""Text -> tokens, sentence pairs, gold alignments, and the corpus files they come from.

A corpus file has one pair per line, ``source<TAB>target[<TAB>third column]``. The
third column is read as a gold word alignment when it is in Pharaoh format
(``0-0 1-2 2-1``: source token i aligns with target token j, 0-based over
:func:`tokenize`'s tokens) and ignored otherwise, so the attribution column of
Tatoeba exports is simply skipped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import torch

from transformer_lib._checks import check_int, fail

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
]

DATA_DIR = Path(__file__).resolve().parents[2] / "data"
SPLITS = ("train", "valid", "test", "longer")

_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")  # words (with inner apostrophes) or one symbol
_PHARAOH = re.compile(r"\s*\d+-\d+(?:\s+\d+-\d+)*\s*")


def tokenize(text: str) -> list[str]:
    """Split into words and punctuation marks; case is kept (German nouns are capitalised).

    ``"Heute sieht der Hund die Katze, oder?"`` ->
    ``["Heute", "sieht", "der", "Hund", "die", "Katze", ",", "oder", "?"]``.
    Apostrophes inside a word stay in it: ``"don't"`` is one token.
    """
    return _TOKEN.findall(text)


def detokenize(tokens: Iterable[str]) -> str:
    """Join tokens into text (no space before ``.,!?;:%)]}``, none after ``([{¿¡``).

    Exactly inverts :func:`tokenize` on the bundled corpus; BLEU is computed on this text.
    """
    text = " ".join(tokens)
    text = re.sub(r" ([.,!?;:%)\]}])", r"\1", text)
    return re.sub(r"([(\[{¿¡]) ", r"\1", text)


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
    matrix = torch.zeros(tgt_len, src_len, dtype=torch.bool)  # (T, S)
    for i, j in alignment:
        if not (0 <= i < src_len and 0 <= j < tgt_len):
            expected = f"pairs i-j with 0 <= i < {src_len} and 0 <= j < {tgt_len}"
            fail("alignment", expected, f"{i}-{j}", "Tokenize both sides with data.tokenize().")
        matrix[j, i] = True
    return matrix


def read_tsv(path: str | Path) -> list[Example]:
    """Read ``source<TAB>target[<TAB>alignment or anything else]`` lines (blank lines skipped).

    Raises ValueError naming the file and 1-based line number of a malformed line.
    """
    path = Path(path)
    examples = []
    with path.open(encoding="utf-8", newline=None) as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            columns = line.split("\t")
            src, tgt = (c.strip() for c in columns[:2]) if len(columns) >= 2 else ("", "")
            if len(columns) < 2 or not src or not tgt:
                got = f"an empty {'source' if not src else 'target'}"
                got = f"{len(columns)} column(s)" if len(columns) < 2 else got
                expected = "'source<TAB>target[<TAB>alignment]' with two non-empty sides"
                hint = "Check the separator is a real tab."
                fail(f"{path}, line {number}", expected, f"{got}: {line[:60]!r}", hint)
            third = columns[2] if len(columns) > 2 else ""
            alignment = parse_alignment(third) if _PHARAOH.fullmatch(third) else None
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
    """Load a split of the bundled corpus, checking its SHA-256 against ``data/SHA256SUMS``.

    `name` is one of ``"train"``, ``"valid"``, ``"test"``, ``"longer"``.
    """
    if name not in SPLITS:
        fail("name", f"one of {', '.join(SPLITS)}", repr(name))
    data_dir = DATA_DIR if data_dir is None else Path(data_dir)
    path = data_dir / f"{name}.tsv"
    if not path.exists():
        hint = "Regenerate the corpus with `python data/generate.py`."
        fail("data_dir", f"a folder containing {name}.tsv", str(data_dir), hint)
    if verify:
        expected = _read_checksums(data_dir).get(path.name)
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != expected:
            hint = "The file was modified; restore it or run `python data/generate.py`."
            fail(str(path), f"unchanged (SHA-256 {expected} in SHA256SUMS)", actual, hint)
    return read_tsv(path)
