"""Text <-> tokens: split a sentence into words and punctuation, and join tokens back into text.

:func:`tokenize` normalises the text to NFC first (so ``"Café"`` typed with a combining
accent is the same single token as the precomposed form), then cuts it into

- words: runs of letters, digits and ``_`` (Python's ``\\w``) together with the combining
  marks and joiners that belong to them, and apostrophes between two such runs
  (``don't``, ``geht's``, ``Peter’s``);
- symbols: every other non-space character, one grapheme cluster per token: a character
  with its combining marks, variation selectors (``❤️``), skin-tone modifiers (``👍🏽``)
  and zero-width-joined parts (``👩‍👩‍👧``), or a pair of regional indicators (a flag, ``🇩🇪``).

:func:`detokenize` puts one space between two tokens unless a rule says none:

- none before ``. , ; : ! ? % … ) ] }`` and closing quotes; none after ``( [ { ¿ ¡``,
  opening quotes and ``$ £ ¥``;
- none on either side of ``-``, ``/`` and ``—`` (``E-Mail``, ``and/or``, ``wait—what``), nor
  of ``.``, ``,``, ``:`` and ``–`` between two numbers (``3.5``, ``3,5``, ``12:30``, ``1990–2000``);
- quotes pair up, innermost first: ``„…“ ‚…‘ »…« ›…‹`` (German), ``“…” ‘…’ "…" '…'``
  (English), ``«…» ‹…›`` and ``”…”`` (Swiss, Swedish). A mark closes the innermost open
  quote when it is that quote's partner and opens a quote otherwise; ``„`` and ``‚``
  always open; a ``'`` opens only when a later ``'`` can close it;
- a ``’`` or ``'`` that neither opens nor closes is an apostrophe: it sticks to the word
  before it (``the boys' room``, ``Max’ Auto``), or to the word after it at the start of the
  text or after an opening mark (``'cause``).

Round trip: ``detokenize(tokenize(s)) == unicodedata.normalize("NFC", s)`` holds exactly for
text written the way these rules assume:

- single spaces between words and symbols, none at either end, no tabs or line breaks;
- standard punctuation spacing (the first rule) and balanced, properly nested quotes of the
  styles above;
- hyphens, slashes and em dashes closed up; en dashes spaced (``Wort – Wort``) except in a
  range of numbers; ``.``, ``,`` and ``:`` closed up between numbers (so ``"1, 2"`` or
  ``"3. 5"`` come back as ``"1,2"`` and ``"3.5"``);
- a stray apostrophe only where no later ``'`` exists (``the boys' and girls' rooms`` reads
  as a quote) and not inside ``‘…’``;
- every other symbol (``& + = € @ # * °``, emoji) with a space on both sides.

Not covered: abbreviations with inner dots (``U.S.``), URLs and e-mail addresses, French
spacing (``« Bonjour ! »``), ``Hin- und Rückfahrt``, emoji touching a word or each other.
The bundled corpus (letters, ``,``, ``.``, ``?``) tokenizes and detokenizes exactly as it
did before these rules existed.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from transformer_lib._checks import fail

__all__ = ["tokenize", "detokenize"]

# Unicode assigns combining marks in planes 0, 1 and 14 only (a test checks the whole range).
_MARK_PLANES = (range(0x20000), range(0xE0000, 0xE1000))
# Extenders that are not marks: ZWNJ and ZWJ, skin-tone modifiers, tag characters (🏴 flags).
_OTHER_EXTENDERS = ((0x200C, 0x200D), (0x1F3FB, 0x1F3FF), (0xE0020, 0xE007F))
_FLAG = r"[\U0001F1E6-\U0001F1FF]{2}"  # two regional indicators

_NO_SPACE_BEFORE = frozenset(".,;:!?%…)]}")
_NO_SPACE_AFTER = frozenset("([{¿¡$£¥")
_JOINED = frozenset(("-", "/", "—"))  # hyphen, slash, em dash: no space on either side
_BETWEEN_NUMBERS = frozenset((".", ",", ":", "–"))  # 3.5, 3,5, 12:30, 1990–2000
# Each quote mark -> the open quotes it closes when one of them is innermost; else it opens.
_CLOSES = {
    "„": "",
    "‚": "",
    "“": "„",
    "”": "“„”",
    "‘": "‚",
    "’": "‘‚",
    "»": "«",
    "«": "»",
    "›": "‹",
    "‹": "›",
    '"': '"',
    "'": "'",
}


def _extender_ranges() -> list[tuple[int, int]]:
    """Code point ranges that extend the grapheme cluster before them."""
    ranges = list(_OTHER_EXTENDERS)
    for plane in _MARK_PLANES:
        start = None
        for cp in plane:
            is_mark = unicodedata.category(chr(cp)).startswith("M")
            if is_mark and start is None:
                start = cp
            elif not is_mark and start is not None:
                ranges.append((start, cp - 1))
                start = None
    return ranges


@functools.cache
def _token_pattern() -> re.Pattern[str]:
    """Built on first use (scanning Unicode takes ~50 ms), then cached."""
    ranges = _extender_ranges()
    bmp = "".join(rf"\u{a:04x}-\u{b:04x}" for a, b in ranges if b <= 0xFFFF)
    astral = "".join(rf"\U{a:08x}-\U{b:08x}" for a, b in ranges if b > 0xFFFF)
    # re tests a class of BMP characters with one table look-up but scans astral ranges
    # one by one, so only characters outside the BMP reach the second class.
    extend = rf"(?:[{bmp}]|(?=[\U00010000-\U0010ffff])[{astral}])"
    part = rf"(?:\w{extend}*)+"  # letters with their marks; without marks this is \w+
    word = rf"{part}(?:['’]{part})*"
    symbol = rf"[^\w\s]{extend}*(?:(?<=\u200d)[^\w\s]{extend}*)*"  # joined after a ZWJ
    return re.compile(f"{word}|{_FLAG}|{symbol}")


def tokenize(text: str) -> list[str]:
    """Split into words and punctuation marks; case is kept (German nouns are capitalised).

    ``"Heute sieht der Hund die Katze, oder?"`` ->
    ``["Heute", "sieht", "der", "Hund", "die", "Katze", ",", "oder", "?"]``.
    The text is normalised to NFC first; apostrophes inside a word stay in it (``"don't"``
    is one token) and emoji or accented letters stay whole (see the module docstring).
    """
    if not isinstance(text, str):
        fail("text", "a str", type(text).__name__, "Pass one sentence.", error=TypeError)
    return _token_pattern().findall(unicodedata.normalize("NFC", text))


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

    Inverts :func:`tokenize` on text with standard spacing (the module docstring says
    exactly which), including the bundled corpus; BLEU is computed on this text.
    """
    tokens = list(tokens)
    sides = _sides(tokens)
    parts = []
    for k, token in enumerate(tokens):
        if k and not (sides[k - 1][1] or sides[k][0]):
            parts.append(" ")
        parts.append(token)
    return "".join(parts)
