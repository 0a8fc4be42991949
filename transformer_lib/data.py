"""Text -> tokens -> ids -> padded batches, for the bundled corpus or any Tatoeba-style tsv.

A corpus file has one pair per line, ``source<TAB>target[<TAB>third column]``. The
third column is read as a gold word alignment when it is in Pharaoh format
(``0-0 1-2 2-1``: source token i aligns with target token j, 0-based over
:func:`tokenize`'s tokens) and ignored otherwise, so the attribution column of
Tatoeba exports is simply skipped.

Shapes:
    B batch, S source length, T target length (both padded to the longest in the batch).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import torch

from transformer_lib import masks
from transformer_lib._checks import check_int, fail
from transformer_lib.vocab import BOS_ID, EOS_ID, PAD_ID, Vocab  # Vocab re-exported for convenience

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
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


def build_vocabs(examples: Sequence[Example], min_freq: int = 1) -> tuple[Vocab, Vocab]:
    """Source and target vocabularies built from tokenized examples (usually the train split)."""
    src = Vocab.build((tokenize(ex[0]) for ex in examples), min_freq=min_freq)
    tgt = Vocab.build((tokenize(ex[1]) for ex in examples), min_freq=min_freq)
    return src, tgt


def encode_pairs(
    examples: Iterable[Example | tuple[str, str]], src_vocab: Vocab, tgt_vocab: Vocab
) -> list[tuple[list[int], list[int]]]:
    """Tokenize and encode each pair, with no special tokens (collate adds <bos>/<eos>)."""
    return [
        (src_vocab.encode(tokenize(ex[0])), tgt_vocab.encode(tokenize(ex[1]))) for ex in examples
    ]


@dataclass
class Batch:
    """A padded batch; see :func:`collate`.

    Shapes:
        src (B, S), tgt_in (B, T) = <bos> y, tgt_out (B, T) = y <eos>,
        src_mask (B, 1, 1, S), tgt_mask (B, 1, T, T) (True = may attend),
        index (B,): position of each pair in the list the batch was made from.
    """

    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor
    src_mask: torch.Tensor
    tgt_mask: torch.Tensor
    n_tokens: int  # real (non-pad) tokens in tgt_out: the loss is averaged over these
    index: torch.Tensor

    def to(self, device: torch.device | str) -> Batch:
        moved = {
            k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in vars(self).items()
        }
        return Batch(**moved)

    def __len__(self) -> int:
        return self.src.size(0)


def _check_pairs(pairs) -> None:
    hint = "Build them with encode_pairs()."
    if not isinstance(pairs, Sequence) or len(pairs) == 0:
        got = f"{type(pairs).__name__} {pairs!r}"[:80]
        fail("pairs", "a non-empty list of (src_ids, tgt_ids) pairs", got, hint)
    for k, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and len(pair[0]) > 0):
            expected = "(src_ids, tgt_ids) with a non-empty src_ids"
            fail(f"pairs[{k}]", expected, repr(pair)[:80], hint)


def collate(
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
    index: Sequence[int] | None = None,
) -> Batch:
    """Pad id sequences into one :class:`Batch` (teacher forcing: tgt_in is tgt_out shifted).

    Shapes: B pairs -> src (B, S), tgt_in/tgt_out (B, T) with T = longest target + 1.
    """
    _check_pairs(pairs)
    B = len(pairs)
    S = max(len(src) for src, _ in pairs)
    T = max(len(tgt) for _, tgt in pairs) + 1  # + <bos> / + <eos>
    src = torch.tensor([[*x] + [pad_id] * (S - len(x)) for x, _ in pairs], dtype=torch.long)
    tgt_in = torch.tensor(
        [[bos_id, *y] + [pad_id] * (T - 1 - len(y)) for _, y in pairs], dtype=torch.long
    )
    tgt_out = torch.tensor(
        [[*y, eos_id] + [pad_id] * (T - 1 - len(y)) for _, y in pairs], dtype=torch.long
    )
    return Batch(
        src=src,
        tgt_in=tgt_in,
        tgt_out=tgt_out,
        src_mask=masks.padding_mask(src, pad_id),  # (B, 1, 1, S)
        tgt_mask=masks.target_mask(tgt_in, pad_id),  # (B, 1, T, T)
        n_tokens=int((tgt_out != pad_id).sum()),
        index=torch.tensor(list(range(B)) if index is None else list(index), dtype=torch.long),
    )


def make_batches(
    pairs: Sequence[tuple[Sequence[int], Sequence[int]]],
    batch_size: int | None = None,
    max_tokens: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
    bucket_size: int = 4096,
    pad_id: int = PAD_ID,
    bos_id: int = BOS_ID,
    eos_id: int = EOS_ID,
) -> list[Batch]:
    """Group pairs of similar length into padded batches; every pair lands in exactly one.

    Give either `batch_size` (pairs per batch) or `max_tokens` (a batch's padded size
    ``B * max(S, T)`` stays within it; a longer pair gets a batch of its own). Pairs are
    sorted by length within chunks of `bucket_size`, so little padding is wasted.
    With ``shuffle=True`` the pairs and then the batch order are shuffled by
    ``random.Random(seed)``: the same seed gives the same batches, so pass the epoch
    number as the seed. ``Batch.index`` says where each pair came from in `pairs`.
    """
    _check_pairs(pairs)
    if (batch_size is None) == (max_tokens is None):
        got = f"batch_size={batch_size!r}, max_tokens={max_tokens!r}"
        fail("batch_size/max_tokens", "exactly one of them", got)
    size_name, size = (
        ("max_tokens", max_tokens) if batch_size is None else ("batch_size", batch_size)
    )
    check_int(size_name, size, minimum=1)
    check_int("bucket_size", bucket_size, minimum=1)
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    if shuffle:
        rng.shuffle(order)
    groups: list[list[int]] = []
    for start in range(0, len(order), bucket_size):
        chunk = order[start : start + bucket_size]
        chunk.sort(key=lambda k: (len(pairs[k][0]), len(pairs[k][1])))  # stable: ties keep order
        groups.extend(_split(chunk, pairs, batch_size, max_tokens))
    if shuffle:
        rng.shuffle(groups)
    return [collate([pairs[k] for k in g], pad_id, bos_id, eos_id, index=g) for g in groups]


def _split(
    chunk: list[int], pairs, batch_size: int | None, max_tokens: int | None
) -> list[list[int]]:
    if batch_size is not None:
        return [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    groups: list[list[int]] = [[]]
    longest = 0
    for k in chunk:
        size = max(len(pairs[k][0]), len(pairs[k][1]) + 1)  # padded length of this pair
        if groups[-1] and (len(groups[-1]) + 1) * max(longest, size) > max_tokens:
            groups.append([])
            longest = 0
        groups[-1].append(k)
        longest = max(longest, size)
    return groups
