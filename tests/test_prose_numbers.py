"""Numbers in the notebooks' prose cannot drift from the numbers the notebooks produce.

Every number that a Markdown cell quotes must be *supported*, by one of

(a) a stored output of the same notebook (stream text, ``text/plain``, ``text/html``,
    ``text/markdown``, ``text/latex``, error messages);
(b) a committed results file that the notebook reads: ``benchmarks/results/<name>.csv``
    whose file name appears in one of the notebook's code cells;
(c) a numeric literal in the notebook's code cells (``STEPS = 800``, ``d_model=64``,
    ``1_500``): a number the prose takes from the code is a quote of the code and cannot
    drift from it either. Strings, comments and drawing options (``figsize=``, ``alpha=``,
    ``lw=``, ...) do not count;
(d) ``tests/paper_numbers.toml``: the paper's figures and the definitional constants the
    notebooks quote, each with its source, its reason and a cue.

The check is about presence, not meaning: it cannot tell that 95.1 is quoted as a BLEU
score while the output prints it as a loss, and a wrong number that happens to equal another
printed number passes. It does catch a result quoted after the run changed, a figure copied
wrong, and a number worked out by hand (a difference, a mean, a ratio, an order of magnitude)
that no cell prints: print it, best as the whole sentence, from the numbers.

1. What is a number. A run of ASCII digits (full-width digits count), with optional
   thousands groups (``24,000``; LaTeX ``10\\,000`` and ``10{,}000``, thin spaces), an
   optional decimal part and an optional exponent: ``1e-9``, ``10^{-9}``, ``10⁻⁹``,
   ``1.7 \\times 10^{-6}`` and ``1.7×10⁻⁶`` are numbers with that value. It may carry a scale
   (``4.5 million``, ``thousand``, ``billion``, ``2.1 M``, ``40.7 k``, Chinese ``万`` and
   ``亿``: ``450万`` is 4,500,000) and a percent sign (``40 %``, ``40%``, ``40％``). The sign
   is ignored: prose says "worse by 0.3" where an output prints -0.3. Numbers in words
   ("three seeds") are not checked. Code spans, fenced code and LaTeX are checked like the
   rest of the text.

2. What is skipped: not a claim.
   - Digits that are part of a name or a symbol: touching an ASCII letter or an underscore
     (``float32``, ``W_1``, ``2i``, ``4nd^2``, ``3D``, ``01_embeddings``, ``newstest2013``),
     LaTeX subscripts (``x_{2i}``), superscripts with a letter (``10000^{2i/d}``: the 10000
     is checked, the exponent is not) and Unicode sub- and superscript indices (``β₁``).
   - References: ``§3.2``; section, notebook, table, figure, equation, exercise, chapter,
     reference and appendix (and plurals) with their number, list or range ("notebooks
     00–08", "sections 3 and 4", "notebooks 05, 06 and 07"); in Chinese 笔记本06, 第11节,
     4.2节, 表3, 图1, 练习1, 公式1, 参考文献[30]; the paper's citations ``[30]``.
   - The number of a heading (``## 4.1 · Heads``) and of a numbered list item.
   - Years of citations ("Ba et al., 2016", "(Post, 2018)") and of "WMT 2014".
   - URLs, link targets and HTML tags.
   - Integers from 0 to 10 with no decimal point, percent sign or scale: counts and small
     constants ("two layers", "3 seeds", "probability 1"). Any decimal (0.5), percentage or
     integer above 10 is checked.

3. What supports a quote. Write the quote's unit u for the place of its last written digit
   (0.01 for 95.13, 1 for 95, 100,000 for "4.5 million", 10,000 for 27万). The trailing zeros
   of a scaled integer (3800万, "40 million") and of an integer after "about", "nearly",
   "almost", "around", "roughly", "≈", 约, 接近 or 将近 ("about 47,000") are not digits.
   - The same value supports it, from any source: 95.10 and 95.1 are the same value, a
     percentage q % is the value q or q/100 ("40 %" is supported by 0.40 and by 40).
   - An output supports it rounded (half up or half to even) when the quote keeps two or more
     significant digits: 17.849489 supports 17.85, 95.13 supports 95, 0.404 supports
     "40 %", 52.6 supports 53. A one-digit quote (0.2, 1e-7, 0.05) needs the same value:
     0.17 does not support "0.2".
   - A results file supports it rounded when the quote keeps three or more significant
     digits (53.351401201443934 supports 53.4, not 53): a file holds hundreds of values, and
     one of them rounds to almost any two-digit number. Print what the prose quotes from it.
   - A code literal, and a value of ``tests/paper_numbers.toml``, support only the same
     value; a listed value only in a cell that names its source (the entry's ``cue``, by
     default the paper: "paper", "§", "Table 3", "row (A)", "base model", 论文, ...), so that
     β1 = 0.9 does not support "beam search gained 0.9 BLEU".

Every Markdown cell of every notebook, English (``notebooks/0*.ipynb``) and Chinese
(``notebooks/zh_CN/0*.ipynb``), is checked against its own notebook: the Chinese edition's
outputs are stored by its own run. ``python tests/test_prose_numbers.py`` prints the
unsupported numbers of every notebook as Markdown (cell id, number, sentence).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
import tokenize
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAPER_FILE = ROOT / "tests" / "paper_numbers.toml"
NOTEBOOKS = sorted(ROOT.glob("notebooks/0*.ipynb")) + sorted(ROOT.glob("notebooks/zh_CN/0*.ipynb"))

FULL_WIDTH = str.maketrans("０１２３４５６７８９％", "0123456789%")
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
MINUS = "-−–"  # hyphen, minus sign; an en dash only inside 10^{–9}

# A number: thousands groups or plain digits, a decimal part, an exponent.
NUMBER = r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:[eE][-+−]?[0-9]+)?"
SCALES = {
    "thousand": Decimal(10) ** 3,
    "million": Decimal(10) ** 6,
    "billion": Decimal(10) ** 9,
    "M": Decimal(10) ** 6,
    "k": Decimal(10) ** 3,
    "万": Decimal(10) ** 4,
    "亿": Decimal(10) ** 8,
}
QUOTE = re.compile(
    rf"(?P<num>{NUMBER})"
    r"(?P<scale>\s?(?:thousand|million|billion|M|k)(?![A-Za-z0-9_])|\s?[万亿])?"
    r"(?P<pct>\s?[%％])?"
)
# References, not claims: §3.2, "notebooks 05, 06 and 07", "sections 3 to 5", 第11节, 4.2节.
_ITEM = r"[\[(]?(?:§\s*)?[0-9]{1,2}(?:\.[0-9]+)*(?![0-9])[\])]?"  # two digits at most
_RANGE = rf"{_ITEM}(?:\s*(?:[–—-]|\bto\b|至|到)\s*{_ITEM})?"
_LIST = rf"{_RANGE}(?:(?:\s*[,、]\s*{_RANGE})*\s*,?\s*(?:\band\b|\bor\b|和|或|与|及)\s*{_RANGE})?"
REFERENCE = re.compile(
    r"(?:(?:§§?|\b(?:sections?|notebooks?|tables?|figures?|fig\.|equations?|eqs?\.|exercises?"
    r"|chapters?|references?|appendix)|笔记本|参考文献|(?<![代列发])表|(?<![试意])图|练习|公式)"
    rf"\s*{_LIST})|(?:第\s*)?{_LIST}\s*(?=节|章|部分)",
    re.IGNORECASE,
)
APPROXIMATELY = re.compile(
    r"(?:\b(?:about|around|near|nearly|almost|roughly|approximately|some)|~|≈|\\approx|约|接近|将近)\s*$"
)
CITATION_YEAR = re.compile(
    r"(?:et al\.,?|[A-Z][A-Za-z-]+,|WMT)\s+(?:19[5-9][0-9]|20[0-2][0-9])(?![0-9])"
)


@dataclass(frozen=True)
class Quote:
    """A number as the prose writes it: its value, the unit of its last digit, and where."""

    text: str
    value: Decimal
    unit: Decimal
    percent: bool
    cell: str
    sentence: str


def _blank(text: str, start: int, end: int) -> str:
    """The text with [start, end) replaced by spaces, so that positions stay where they were."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def _blank_all(text: str, pattern: re.Pattern | str, group: int = 0) -> str:
    for match in list(re.finditer(pattern, text)):
        text = _blank(text, match.start(group), match.end(group))
    return text


