"""Tests for transformer_lib.data.text: tokenize / detokenize on real text, emoji and NFD input.

Each behaviour test names what the tokenizer did before Unicode normalisation, grapheme
clusters and quote pairing were added ("before") and what it does now.
"""

from __future__ import annotations

import random
import re
import sys
import unicodedata

import pytest

from transformer_lib.data import DATA_DIR, SPLITS, detokenize, read_tsv, tokenize
from transformer_lib.data.vocab import SPECIALS
from transformer_lib.train.evaluate import corpus_bleu

NFC = "NFC"


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


# ---------------------------------------------------------------- the old implementation
# Kept verbatim so the bundled corpus is checked against what the notebooks' outputs were made with.
_OLD_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def old_tokenize(text: str) -> list[str]:
    return _OLD_TOKEN.findall(text)


def old_detokenize(tokens: list[str]) -> str:
    text = " ".join(tokens)
    text = re.sub(r" ([.,!?;:%)\]}])", r"\1", text)
    return re.sub(r"([(\[{¿¡]) ", r"\1", text)


@pytest.fixture(scope="module")
def corpus_lines() -> list[str]:
    """Both sides of every line of every bundled split."""
    return [text for name in SPLITS for ex in read_tsv(DATA_DIR / f"{name}.tsv") for text in ex[:2]]


def test_every_bundled_line_tokenizes_and_detokenizes_exactly_as_before(corpus_lines):
    assert len(corpus_lines) > 40_000
    for text in corpus_lines:
        tokens = tokenize(text)
        assert tokens == old_tokenize(text), text
        assert detokenize(tokens) == old_detokenize(tokens) == text, text


def test_any_sequence_of_corpus_tokens_detokenizes_as_before(corpus_lines):
    """Model outputs are any mix of corpus tokens; the notebooks' stored translations hold."""
    vocabulary = sorted({t for text in corpus_lines[:4000] for t in tokenize(text)} | {*SPECIALS})
    rng = random.Random(0)
    for _ in range(2000):
        tokens = rng.choices(vocabulary, k=rng.randint(0, 12))
        assert detokenize(tokens) == old_detokenize(tokens), tokens


# ---------------------------------------------------------------- Unicode
@pytest.mark.parametrize(
    "text, before, after",
    [
        (nfd("Café"), ["Cafe", "\u0301"], ["Café"]),
        (
            nfd("Mädchen über Straße"),
            ["Ma", "\u0308", "dchen", "u", "\u0308", "ber", "Straße"],
            None,
        ),
        ("x\u0301y", ["x", "\u0301", "y"], ["x\u0301y"]),  # no precomposed form: the mark stays
        ("किताब", ["क", "ि", "त", "ा", "ब"], ["किताब"]),  # Devanagari vowel signs are marks
    ],
)
def test_accents_never_split_a_word(text, before, after):
    assert old_tokenize(text) == before
    after = after or tokenize(unicodedata.normalize(NFC, text))
    assert tokenize(text) == after and len(after) == len(text.split())


@pytest.mark.parametrize(
    "emoji",
    [
        "👍🏽",
        "👩\u200d👩\u200d👧",
        "❤️",
        "🇩🇪",
        "🏳️\u200d🌈",
        "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
        "1️⃣",
        "#️⃣",
    ],
)
def test_emoji_stay_whole(emoji):
    text = f"Super {emoji} oder?"
    assert len(old_tokenize(text)) > 4  # before: modifiers, joiners and selectors fell apart
    assert tokenize(text) == ["Super", emoji, "oder", "?"]
    assert detokenize(tokenize(text)) == text


def test_flags_pair_their_regional_indicators():
    assert tokenize("🇩🇪🇺🇸🇫") == ["🇩🇪", "🇺🇸", "🇫"]


def test_nfd_input_tokenizes_like_nfc_and_comes_back_composed():
    text = "Die Mädchen gehen über die Straße, oder?"
    assert tokenize(nfd(text)) == tokenize(text)
    assert detokenize(tokenize(nfd(text))) == text


