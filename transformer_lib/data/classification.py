"""Sentence classification on the corpus's English side (notebook 10): the subject-number task,
whose labels come from the corpus's grammar, and (tokens, labels) batches.

The task: is the subject of the main clause plural? It is asked of sentences that hold two
clauses, a main one and one that ``because``, ``although`` or ``when`` starts, whose two
subjects differ in number, and either clause may have a plural object too:

- ``the dogs sleep because the man reads the books.`` -> plural (1);
- ``when the dogs sleep, the man reads the books.`` -> singular (0).

Each sentence holds one singular and one plural subject, each with the verb that agrees with
it, so its bag of words says nothing about which is the main clause's: only the order does
(the main clause comes first, or second after a fronted ``when``). Sentences with a "that"
clause are left out: there the main clause's verb (``says``, ``knows``, ``thinks``) would
give the answer away as a word.

How the labels are read from the bundled files: the generator renders each English clause
subject first (data/README.md), so a clause's subject is its first noun phrase: ``I``,
``he``, ``she`` (singular), ``we``, ``they`` (plural), or a phrase whose head is its first
noun. A noun is an English word aligned to a capitalised German word (German capitalises its
nouns; the gold alignment is the corpus's third column). The grammar's plural nouns end in
``-s`` except ``men``, ``women``, ``children`` and ``mice``, and its singular nouns never do
(data/generate.py's noun table). tests/test_encoder_only.py runs the seeded generator again
and checks that these labels are its own parse's, sentence by sentence, in all four splits.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from transformer_lib._checks import check_int, check_labels, fail
from transformer_lib.data.batching import make_batches
from transformer_lib.data.corpus import Example, load_split
from transformer_lib.data.text import tokenize

__all__ = ["SUBJECT_NUMBER_CLASSES", "subject_number_task", "classification_batches"]

SUBJECT_NUMBER_CLASSES = ("singular", "plural")  # label 0, label 1
_PRONOUNS = {"I": 0, "he": 0, "she": 0, "we": 1, "they": 1}
_IRREGULAR_PLURALS = frozenset({"men", "women", "children", "mice"})
_SUBORDINATORS = ("because", "although", "when")


def _clauses(en: list[str]) -> tuple[range, range] | None:
    """The token ranges of the main and the subordinate clause, or None for a sentence
    without a ``because``/``although``/``when`` clause."""
    if en[0] == "when":  # when B, A.
        comma = en.index(",")
        return range(comma + 1, len(en) - 1), range(1, comma)
    for k, word in enumerate(en):
        if word in _SUBORDINATORS:  # A because B.
            return range(0, k), range(k + 1, len(en) - 1)
    return None


def _subject_is_plural(en: list[str], nouns: set[int], clause: range) -> int:
    """1 if the clause's subject (its first pronoun or noun) is plural, else 0."""
    for i in clause:
        if en[i] in _PRONOUNS:
            return _PRONOUNS[en[i]]
        if i in nouns:
            return int(en[i].endswith("s") or en[i] in _IRREGULAR_PLURALS)
    raise ValueError(f"no subject found in {' '.join(en)!r}")  # the grammar has none such


def _label(example: Example) -> int | None:
    """The main clause's subject number (0 singular, 1 plural) when the two subjects
    differ; None for a sentence the task leaves out."""
    en, de = tokenize(example.src), tokenize(example.tgt)
    clauses = _clauses(en)
    if clauses is None or example.alignment is None:
        return None
    nouns = {i for i, j in example.alignment if de[j][:1].isupper()}
    main, sub = (_subject_is_plural(en, nouns, clause) for clause in clauses)
    return main if main != sub else None


def subject_number_task(
    split: str, data_dir: str | Path | None = None
) -> tuple[list[str], list[int]]:
    """The English sentences of ``split`` the subject-number task asks about, and their
    labels: 1 when the main clause's subject is plural, 0 when it is singular
    (``SUBJECT_NUMBER_CLASSES``; the module docstring says which sentences and how the labels
    are read). ``data_dir``: as for ``load_split``."""
    sentences, labels = [], []
    for example in load_split(split, data_dir):
        label = _label(example)
        if label is not None:
            sentences.append(example.src)
            labels.append(label)
    return sentences, labels


def classification_batches(
    sequences: Sequence[Sequence[int]],
    labels: Sequence[int],
    n_classes: int,
    batch_size: int,
    shuffle: bool = False,
    seed: int = 0,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(tokens, labels) batches of id sequences and their class ids: ``batch_size``
    sentences each, padded, sentences of similar length together (``make_batches``),
    shuffled by ``seed``. ``train`` takes them for a ``SentenceClassifier``.

    Shapes: each batch tokens (B, L), labels (B,).
    """
    check_int("n_classes", n_classes, minimum=2)
    if not isinstance(sequences, Sequence) or not sequences:
        fail("sequences", "a non-empty list of id sequences", repr(sequences)[:80])
    if not isinstance(labels, Sequence) or len(labels) != len(sequences):
        got = f"{len(labels)} labels" if isinstance(labels, Sequence) else type(labels).__name__
        fail("labels", "one label per sequence ({n})", got, n=len(sequences))
    label_ids = torch.tensor(list(labels), dtype=torch.long)  # (N,)
    check_labels("labels", label_ids, n_classes)
    for k, sequence in enumerate(sequences):
        if not isinstance(sequence, Sequence) or len(sequence) == 0:
            fail(f"sequences[{k}]", "a non-empty list of ids", repr(sequence)[:80])
    pairs = [(list(y), list(y)) for y in sequences]  # make_batches' grouping, source = target
    batches = make_batches(pairs, batch_size=batch_size, shuffle=shuffle, seed=seed)
    return [(batch.src, label_ids[batch.index]) for batch in batches]