def _decimal(number: str) -> tuple[Decimal, Decimal]:
    """The value of a number as written and the unit of its last written digit."""
    number = number.replace(",", "").replace("−", "-")
    value = Decimal(number)
    return abs(value), Decimal(1).scaleb(value.as_tuple().exponent)


def normalise(text: str) -> str:
    """Full-width digits to ASCII; powers of ten to e-notation; thousands spaces removed."""
    text = text.translate(FULL_WIDTH)
    text = re.sub(r"(?<=[0-9])(?:\\,|\{,\}|[\u2009\u202f])(?=[0-9]{3})", ",", text)
    # 1.7 \times 10^{-6}, 1.7×10⁻⁶, 10^{-9}, 10⁻⁹ -> 1.7e-6, 1e-9
    sup = "[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+"
    power = rf"10\s*(?:\^\s*\{{\s*(?P<e1>[{MINUS}]?\s*[0-9]+)\s*\}}|\^\s*(?P<e2>-?[0-9]+)|(?P<e3>{sup}))"

    def to_e(match: re.Match) -> str:
        exponent = match["e1"] or match["e2"] or match["e3"].translate(SUPERSCRIPT)
        exponent = re.sub(rf"[{MINUS}]\s*", "-", exponent)
        mantissa = match["m"] or "1"
        return f"{mantissa}e{exponent}"

    times = r"(?:\s*(?:\\times|×|\\cdot|·)\s*)"
    text = re.sub(rf"(?:(?P<m>{NUMBER}){times})?(?<![0-9.]){power}", to_e, text)
    return text