def test_every_combining_mark_in_unicode_stays_with_its_letter():
    marks = [
        chr(cp) for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)).startswith("M")
    ]
    assert len(marks) > 2000
    split = [hex(ord(mark)) for mark in marks if len(tokenize(f"a{mark}b")) != 1]
    assert split == []


def test_tokenize_rejects_a_non_string():
    with pytest.raises(TypeError, match=r"`text` must be a str; got list\. Pass one sentence"):
        tokenize(["der", "Hund"])


# ---------------------------------------------------------------- punctuation and quotes
ROUND_TRIPS = [  # (text, what detokenize(tokenize(text)) gave before)
    # German quotes, single and double, nested
    ("„Hallo“, sagte er.", "„ Hallo “, sagte er."),
    (
        "Er sagte: „Ich komme ‚bald‘ (vielleicht).“",
        "Er sagte: „ Ich komme ‚ bald ‘ (vielleicht). “",
    ),
    ("»Das ist ›gut‹«, meinte sie.", "» Das ist › gut ‹ «, meinte sie."),
    ("«Grüezi», sagte er.", "« Grüezi », sagte er."),
    # English quotes
    ("“Hi,” she said, “it’s ‘fine’.”", "“ Hi, ” she said, “ it’s ‘ fine ’. ”"),
    ('He said, "Hello." Then "bye".', 'He said, " Hello. " Then " bye ".'),
    ("She said 'no' twice.", "She said ' no ' twice."),
    ("”Hej”, sa han.", "” Hej ”, sa han."),
    # apostrophes
    ("I don't know Peter's dog; wie geht's?", "I don't know Peter's dog; wie geht's?"),
    ("The boys' room has Max’ bed.", "The boys ' room has Max ’ bed."),
    ("'cause I can.", "' cause I can."),
    # ellipsis, dashes, hyphens, slashes
    ("Wait… what... really?!", "Wait … what... really?!"),
    (
        "The E-Mail—and/or the well-known 1990–2000 list – done.",
        "The E - Mail — and / or the well - known 1990 – 2000 list – done.",
    ),
    # brackets, numbers, symbols
    ("A (small) [big] {odd} thing: ¿Qué? ¡Sí!", "A (small) [big] {odd} thing: ¿Qué? ¡Sí!"),
    (
        "It costs $3.50 (3,5 €), or 50% at 12:30 & later.",
        "It costs $ 3. 50 (3, 5 €), or 50% at 12: 30 & later.",
    ),
]


@pytest.mark.parametrize("text, before", ROUND_TRIPS)
def test_real_text_round_trips(text, before):
    assert old_detokenize(old_tokenize(text)) == before
    assert detokenize(tokenize(text)) == text


def test_punctuation_is_still_split_from_words():
    assert tokenize("„Hallo“, sagte er.") == ["„", "Hallo", "“", ",", "sagte", "er", "."]
    assert tokenize("E-Mail and/or 3.5") == ["E", "-", "Mail", "and", "/", "or", "3", ".", "5"]


def test_a_token_perfect_german_translation_scores_bleu_100():
    reference = "Sie sagte: „Der Hund schläft nicht“, und ging."
    hypothesis = detokenize(tokenize(reference))
    assert round(corpus_bleu([old_detokenize(tokenize(reference))], [reference])) < 100
    assert corpus_bleu([hypothesis], [reference]) == pytest.approx(100.0)


@pytest.mark.parametrize(
    "text, back",
    [
        ("Count 1, 2, 3.", "Count 1,2,3."),  # . , : between two numbers are closed up
        ("the boys' and girls' rooms", "the boys 'and girls' rooms"),  # a later ' pairs up
        ("a - b", "a-b"),  # a hyphen is never spaced
        ("Great👍", "Great 👍"),  # emoji are spaced
    ],
)
def test_text_outside_the_documented_spacing_comes_back_respaced(text, back):
    assert tokenize(back) == tokenize(text)  # the tokens hold no spacing: one of the two is lost
    assert detokenize(tokenize(text)) == detokenize(tokenize(back)) == back


