"""Tests for the bundled corpus (transformer_lib/data/bundled/, made by data/generate.py) and
transformer_lib.data / transformer_lib.data.vocab."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest
import torch

from transformer_lib.data import (
    DATA_DIR,
    SPLITS,
    Batch,
    Example,
    alignment_matrix,
    build_vocabs,
    collate,
    concatenate_pairs,
    detokenize,
    encode_pairs,
    format_alignment,
    load_split,
    make_batches,
    parse_alignment,
    tokenize,
)
from transformer_lib.data.vocab import Vocab
from transformer_lib.model import masks

GENERATOR = Path(__file__).resolve().parents[1] / "data" / "generate.py"


def _load_generator():
    spec = importlib.util.spec_from_file_location("corpus_generator", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gen():
    return _load_generator()


@pytest.fixture(scope="module")
def corpus() -> dict[str, list[Example]]:
    return {name: load_split(name) for name in SPLITS}


@pytest.fixture(scope="module")
def small_pairs(corpus):
    examples = corpus["valid"]
    src_vocab, tgt_vocab = build_vocabs(examples)
    return encode_pairs(examples, src_vocab, tgt_vocab)


# ---------------------------------------------------------------- the corpus files
def test_regenerating_gives_byte_identical_files(gen, tmp_path):
    assert gen.BUNDLED == DATA_DIR  # the generator writes where the library reads
    digests = gen.generate(tmp_path)
    assert sorted(digests) == sorted(f"{name}.tsv" for name in SPLITS)
    for name in [*digests, "SHA256SUMS"]:
        assert (tmp_path / name).read_bytes() == (DATA_DIR / name).read_bytes(), name


def test_data_files_are_small_utf8_with_unix_newlines():
    total = 0
    for name in SPLITS:
        raw = (DATA_DIR / f"{name}.tsv").read_bytes()
        total += len(raw)
        assert b"\r" not in raw and raw.endswith(b"\n")
        raw.decode("utf-8")
    assert total < 5_000_000


def test_checksums_are_verified_and_a_tampered_copy_is_rejected(tmp_path):
    for name in [f"{s}.tsv" for s in SPLITS] + ["SHA256SUMS"]:
        shutil.copy(DATA_DIR / name, tmp_path / name)
    assert len(load_split("valid", data_dir=tmp_path)) == 500
    path = tmp_path / "valid.tsv"
    path.write_bytes(path.read_bytes().replace(b"Hund", b"Hunt", 1))
    with pytest.raises(ValueError, match=r"valid\.tsv` must be unchanged \(SHA-256"):
        load_split("valid", data_dir=tmp_path)
    assert len(load_split("valid", data_dir=tmp_path, verify=False)) == 500


def test_load_split_rejects_an_unknown_name():
    with pytest.raises(
        ValueError,
        match=r"`name` must be one of train, valid, test, longer; "
        r"got 'dev'",
    ):
        load_split("dev")


def test_split_sizes(corpus):
    assert len(corpus["train"]) >= 20_000
    assert len(corpus["valid"]) == len(corpus["test"]) == 500
    assert 300 <= len(corpus["longer"]) <= 500


@pytest.mark.parametrize("side", ["src", "tgt"])
def test_no_sentence_is_repeated_or_in_two_splits(corpus, side):
    seen: dict[str, str] = {}
    for name, examples in corpus.items():
        for ex in examples:
            text = getattr(ex, side)
            assert text not in seen, f"{text!r} in {name} and {seen[text]}"
            seen[text] = name


def test_longer_split_is_longer_than_any_training_sentence(corpus):
    for side in ("src", "tgt"):
        longest_train = max(len(tokenize(getattr(ex, side))) for ex in corpus["train"])
        shortest_longer = min(len(tokenize(getattr(ex, side))) for ex in corpus["longer"])
        assert shortest_longer > longest_train, side
        longest_eval = max(
            len(tokenize(getattr(ex, side))) for name in ("valid", "test") for ex in corpus[name]
        )
        assert longest_eval <= longest_train


def test_every_line_has_a_valid_alignment(corpus):
    for examples in corpus.values():
        for ex in examples:
            assert ex.alignment, ex
            src, tgt = tokenize(ex.src), tokenize(ex.tgt)
            assert all(0 <= i < len(src) and 0 <= j < len(tgt) for i, j in ex.alignment), ex
            assert {i for i, _ in ex.alignment} == set(range(len(src))), ex  # all English aligned
            unaligned = {tgt[j] for j in set(range(len(tgt))) - {j for _, j in ex.alignment}}
            assert unaligned <= {","}, ex  # only German's extra commas have no partner


def test_reordering_is_common(corpus):
    def monotonic(alignment):
        targets = [j for _, j in sorted(alignment)]
        return targets == sorted(targets)

    crossing = sum(not monotonic(ex.alignment) for ex in corpus["test"]) / len(corpus["test"])
    assert crossing > 0.4


def test_fronted_adverbs_put_the_verb_second(corpus):
    articles_and_pronouns = {"der", "die", "das", "ein", "eine", "ich", "er", "sie", "wir"}
    fronted = [ex for ex in corpus["train"] if ex.src.startswith("today ")]
    assert len(fronted) > 100
    for ex in fronted:
        german = tokenize(ex.tgt)
        assert german[0] == "heute" and german[1] not in articles_and_pronouns, ex


@pytest.mark.parametrize(
    "parts, order, english, german",
    [
        (("man", "read", "book", {}), "main", "the man reads the book", "der Mann liest das Buch"),
        (("man", "read", "book", {}), "sub", "the man reads the book", "der Mann das Buch liest"),
        (
            ("man", "read", "book", dict(modal="want")),
            "q",
            "does the man want to read the book",
            "will der Mann das Buch lesen",
        ),
        (
            ("man", "give", "book", dict(iobj="woman")),
            "main",
            "the man gives the book to the woman",
            "der Mann gibt der Frau das Buch",
        ),
        (
            ("man", "pick", "child", dict(modal="want", negated=True)),
            "main",
            "the man does not want to pick up the child",
            "der Mann will das Kind nicht abholen",
        ),
        (
            ("man", "call", "woman", {}),
            "inv",
            "the man calls the woman",
            "ruft der Mann die Frau an",
        ),
        (
            ("man", "call", "woman", dict(modal="can", negated=True)),
            "sub",
            "the man cannot call the woman",
            "der Mann die Frau nicht anrufen kann",
        ),
        (
            ("man", "have", "a car", dict(negated=True)),
            "main",
            "the man does not have a car",
            "der Mann hat kein Auto",
        ),
        (
            ("girl", "help", "a big dog", dict(negated=True)),
            "main",
            "the girl does not help a big dog",
            "das Mädchen hilft keinem großen Hund",
        ),
        (
            ("man", "see", "big dogs", dict(pp="with children")),
            "main",
            "the man sees big dogs with children",
            "der Mann sieht große Hunde mit Kindern",
        ),
        (
            ("man", "read", "a new book", dict(pp="in the garden", negated=True)),
            "main",
            "the man does not read a new book in the garden",
            "der Mann liest kein neues Buch im Garten",
        ),
    ],
)
def test_the_grammar_renders_known_sentences(gen, parts, order, english, german):
    nouns = {n.en: n for n in gen.NOUNS}
    adjectives = {a.en: a for a in gen.ADJECTIVES}
    verbs = {v.en: v for v in gen.VERBS}

    def np(text):  # "the man", "a big dog", "big dogs"; a bare singular means "the ..."
        *words, noun = text.split()
        plural = noun not in nouns
        noun = next(n for n in gen.NOUNS if noun in (n.en, n.en_pl))
        article = {"the": "def", "a": "indef"}.get(words[0] if words else "")
        article = article or ("bare" if plural else "def")
        adjs = tuple(adjectives[w] for w in words if w not in ("the", "a"))
        return gen.NounPhrase(noun, plural, article, adjs)

    subject, verb, obj, extra = parts
    extra = dict(extra)
    if "iobj" in extra:
        extra["iobj"] = np(extra["iobj"])
    if "pp" in extra:
        prep, *rest = extra["pp"].split()
        extra["pp"] = gen.PrepPhrase(prep, np(" ".join(rest)))
    clause = gen.Clause(np(subject), verbs[verb], np(obj), **extra)
    en, de = gen.render_clause(clause, order, gen.Atoms())
    assert " ".join(w for w, _ in en) == english
    assert " ".join(w for w, _ in de) == german


# ---------------------------------------------------------------- reading text
def test_tokenize_and_detokenize():
    text = "Heute sieht der Hund die Katze, oder? I don't know."
    tokens = tokenize(text)
    assert tokens == [
        "Heute",
        "sieht",
        "der",
        "Hund",
        "die",
        "Katze",
        ",",
        "oder",
        "?",
        "I",
        "don't",
        "know",
        ".",
    ]
    assert detokenize(tokens) == text


def test_detokenize_inverts_tokenize_on_the_corpus(corpus):
    for ex in corpus["test"] + corpus["longer"]:
        assert detokenize(tokenize(ex.src)) == ex.src
        assert detokenize(tokenize(ex.tgt)) == ex.tgt


def test_parse_alignment():
    assert parse_alignment("0-0 2-1  1-2") == ((0, 0), (2, 1), (1, 2))
    assert format_alignment(parse_alignment("0-0 2-1")) == "0-0 2-1"
    with pytest.raises(ValueError, match="`alignment` must be Pharaoh"):
        parse_alignment("0:0 1-1")


def test_alignment_matrix_is_laid_out_like_cross_attention():
    matrix = alignment_matrix(((0, 1), (2, 0)), src_len=3, tgt_len=2)
    assert matrix.shape == (2, 3) and matrix.dtype == torch.bool
    assert matrix.nonzero().tolist() == [[0, 2], [1, 0]]
    with pytest.raises(ValueError, match=r"0 <= i < 3 .*got 3-0"):
        alignment_matrix(((3, 0),), src_len=3, tgt_len=2)


# ---------------------------------------------------------------- vocabulary
def test_vocab_specials_and_order():
    vocab = Vocab.build([["b", "a", "c"], ["c", "a"], ["c"]])
    assert vocab.tokens == ["<pad>", "<unk>", "<bos>", "<eos>", "c", "a", "b"]
    assert (vocab.pad_id, vocab.unk_id, vocab.bos_id, vocab.eos_id) == (0, 1, 2, 3)
    assert [vocab[t] for t in (Vocab.PAD, Vocab.UNK, Vocab.BOS, Vocab.EOS)] == [0, 1, 2, 3]
    assert len(vocab) == 7 and vocab["c"] == vocab.token_to_id("c") == 4
    assert len(Vocab.build([["b", "a", "c"], ["c", "a"]], min_freq=2)) == 6


def test_vocab_encode_decode_round_trip_and_unknowns():
    vocab = Vocab.build([tokenize("der Hund sieht die Katze.")])
    tokens = tokenize("die Katze sieht den Hund.")
    ids = vocab.encode(tokens, add_bos=True, add_eos=True)
    assert ids[0] == vocab.bos_id and ids[-1] == vocab.eos_id
    assert ids[4] == vocab.unk_id  # "den" was never seen
    assert vocab.decode(ids) == ["die", "Katze", "sieht", "<unk>", "Hund", "."]
    assert vocab.decode(torch.tensor(ids + [0, 0])) == vocab.decode(ids)
    assert vocab.decode([5, 3, 6]) == [vocab.id_to_token(5)]  # stops at <eos>
    assert vocab.decode([2, 5, 3, 0], strip_special=False) == [
        "<bos>",
        vocab.id_to_token(5),
        "<eos>",
        "<pad>",
    ]


def test_vocab_serialises_without_pickle():
    vocab = Vocab.build([tokenize("Heute schläft der Vogel.")])
    assert Vocab.from_json(vocab.to_json()) == vocab
    assert Vocab.from_dict(json.loads(json.dumps(vocab.to_dict()))) == vocab


def test_vocab_rejects_bad_input():
    with pytest.raises(TypeError, match="Tokenize first"):
        Vocab.build(["der Hund"])
    with pytest.raises(TypeError, match="`tokens` must be a list of tokens; got str"):
        Vocab.build([["a"]]).encode("a b")
    with pytest.raises(ValueError, match="must be a list starting with the specials"):
        Vocab(["a", "b"])


def test_training_vocab_is_modest(corpus):
    src_vocab, tgt_vocab = build_vocabs(corpus["train"])
    assert 150 <= len(src_vocab) <= 360 and 150 <= len(tgt_vocab) <= 360
    for name in ("valid", "test", "longer"):  # nothing in the held-out splits is unknown
        for src_ids, tgt_ids in encode_pairs(corpus[name], src_vocab, tgt_vocab):
            assert Vocab.unk_id not in src_ids and Vocab.unk_id not in tgt_ids


# ---------------------------------------------------------------- batching
def test_collate_pads_shifts_and_masks():
    batch = collate([([5, 6, 7], [8, 9]), ([5], [8, 9, 10, 11])], pad_id=0, bos_id=2, eos_id=3)
    assert batch.src.tolist() == [[5, 6, 7], [5, 0, 0]]
    assert batch.tgt_in.tolist() == [[2, 8, 9, 0, 0], [2, 8, 9, 10, 11]]
    assert batch.tgt_out.tolist() == [[8, 9, 3, 0, 0], [8, 9, 10, 11, 3]]
    assert batch.src_mask.shape == (2, 1, 1, 3) and batch.tgt_mask.shape == (2, 1, 5, 5)
    assert torch.equal(batch.src_mask, masks.padding_mask(batch.src, 0))
    assert torch.equal(batch.tgt_mask, masks.target_mask(batch.tgt_in, 0))
    assert batch.n_tokens == 3 + 5 and len(batch) == 2
    assert batch.index.tolist() == [0, 1]
    moved = batch.to("cpu")
    assert isinstance(moved, Batch) and torch.equal(moved.tgt_out, batch.tgt_out)


def test_collate_rejects_bad_pairs():
    with pytest.raises(ValueError, match="`pairs` must be a non-empty list"):
        collate([])
    with pytest.raises(ValueError, match=r"`pairs\[1\]` must be \(src_ids, tgt_ids\)"):
        collate([([4], [5]), ([], [5])])


@pytest.mark.parametrize("kwargs", [dict(batch_size=32), dict(max_tokens=300)])
def test_every_pair_appears_exactly_once_per_epoch(small_pairs, kwargs):
    batches = make_batches(small_pairs, shuffle=True, seed=1, **kwargs)
    seen = torch.cat([b.index for b in batches]).sort().values
    assert seen.tolist() == list(range(len(small_pairs)))
    for b in batches:
        for row, k in enumerate(b.index.tolist()):
            src, tgt = small_pairs[k]
            assert b.src[row, : len(src)].tolist() == src
            assert b.src[row, len(src) :].eq(0).all()
            assert b.tgt_out[row, : len(tgt) + 1].tolist() == [*tgt, 3]


def test_batches_respect_their_size_limits(small_pairs):
    for b in make_batches(small_pairs, max_tokens=300, shuffle=True, seed=0):
        assert len(b) * max(b.src.size(1), b.tgt_in.size(1)) <= 300 or len(b) == 1
    sizes = [len(b) for b in make_batches(small_pairs, batch_size=64)]
    assert max(sizes) == 64 and sum(sizes) == len(small_pairs)


def test_length_bucketing_keeps_padding_low(small_pairs):
    batches = make_batches(small_pairs, batch_size=32, shuffle=True, seed=0)
    real = sum(int(b.src_mask.sum()) for b in batches)
    padded = sum(b.src.numel() for b in batches)
    assert real / padded > 0.9


def test_batches_are_deterministic_per_seed(small_pairs):
    def order(seed):
        return [
            b.index.tolist()
            for b in make_batches(small_pairs, batch_size=32, shuffle=True, seed=seed)
        ]

    assert order(0) == order(0)
    assert order(0) != order(1)
    unshuffled = make_batches(small_pairs, batch_size=32)
    assert [b.index.tolist() for b in unshuffled] == [
        b.index.tolist() for b in make_batches(small_pairs, batch_size=32)
    ]


def test_concatenate_pairs_joins_two_pairs_on_both_sides():
    pairs = [([4, 5], [6]), ([7], [8, 9]), ([10, 11, 12], [13])]
    joined = concatenate_pairs(pairs, 5, seed=1)
    assert len(joined) == 5 and joined == concatenate_pairs(pairs, 5, seed=1)
    for src, tgt in joined:
        matches = [(a, b) for a in pairs for b in pairs if a is not b and a[0] + b[0] == src]
        assert any(a[1] + b[1] == tgt for a, b in matches)
    with pytest.raises(ValueError, match="`pairs` must be at least 2"):
        concatenate_pairs(pairs[:1], 1)


def test_make_batches_needs_exactly_one_size(small_pairs):
    with pytest.raises(ValueError, match="`batch_size/max_tokens` must be exactly one"):
        make_batches(small_pairs)
    with pytest.raises(ValueError, match="`batch_size/max_tokens` must be exactly one"):
        make_batches(small_pairs, batch_size=8, max_tokens=100)
    with pytest.raises(ValueError, match="`batch_size` must be an int >= 1; got 0"):
        make_batches(small_pairs, batch_size=0)