def prose_numbers(source: str, cell: str = "") -> list[Quote]:
    """The numbers a Markdown cell quotes as claims (rules 1 and 2 of the module docstring)."""
    text = normalise(source)
    masked = text
    masked = _blank_all(masked, r"https?://\S+|\]\([^)]*\)|<[^<>\s][^<>]*>")  # URLs, links, tags
    masked = _blank_all(masked, r"(?m)^#{1,6}\s+([0-9]+(?:\.[0-9]+)*)\s*[·.:]", 1)  # headings
    masked = _blank_all(masked, r"(?m)^\s*([0-9]+)[.)]\s", 1)  # numbered list items
    masked = _blank_all(masked, REFERENCE)
    masked = _blank_all(masked, CITATION_YEAR)
    # the paper's own citations: [30]
    masked = _blank_all(masked, r"(?<![A-Za-z0-9_`:\]])\[[0-9]{1,2}(?:,\s*[0-9]{1,2})*\]")
    masked = _blank_all(masked, r"_\{[^{}]*\}|_[0-9]+|\^\{[0-9]*[a-z][^{}]*\}")  # indices
    quotes = []
    for match in QUOTE.finditer(masked):
        before = masked[match.start() - 1] if match.start() else " "
        after = masked[match.end("num") :][:1]
        if re.match(r"[A-Za-z_0-9.]", before) or (
            not match["scale"] and not match["pct"] and re.match(r"[A-Za-z_0-9]", after)
        ):
            continue  # part of a name: float32, W_1, 2i, 3D, v1.2
        value, unit = _decimal(match["num"])
        percent = bool(match["pct"])
        if unit == 1 and not match["scale"] and APPROXIMATELY.search(masked[: match.start()]):
            while value and value % (10 * unit) == 0:  # "about 47,000": the zeros are not digits
                unit *= 10
        if match["scale"]:
            scale = SCALES[match["scale"].strip()]
            if unit == 1:  # 3800万, 40 million: trailing zeros of a scaled integer are not digits
                while value % (10 * unit) == 0 and value:
                    unit *= 10
            value, unit = value * scale, unit * scale
        elif not percent and unit >= 1 and value <= 10 and "e" not in match["num"].lower():
            continue  # a small count
        quotes.append(
            Quote(
                match.group().strip(),
                value,
                unit,
                percent,
                cell,
                sentence_at(text, match.start(), match.end()),
            )
        )
    return quotes


def sentence_at(text: str, start: int, end: int) -> str:
    """The sentence around text[start:end], on one line, for the report."""
    stops = r"(?<=[.!?])\s+(?=[A-Z*$`(\"“])|[。！？]|\n\s*\n|\n(?=\s*[-*>|#])"
    left = max((m.end() for m in re.finditer(stops, text[:start])), default=0)
    right = re.search(stops, text[end:])
    sentence = text[left : end + right.start() if right else len(text)]
    sentence = " ".join(sentence.split())
    return sentence if len(sentence) <= 300 else sentence[:297] + "..."