@pytest.mark.parametrize(
    "text, back",
    [
        ("I live in the U.S. now.", "I live in the U. S. now."),  # abbreviations with dots
        ("See https://example.org/a now.", "See https://example. org/a now."),  # URLs
        ("Mail me@example.org today.", "Mail me @ example. org today."),  # e-mail addresses
        ("« Bonjour ! »", "«Bonjour!»"),  # French spacing
        ("Hin- und Rückfahrt", "Hin-und Rückfahrt"),  # a hyphen standing for a word
        ("Wow 👍👍 ok", "Wow 👍 👍 ok"),  # emoji touching each other
    ],
)
def test_what_the_spacing_rules_do_not_cover(text, back):
    assert detokenize(tokenize(text)) == back


# ---------------------------------------------------------------- property test
WORDS = [
    "the", "dog", "don't", "Peter's", "naïve", "café", "it’s", "we're",
    "der", "Hund", "Mädchen", "größer", "Straße", "über", "Äpfel", "Öl", "Fuß", "geht's",
    "Übermäßig", "schön", "Grüße", "x\u0301y",
]  # fmt: skip
WORDS += [nfd(w) for w in WORDS if nfd(w) != w]
NUMBERS = ["3", "42", "3.5", "3,5", "12:30", "1,000", "1.000.000", "1990–2000", "$5", "50%"]
JOINED = ["E-Mail", "well-known", "and/or", "wait—what", "Wort – Wort", "Tom & Jerry", "5 €"]
EMOJI = ["👍🏽", "👩\u200d👩\u200d👧", "❤️", "🇩🇪", "🏳️\u200d🌈", "😀"]
OUTER_QUOTES = {"„“": "‚‘", "»«": "›‹", "“”": "‘’", '""': "''", "«»": "‹›", "''": "", "””": ""}
WORD_ENDS = ["", "", "", ",", ";", ":"]
SENTENCE_ENDS = [".", "!", "?", "…", "...", "?!", ""]


def _phrase(rng: random.Random, quotes: dict[str, str]) -> str:
    """Items separated by spaces; `quotes` maps the quote pairs allowed here to their inner pair."""
    items = []
    for _ in range(rng.randint(1, 5)):
        kind = rng.random()
        if kind < 0.5:
            items.append(rng.choice(WORDS) + rng.choice(WORD_ENDS))
        elif kind < 0.6:
            items.append(rng.choice(NUMBERS))
        elif kind < 0.7:
            items.append(rng.choice(JOINED))
        elif kind < 0.8:
            items.append(rng.choice(EMOJI))
        elif kind < 0.87:
            opening, closing = rng.choice(["()", "[]"])
            items.append(f"{opening}{_phrase(rng, {})}{closing}")
        elif quotes:
            pair = rng.choice(sorted(quotes))
            inner = {quotes[pair]: ""} if quotes[pair] else {}
            end = rng.choice(["", "", "?", "!", "."])
            items.append(f"{pair[0]}{_phrase(rng, inner)}{end}{pair[1]}")
    return " ".join(items) or rng.choice(WORDS)


def random_sentence(rng: random.Random) -> str:
    """One or two sentences; the second starts with a word so that "3. 5" never arises."""
    first = "¿" * (rng.random() < 0.05) + _phrase(rng, OUTER_QUOTES) + rng.choice(SENTENCE_ENDS)
    if rng.random() < 0.5:
        return first
    second = f"{rng.choice(WORDS)} {_phrase(rng, OUTER_QUOTES)}{rng.choice(SENTENCE_ENDS)}"
    return f"{first} {second}"


def test_random_text_round_trips_and_nfd_tokenizes_like_nfc():
    rng = random.Random(12)
    for _ in range(3000):
        text = random_sentence(rng)
        composed = unicodedata.normalize(NFC, text)
        tokens = tokenize(text)
        assert detokenize(tokens) == composed, (text, tokens)
        assert tokens == tokenize(composed) == tokenize(nfd(text)), text
        assert all(unicodedata.is_normalized(NFC, t) for t in tokens), text
