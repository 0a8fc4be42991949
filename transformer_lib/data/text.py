"""Text <-> tokens: :func:`tokenize` cuts NFC-normalised text into words (letters, digits and
``_`` with their combining marks, apostrophes inside: ``don't``) and symbols (one grapheme
cluster each: ``👍🏽``, ``🇩🇪``), and :func:`detokenize` joins tokens with standard spacing
around punctuation and quotes. ``tests/test_tokenize.py`` spells out, example by example,
which text comes back unchanged and which does not (the bundled corpus always does).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

import regex

from transformer_lib._checks import fail

__all__ = ["tokenize", "detokenize"]

# What stays with the letter before it: combining marks, zero-width (non-)joiners, skin tones
# and tag characters (the subdivision flags' letters).
_EXTEND = r"[\p{M}\u200c\u200d\U0001F3FB-\U0001F3FF\U000E0020-\U000E007F]"
_PART = rf"(?:[\p{{L}}\p{{N}}_]{_EXTEND}*)+"  # Python's \w (letters, digits, _) with marks
# A word (parts joined by apostrophes), or any other character that is not a space (Python's
# str.isspace) with what Unicode joins to it: one extended grapheme cluster, \X.
_TOKEN = regex.compile(rf"{_PART}(?:['’]{_PART})*|(?![\s\x1c-\x1f])\X")

_NO_SPACE_BEFORE = frozenset(".,;:!?%…)]}")
_NO_SPACE_AFTER = frozenset("([{¿¡$£¥")
_JOINED = frozenset(("-", "/", "—"))  # hyphen, slash, em dash: no space on either side
_BETWEEN_NUMBERS = frozenset((".", ",", ":", "–"))  # 3.5, 3,5, 12:30, 1990–2000
_CLOSES = {  # each quote mark -> the open quotes it closes when innermost; else it opens
    "„": "", "‚": "", "“": "„", "”": "“„”", "‘": "‚", "’": "‘‚",  # German, English
    "»": "«", "«": "»", "›": "‹", "‹": "›", '"': '"', "'": "'",  # guillemets, straight
}  # fmt: skip


def tokenize(text: str) -> list[str]:
    """Split into words and punctuation marks; case is kept (German nouns are capitalised).

    ``"Heute sieht der Hund die Katze, oder?"`` ->
    ``["Heute", "sieht", "der", "Hund", "die", "Katze", ",", "oder", "?"]``.
    The text is normalised to NFC first; apostrophes inside a word stay in it (``"don't"``
    is one token) and emoji or accented letters stay whole.
    """
    if not isinstance(text, str):
        fail("text", "a str", type(text).__name__, "Pass one sentence.", error=TypeError)
    return _TOKEN.findall(unicodedata.normalize("NFC", text))


def _is_number(token: str | None) -> bool:
    return token is not None and token.isdecimal()


def _quote_role(token: str, open_quotes: list[str], later_straight: int) -> str:
    """ "close", "open" or "apostrophe" for a quote mark; updates the open quotes."""
    if open_quotes and open_quotes[-1] in _CLOSES[token]:
        open_quotes.pop()
        return "close"
    if token == "’" or (token == "'" and not later_straight):
        return "apostrophe"
    open_quotes.append(token)
    return "open"


def _sides(tokens: list[str]) -> list[tuple[bool, bool]]:
    """For every token: (no space before it, no space after it)."""
    sides: list[tuple[bool, bool]] = []
    open_quotes: list[str] = []
    later_straight = tokens.count("'")  # straight single quotes from here on
    for k, token in enumerate(tokens):
        before = tokens[k - 1] if k else None
        after = tokens[k + 1] if k + 1 < len(tokens) else None
        later_straight -= token == "'"
        if token in _CLOSES:
            role = _quote_role(token, open_quotes, later_straight)
            if role == "apostrophe":  # sticks to the next word at the start or after an opener
                role = "open" if not k or sides[-1][1] else "close"
            side = (role == "close", role == "open")
        elif token in _JOINED or (
            token in _BETWEEN_NUMBERS and _is_number(before) and _is_number(after)
        ):
            side = (True, True)
        else:
            side = (token in _NO_SPACE_BEFORE, token in _NO_SPACE_AFTER)
        sides.append(side)
    return sides


def detokenize(tokens: Iterable[str]) -> str:
    """Join tokens into text with standard spacing around punctuation and quotes.

    No space before ``. , ; : ! ? % … ) ] }`` or a closing quote, none after ``( [ { ¿ ¡ $ £ ¥``
    or an opening quote, none around ``- / —`` nor around ``. , : –`` between two numbers.
    Quotes pair up innermost first (``„…“ ‚…‘ »…« “…” ‘…’ "…" '…' «…»``); a ``’`` or ``'``
    that neither opens nor closes is an apostrophe and sticks to its word. Inverts
    :func:`tokenize` on text with standard spacing, the bundled corpus included; BLEU is
    computed on this text.
    """
    tokens = list(tokens)
    sides = _sides(tokens)
    parts = []
    for k, token in enumerate(tokens):
        if k and not (sides[k - 1][1] or sides[k][0]):
            parts.append(" ")
        parts.append(token)
    return "".join(parts)