def _numbers_in(text: str) -> set[Decimal]:
    """Every number an output or results file shows, generously: also digits inside names."""
    text = normalise(text)
    found = set()
    for pattern in (NUMBER, r"[0-9]+(?:\.[0-9]+)?"):
        for match in re.finditer(pattern, text):
            try:
                found.add(_decimal(match.group())[0])
            except ArithmeticError:
                pass
    return found


def output_text(notebook: dict) -> str:
    parts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            if "text" in output:
                parts.append("".join(output["text"]))
            for kind, data in output.get("data", {}).items():
                if kind.startswith("text/"):
                    parts.append(re.sub(r"<[^>]*>", " ", "".join(data)))
            if output.get("output_type") == "error":
                parts.append(output.get("evalue", ""))
    return "\n".join(parts)


# Keyword arguments that only draw: their numbers are not the notebook's configuration.
COSMETIC = set(
    "alpha figsize linewidth lw fontsize markersize ms s dpi pad rotation zorder width height"
    " shrink aspect wspace hspace bbox_to_anchor ncol labelpad size xytext fraction".split()
)


def code_literals(notebook: dict) -> set[Decimal]:
    """The numeric literals of the code cells: not in strings, comments or drawing options."""
    found = set()
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        source = re.sub(r"(?m)^\s*[%!].*$", "", source)  # magics and shell lines
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        except (tokenize.TokenError, SyntaxError):
            tokens = []
        skip_depth = None  # inside the value of a drawing option: figsize=(12, 4)
        depth = 0
        for before, token in zip([None, None, *tokens], [None, *tokens]):
            if token is None:
                continue
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth -= 1
                if skip_depth is not None and depth < skip_depth:
                    skip_depth = None
            elif token.type == tokenize.OP and token.string == ",":
                if skip_depth is not None and depth == skip_depth:
                    skip_depth = None
            elif (
                token.type == tokenize.OP
                and token.string == "="
                and before is not None
                and before.string in COSMETIC
            ):
                skip_depth = depth
            if skip_depth is not None:
                continue
            if token.type == tokenize.NUMBER and not token.string.lower().endswith("j"):
                literal = token.string.replace("_", "")
                if literal.lower().startswith(("0x", "0o", "0b")):
                    found.add(Decimal(int(literal, 0)))
                else:
                    found.add(_decimal(literal)[0])
    return found


def results_read(notebook: dict) -> list[Path]:
    """The committed results files whose names appear in the notebook's code."""
    code = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    return [path for path in sorted(RESULTS.glob("*.csv")) if path.name in code]


def results_numbers(paths: list[Path]) -> set[Decimal]:
    found = set()
    for path in paths:
        with open(path, newline="", encoding="utf-8") as file:
            for row in csv.reader(file):
                for field in row:
                    found |= _numbers_in(field)
    return found


def paper_list() -> dict:
    with open(PAPER_FILE, "rb") as file:
        return tomllib.load(file)


def paper_entries() -> list[dict]:
    return paper_list()["number"]


def paper_numbers() -> dict[Decimal, re.Pattern]:
    """Each value of tests/paper_numbers.toml, with the cue its cell must contain."""
    listed = paper_list()
    return {
        _decimal(value)[0]: re.compile(entry.get("cue", listed["paper_cue"]), re.IGNORECASE)
        for entry in listed["number"]
        for value in entry["values"]
    }


def _rounds_to(value: Decimal, quote: Quote) -> bool:
    return any(
        (value / quote.unit).quantize(Decimal(1), rounding=mode) * quote.unit == quote.value
        for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN)
    )


def significant_digits(quote: Quote) -> int:
    """How many digits the quote writes from its first non-zero one: 95.13 has 4, 0.05 has 1."""
    return quote.value.adjusted() - quote.unit.adjusted() + 1 if quote.value else 1


def supported(
    quote: Quote, shown: set[Decimal], results: set[Decimal], exact: set[Decimal]
) -> bool:
    """Rule 3 of the module docstring."""
    values = {quote.value, quote.value / 100} if quote.percent else {quote.value}
    if values & (exact | shown | results):
        return True
    digits = significant_digits(quote)
    pools = ([shown] if digits >= 2 else []) + ([results] if digits >= 3 else [])
    low, high = quote.value - quote.unit, quote.value + quote.unit
    for pool in pools:
        for value in pool:
            for scaled in (value, 100 * value) if quote.percent else (value,):
                if low <= scaled <= high and _rounds_to(scaled, quote):
                    return True
    return False


def unsupported(notebook: dict, paper: dict[Decimal, re.Pattern] | None = None) -> list[Quote]:
    """The quotes of a notebook's Markdown cells that nothing supports."""
    paper = paper_numbers() if paper is None else paper
    shown = _numbers_in(output_text(notebook))
    results = results_numbers(results_read(notebook))
    code = code_literals(notebook)
    bad = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        cell_id, source = cell.get("id", f"#{index}"), "".join(cell["source"])
        cited = {value for value, cue in paper.items() if cue.search(source)}
        for quote in prose_numbers(source, cell_id):
            if not supported(quote, shown, results, code | cited):
                bad.append(quote)
    return bad


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT / "notebooks"))


def report(quotes: list[Quote]) -> str:
    return "\n".join(f"- `{q.cell}` **{q.text}**: {q.sentence}" for q in quotes)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_name)
def test_every_number_in_the_prose_is_supported(path):
    bad = unsupported(load(path))
    assert not bad, (
        f"{len(bad)} number(s) in the prose of {_name(path)} appear in no stored output, no "
        "results file it reads, no code cell and not in tests/paper_numbers.toml; print them "
        "from the numbers, or fix them:\n" + report(bad)
    )


def test_the_paper_list_gives_a_source_and_a_reason_for_every_entry():
    entries = paper_entries()
    values = [_decimal(value)[0] for entry in entries for value in entry["values"]]
    assert len(values) == len(set(values)), "a value is listed twice"
    for entry in entries:
        assert set(entry) - {"cue"} == {"values", "source", "reason"}, entry
        assert entry["values"] and entry["source"].strip() and entry["reason"].strip(), entry


def test_every_paper_value_is_quoted_somewhere():
    """A value that no notebook quotes any more goes: the list stays short."""
    quoted = set()
    for path in NOTEBOOKS:
        for cell in load(path)["cells"]:
            if cell["cell_type"] == "markdown":
                for quote in prose_numbers("".join(cell["source"])):
                    quoted |= {quote.value, quote.value / 100} if quote.percent else {quote.value}
    assert set(paper_numbers()) <= quoted, sorted(set(paper_numbers()) - quoted)


@pytest.mark.parametrize(
    "prose, numbers",
    [
        ("a BLEU of 95.13 on `valid`", ["95.13"]),
        ("24,000 pairs, 1,500 tokens and 10\\,000 steps", ["24,000", "1,500", "10,000"]),
        ("$\\epsilon = 10^{-9}$, or 1e-9, or 10⁻⁹", ["1e-9", "1e-9", "1e-9"]),
        ("about $1.7 \\times 10^{-6}$ of their size", ["1.7e-6"]),
        ("padding: 7.2 % and 56.2%", ["7.2 %", "56.2%"]),
        ("约450万个句对，１２３个", ["450万", "123"]),
        ("about 4.5 million sentence pairs", ["4.5 million"]),
        ("3 seeds, 2 layers and probability 1, but 0.5 and 12", ["0.5", "12"]),
        ("float32, $W_1$, $x_{12}$, `2i`, 3D, β₁, `07_toy_translator`", []),
        ("§3.2, notebooks 00–08, sections 11 and 12, Table 3, exercise 14", []),
        ("笔记本06和07，第11节，表3，练习12，参考文献[30]", []),
        ("## 4.1 · Heads\n12. item twelve", []),
        ("(Ba et al., 2016) and (Post, 2018) on WMT 2014", []),
        ("Adam 2000 steps; notebook 07 and 800 steps", ["2000", "800"]),
        ("[notebook](https://example.org/v1/2048)", []),
    ],
)
def test_what_counts_as_a_number(prose, numbers):
    assert [q.text for q in prose_numbers(prose)] == numbers


def _notebook(markdown: str, output: str, code: str = "x = 1") -> dict:
    return {
        "cells": [
            {
                "cell_type": "code",
                "id": "c",
                "source": code,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": output}],
            },
            {"cell_type": "markdown", "id": "m", "source": markdown},
        ]
    }


@pytest.mark.parametrize(
    "prose, output, ok",
    [
        ("BLEU 95.1", "valid BLEU 95.13", True),  # rounded
        ("BLEU 95", "valid BLEU 95.13", True),
        ("BLEU 95.13", "valid BLEU 95.1", False),  # digits the output does not have
        ("BLEU 95.10", "valid BLEU 95.1", True),  # a trailing zero
        ("BLEU 95.2", "valid BLEU 95.13", False),
        ("17.85 and 17.85", "17.849489", True),
        ("40 %", "share 0.404", True),
        ("40 %", "share 40.2%", True),
        ("41 %", "share 0.404", False),
        ("24,000 pairs", "train 24000 pairs", True),
        ("a drop of 0.3", "change -0.3", True),
        ("about 10⁻⁶", "difference 1.7e-06", False),
        ("about 2e-06", "difference 1.7e-06", False),  # one digit: only the same value
        ("about 1.7e-06", "difference 1.7e-06", True),
        ("0.2 BLEU", "difference -0.17", False),
        ("0.17 BLEU", "difference -0.17", True),
        ("12 steps", "nothing", False),
    ],
)
def test_when_an_output_supports_a_quote(prose, output, ok):
    assert (unsupported(_notebook(prose, output), paper={}) == []) is ok


def test_code_literals_and_the_paper_support_only_the_same_value():
    notebook = _notebook("800 steps, 0.005, 0.0050 and 512", "", "STEPS, PEAK = 800, 0.005")
    assert [q.text for q in unsupported(notebook, paper={})] == ["512"]
    assert [q.text for q in unsupported(notebook, paper={Decimal(512): re.compile("paper")})] == [
        "512"
    ]  # a listed value needs its cue in the cell
    assert unsupported(notebook, paper={Decimal(512): re.compile("steps")}) == []
    notebook = _notebook("801 steps and 0.01", "", "STEPS, PEAK = 800, 0.005")
    assert [q.text for q in unsupported(notebook, paper={})] == ["801", "0.01"]


def test_drawing_options_are_not_configuration():
    code = "plt.subplots(figsize=(12, 4.5), dpi=90)\nax.plot(x, alpha=0.5, lw=2)\nSTEPS = 800"
    notebook = _notebook("12, 4.5, 90, 0.5 and 800", "", code)
    assert [q.text for q in unsupported(notebook, paper={})] == ["12", "4.5", "90", "0.5"]


@pytest.mark.parametrize("name", ["04_masking.ipynb", "zh_CN/04_masking.ipynb"])
def test_a_planted_wrong_number_fails_and_the_right_one_passes(name):
    """Change the last digit of a number the prose quotes from an output: the check fails."""
    notebook = load(ROOT / "notebooks" / name)
    shown, code = _numbers_in(output_text(notebook)), code_literals(notebook)
    quoted = [
        (cell, quote)
        for cell in notebook["cells"]
        if cell["cell_type"] == "markdown"
        for quote in prose_numbers("".join(cell["source"]), cell["id"])
        if quote.value in shown
        and quote.value not in code
        and quote.text[-1].isdigit()
        and quote.text in "".join(cell["source"])
    ]
    assert quoted, f"{name} quotes no output any more: plant the number in another notebook"
    cell, quote = max(quoted, key=lambda pair: significant_digits(pair[1]))
    before = {(q.cell, q.text) for q in unsupported(notebook)}
    assert (quote.cell, quote.text) not in before
    wrong = quote.text[:-1] + str((int(quote.text[-1]) + 3) % 10)
    cell["source"] = "".join(cell["source"]).replace(quote.text, wrong, 1)
    after = {(q.cell, q.text) for q in unsupported(notebook)}
    assert after - before == {(quote.cell, wrong)}


if __name__ == "__main__":  # the list of unsupported numbers, for the notebooks' authors
    paper = paper_numbers()
    found = {_name(path): unsupported(load(path), paper) for path in NOTEBOOKS}
    print(f"# Unsupported numbers in the prose: {sum(map(len, found.values()))}\n")
    print("Written by `python tests/test_prose_numbers.py` (its docstring gives the rule).")
    print("Each line: the cell id, the number as the prose writes it, and its sentence.")
    print("To fix one: quote the output as printed (rounding keeps two or more significant")
    print("digits), print the number (best the whole sentence) from a cell, or, for a figure")
    print(
        "of the paper, add it with its source to tests/paper_numbers.toml (H6 keeps that list).\n"
    )
    print("| notebook | unsupported |\n|---|---|")
    print("\n".join(f"| {name} | {len(bad)} |" for name, bad in found.items()))
    for name, bad in found.items():
        print(f"\n## {name}: {len(bad)}\n\n{report(bad) if bad else '(none)'}")
    sys.exit(0)
