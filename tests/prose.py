"""Numbers in the notebooks' prose, bound to the outputs they come from.

Shared by ``test_prose_numbers.py`` and ``test_prose_mutations.py``. For the notebooks'
authors: ``python tests/prose.py --bind notebooks/NN_name.ipynb`` writes the bindings of
every Markdown cell whose bindings do not hold (into the English notebook and its Chinese
edition), ``--show notebooks/NN_name.ipynb`` prints each bound number beside the line it
comes from (read it after binding: the proposal is a guess), and no argument lists what
fails.

**A number in a Markdown cell** (rules 1 and 2 say what counts) is one of three things:

- a literal of the notebook's code (``STEPS = 800``; strings, comments and drawing options
  such as ``figsize=`` do not count): the prose quotes the code, the same value;
- a value of ``tests/paper_numbers.toml`` in a sentence that names its source (the entry's
  ``cue``, by default the paper: "§", "Table 3", "row (A)", 论文 ...), the same value;
- otherwise it is **measured**, and the cell's ``metadata["numbers"]`` binds it, in the
  order the prose writes its measured numbers, to the one printed number it quotes: the
  code cell (its id), the position of the number in that cell's stored output, and the
  words printed before it (``label``, as the English edition prints them). The quote must be
  that number at the quote's own precision, with its sign. Nothing else supports it: not
  another cell, not a results file, not digits inside a name, a date or a commit hash.

So a measured number changed by a slip (a digit, the order of "A against B", a sign) fails,
and ``test_prose_mutations.py`` measures how often; rewording around it does not.

1. What is a number. A run of ASCII digits (full-width digits count), with optional
   thousands groups (``24,000``; LaTeX ``10\\,000`` and ``10{,}000``, thin spaces), an
   optional decimal part and an optional exponent: ``1e-9``, ``10^{-9}``, ``10⁻⁹``,
   ``1.7 \\times 10^{-6}`` and ``1.7×10⁻⁶`` are numbers with that value. It may carry a scale
   (``4.5 million``, ``thousand``, ``billion``, ``2.1 M``, ``40.7 k``, Chinese ``万`` and
   ``亿``: ``450万`` is 4,500,000), a percent sign (``40 %``, ``40%``, ``40％``) and a sign
   written right before it (``−0.3``, ``+0.1``). Numbers in words ("three seeds") are not
   checked. Code spans, fenced code and LaTeX are checked like the rest of the text.

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

3. Precision. The quote's unit u is the place of its last written digit (0.01 for 95.13,
   1 for 95, 100,000 for "4.5 million", 10,000 for 27万); the trailing zeros of a scaled
   integer (3800万, "40 million") and of an integer after "about", "nearly", "almost",
   "around", "roughly", "≈", 约, 接近 or 将近 ("about 47,000") are not digits. A printed
   number supports the quote when it rounds (half up or half to even) to the quote at u
   and has at least the quote's digits: 95.13 supports 95.1 and 95, never 95.2; 95.1 does
   not support 95.13. A percentage q % quotes a printed q % or q/100.

Every Markdown cell of every notebook, English (``notebooks/``) and Chinese
(``notebooks/zh_CN/``), is checked against its own notebook's stored outputs: the Chinese
edition's are stored by its own run, and its cells carry the English cells' bindings (the
build copies a cell's metadata).
"""

from __future__ import annotations

import io
import json
import re
import sys
import tokenize
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the test extra installs tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PAPER_FILE = ROOT / "tests" / "paper_numbers.toml"
NOTEBOOKS = sorted(ROOT.glob("notebooks/[0-9]*.ipynb")) + sorted(
    ROOT.glob("notebooks/zh_CN/[0-9]*.ipynb")
)

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
    value: Decimal  # its magnitude; ``sign`` says whether the prose wrote + or −
    unit: Decimal
    percent: bool
    cell: str
    sentence: str
    sign: int = 0  # -1 or +1 when written, else 0
    start: int = 0  # where it stands in ``normalise(source)``
    end: int = 0


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
        written = re.search(r"(?:^|[^0-9A-Za-z_.\]\)])\s?([-−+])$", masked[: match.start()])
        sign = {None: 0, "+": 1}.get(written and written[1], -1)
        quotes.append(
            Quote(
                match.group().strip(),
                value,
                unit,
                percent,
                cell,
                sentence_at(text, match.start(), match.end()),
                sign,
                match.start(),
                match.end(),
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


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT / "notebooks"))


# ---- What the outputs print ----------------------------------------------------------------

# A printed number: not part of a name, a hash or a version (float32, 60a62d7, 2.13.0), with
# the sign it is printed with; a hyphen right after a digit is a range ("95.6-96.0"), not a
# sign.
PRINTED = re.compile(
    rf"(?<![A-Za-z0-9_.])(?P<sign>(?<![0-9])[-−+])?(?P<num>{NUMBER})(?P<pct>\s?%)?"
    r"(?![A-Za-z_]|[.,]?[0-9])"
)

DATE = re.compile(r"(?<![0-9])[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[ T][0-9:]+)?")


@dataclass(frozen=True)
class Printed:
    """A number a code cell printed: signed value, the unit of its last digit, its line."""

    value: Decimal
    unit: Decimal
    percent: bool
    line: str
    column: int


def printed_text(cell: dict) -> str:
    """What a code cell's stored outputs show as text: one representation per output
    (plain text before Markdown, LaTeX and HTML, so that a table is not counted twice)."""
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append("".join(output["text"]))
        data = output.get("data", {})
        for kind in ("text/plain", "text/markdown", "text/latex", "text/html"):
            if kind in data:
                parts.append(re.sub(r"<[^>]*>", " ", "".join(data[kind])))
                break
        if output.get("output_type") == "error":
            parts.append(output.get("evalue", ""))
    return normalise("\n".join(parts))


def printed_numbers(cell: dict) -> list[Printed]:
    """The numbers a code cell printed, in order; a binding's ``at`` counts from 1."""
    found = []
    for line in printed_text(cell).splitlines():
        line = _blank_all(line, DATE)  # a date's digits support nothing
        for match in PRINTED.finditer(line):
            value, unit = _decimal(match["num"])
            if match["sign"] and match["sign"] != "+":
                value = -value
            found.append(Printed(value, unit, bool(match["pct"]), line, match.start("num")))
    return found


# ---- Which prose numbers are measured, and what binds them ----------------------------------


def citing(source: str, quote: Quote) -> str:
    """Where a quote may name its source: its sentence; in a quotation, the whole quotation
    (its section follows it); in a table, also the table's header row, the paragraph before
    the table and the heading above it (a table of the paper's figures says so once)."""
    text = normalise(source)
    row = text.rfind("\n", 0, quote.start) + 1
    if text[row:].lstrip().startswith(">"):  # a quotation: its source follows it
        block = re.match(r"(?:[ \t]*>.*(?:\n|$))+", text[row:])
        return quote.sentence + "\n" + block.group()
    if not text[row:].lstrip().startswith("|"):
        return quote.sentence
    above = text[:row].splitlines()
    while above and above[-1].lstrip().startswith("|"):
        header = above.pop()
    before = "\n".join(above).rstrip().split("\n\n")[-1]
    heading = [line for line in above if line.startswith("#")][-1:]
    return "\n".join([quote.sentence, header, before, *heading])


def measured(source: str, code: set[Decimal], paper: dict[Decimal, re.Pattern]) -> list[Quote]:
    """The quotes of a Markdown cell that must be bound to an output: every number that is
    neither a literal of the notebook's code nor a value of the paper's list in a sentence
    (or table) that names the entry's source."""
    found = []
    for quote in prose_numbers(source):
        values = {quote.value, quote.value / 100} if quote.percent else {quote.value}
        cue = paper.get(quote.value)
        if values & code or (cue is not None and cue.search(citing(source, quote))):
            continue
        found.append(quote)
    return found


def _rounds_to(value: Decimal, target: Decimal, unit: Decimal) -> bool:
    return any(
        (value / unit).quantize(Decimal(1), rounding=mode) * unit == target
        for mode in (ROUND_HALF_UP, ROUND_HALF_EVEN)
    )


def matches(quote: Quote, printed: Printed, unsigned: bool = False) -> bool:
    """Whether the prose's ``quote`` is ``printed`` at the quote's precision: the same value
    rounded to the quote's last digit (95.13 is quoted 95.1 or 95, never 95.2 or 95.130),
    with its sign (a dropped sign only where the binding says ``unsigned``)."""
    value, unit = printed.value, printed.unit
    if quote.percent and not printed.percent:
        value, unit = 100 * value, 100 * unit
    if unsigned:
        if quote.sign:
            return False
        value = abs(value)
    target = -quote.value if quote.sign < 0 else quote.value
    if value == target:
        return True
    return unit <= quote.unit and _rounds_to(value, target, quote.unit)


def label_at(printed: Printed, width: int = 40) -> str:
    """The words printed before a number on its line, without the other numbers (which a
    rerun changes) and punctuation: what a binding's ``label`` names."""
    words = re.sub(rf"[-−+]?{NUMBER}%?|[^\w\s<>/·-]", " ", printed.line[: printed.column])
    return " ".join(words.split())[-width:].strip()


# ---- Verdicts: sentences that compare runs --------------------------------------------------

# What a sentence claims about two runs, by its words. "equal" is a claim the course's rule
# never makes (it shows a difference or shows none), so a sentence that makes it fails.
CLAIMS = {
    "en": {
        "better": r"\bbetter\b|\boutperform\w*|\bbeats?\b|\bhelp(?:s|ed)?\b",
        "worse": r"\bworse\b|\bhurts?\b",
        "faster": r"\bfaster\b",
        "slower": r"\bslower\b|\b(?:takes?|took|taking) longer\b",
        "no difference shown": r"\bno difference\b",
        "equal": r"\bas (?:well|good) as\b|\b(?:does|do|did) not need\b|\bneed not\b",
    },
    "zh_CN": {
        "better": r"优于|更好|胜过",
        "worse": r"不如(?!此)|更差",
        "faster": r"更快",
        "slower": r"更慢|用时更长|更耗时",
        "no difference shown": r"没有显示出差异|未显示出差异|看不出差异|没有差异",
        "equal": r"一样好|同样好|不需要",
    },
}
# What the rule must have printed for each claim, and on which kind of metric: "faster"
# and "slower" are verdicts on a time (lower is better), the others on a score.
MEANS = {"faster": "better", "slower": "worse"}
TIME = re.compile(r"^(?:training time|seconds)|训练时间", re.IGNORECASE)  # a verdict's metric
STUDIES = re.compile(r"(07|08|09|10)_")  # the notebooks whose prose judges runs
FLIPPED = {"better": "worse", "worse": "better", "no difference shown": "no difference shown"}


@dataclass(frozen=True)
class Claim:
    says: str  # a key of CLAIMS: "better", "worse", "faster", ... or "equal"
    word: str
    sentence: str
    before: str = ""  # the paragraph up to the word: where "it" was named
    start: int = 0  # where the word stands in ``normalise(source)``


@dataclass(frozen=True)
class PrintedVerdict:
    verdict: str
    ours: str
    theirs: str
    metric: str


def claims(source: str, lang: str = "en") -> list[Claim]:
    """The comparisons a Markdown cell states, in order (quotations of others excluded)."""
    text = normalise(source)
    text = _blank_all(text, r"(?m)^[ \t]*>.*$")  # a quotation is not our claim
    found = []
    for says, pattern in CLAIMS[lang].items():
        for match in re.finditer(pattern, text, re.IGNORECASE):
            paragraph = text[: match.end()].split("\n\n")[-1]
            sentence = sentence_at(text, match.start(), match.end())
            claim = Claim(says, match.group(), sentence, paragraph, match.start())
            found.append((match.start(), claim))
    return [claim for _, claim in sorted(found, key=lambda pair: pair[0])]


def _verdict_patterns(lang: str) -> list[tuple[str, re.Pattern]]:
    """The first line of each of ``compare``'s verdict sentences in ``lang``, as a pattern."""
    from transformer_lib.i18n import current_language, set_language
    from transformer_lib.teaching.studies.compare import BETTER, NO_DIFFERENCE, WORSE, Verdict

    before = current_language()
    set_language(lang)
    try:
        patterns = []
        for verdict in (BETTER, WORSE, NO_DIFFERENCE):
            line = Verdict(verdict, (1, 2, 3), (4, 5, 6)).sentence("\0o", "\0t", "\0m")
            first = re.split(r"[:：]", line.splitlines()[0])[0]
            pattern = re.escape(first)
            for name, group in (("\0o", "ours"), ("\0t", "theirs"), ("\0m", "metric")):
                pattern = pattern.replace(re.escape(name), f"(?P<{group}>.+?)", 1)
            patterns.append((verdict, re.compile(rf"^\s*{pattern}\s*[:：]")))
        return patterns
    finally:
        set_language(before)


def _run_names(lang: str) -> dict[str, str]:
    """{a run's name as ``lang`` prints it: its English name}: a verdict prints a study's
    variants translated (``studies.labels``), and a binding's ``of`` names them in English."""
    from transformer_lib.i18n import current_language, set_language
    from transformer_lib.teaching.studies import labels

    before = current_language()
    set_language(lang)
    try:
        return {labels.localised(name): name for name in labels.VARIANTS}
    finally:
        set_language(before)


_PATTERNS: dict[str, list] = {}
_NAMES: dict[str, dict[str, str]] = {}


def printed_verdicts(cell: dict, lang: str = "en") -> list[PrintedVerdict]:
    """The verdicts ``studies.compare`` printed in a code cell, in order (the runs by their
    English names)."""
    if lang not in _PATTERNS:
        _PATTERNS[lang], _NAMES[lang] = _verdict_patterns(lang), _run_names(lang)
    english = _NAMES[lang]
    found = []
    for line in printed_text(cell).splitlines():
        for verdict, pattern in _PATTERNS[lang]:
            match = pattern.match(line)
            if match:
                ours, theirs = (
                    english.get(match[side], match[side]) for side in ("ours", "theirs")
                )
                found.append(PrintedVerdict(verdict, ours, theirs, match["metric"]))
                break
    return found


def bindings_of(cell: dict, lang: str = "en", kind: str = "numbers") -> list[dict]:
    """A Markdown cell's bindings (``numbers`` or ``verdicts``) in edition ``lang``: the
    edition's own order if it has one."""
    metadata = cell.get("metadata", {})
    return metadata.get(f"{kind}_{lang}", metadata.get(kind, []))


class Bound:
    """A notebook read once for checking: its code literals, the paper's list, its cells by
    id and what each printed (``check`` runs for every mutant of every cell)."""

    def __init__(self, notebook: dict, paper: dict[Decimal, re.Pattern] | None = None,
                 lang: str = "en", folder: Path | None = None):  # fmt: skip
        self.paper = paper_numbers() if paper is None else paper
        self.code = code_literals(notebook)
        self.cells = {cell.get("id"): cell for cell in notebook["cells"]}
        self.lang = lang
        self.folder = folder  # where the notebooks a verdict binding names live
        self._printed: dict[str, list[Printed]] = {}
        self._verdicts: dict[tuple, list[PrintedVerdict]] = {}

    def verdicts(self, cell_id: str, notebook: str | None = None) -> list[PrintedVerdict]:
        key = (notebook, cell_id)
        if key not in self._verdicts:
            cells = self.cells
            if notebook is not None:
                path = (self.folder or ROOT / "notebooks") / f"{notebook}.ipynb"
                cells = {c.get("id"): c for c in load(path)["cells"]} if path.exists() else {}
            cell = cells.get(cell_id)
            self._verdicts[key] = printed_verdicts(cell, self.lang) if cell else []
        return self._verdicts[key]

    def check_verdicts(self, cell: dict, source: str | None = None) -> list[str]:
        """What fails in the comparisons Markdown ``cell`` states (``claims``).

        Its ``metadata["verdicts"]`` lists one binding per comparison word, in order:
        ``{"from": <code cell id>, "at": <n>, "of": <run>}`` says the word is the n-th
        verdict that cell printed (``printed_verdicts``), said of run ``of`` (one of the
        two the verdict names; ``"notebook": "08_what_matters"`` for a verdict printed in
        another notebook); the word must say what the rule printed, from ``of``'s side.
        ``{"not": <reason>, "in": <words of its sentence>}`` marks a word that compares no
        runs ("the clock as well as the step count"). ``verdicts_<lang>`` binds a
        translation's own order.
        """
        name = cell.get("id", "?")
        stated = claims("".join(cell["source"]) if source is None else source, self.lang)
        bindings = bindings_of(cell, self.lang, "verdicts")
        if len(stated) != len(bindings):
            words = ", ".join(claim.word for claim in stated) or "none"
            return [
                f"`{name}` states {len(stated)} comparison(s) ({words}) and binds "
                f"{len(bindings)}: bind each to its verdict (python tests/prose.py --bind)"
            ]
        problems = []
        for claim, binding in zip(stated, bindings):
            where = f"`{name}` **{claim.word}** ({claim.sentence})"
            if "not" in binding:
                if not binding["not"].strip() or binding["not"] == "TODO":
                    problems.append(f"{where}: no printed verdict says it; reword it or bind it")
                continue
            printed = self.verdicts(binding.get("from"), binding.get("notebook"))
            at, of = binding.get("at", 0), binding.get("of")
            verdict = printed[at - 1] if 1 <= at <= len(printed) else None
            if verdict is None:
                problems.append(f"{where}: cell {binding.get('from')!r} prints no verdict {at}")
                continue
            said = f"{verdict.ours} against {verdict.theirs} on {verdict.metric}"
            found = verdict.verdict if of == verdict.ours else FLIPPED[verdict.verdict]
            if (claim.says in MEANS) != bool(TIME.search(verdict.metric)):
                problems.append(f"{where}: the verdict it names is on {verdict.metric}")
            elif claim.says == "equal":
                problems.append(f"{where}: claims they are equal; the rule printed "
                                f"{verdict.verdict!r} ({said}), which is weaker")  # fmt: skip
            elif of not in (verdict.ours, verdict.theirs):
                problems.append(f"{where}: {of!r} is not a run of the verdict ({said})")
            elif found != MEANS.get(claim.says, claim.says):
                problems.append(f"{where}: says {claim.says!r} of {of}; the rule printed "
                                f"{found!r} for it ({said})")  # fmt: skip
        return problems

    def printed(self, cell_id: str) -> list[Printed]:
        if cell_id not in self._printed:
            cell = self.cells.get(cell_id)
            self._printed[cell_id] = printed_numbers(cell) if cell else []
        return self._printed[cell_id]

    def check(self, cell: dict, source: str | None = None) -> list[str]:
        """What fails in Markdown ``cell`` (with ``source`` in place of its own, if given).

        Its ``metadata["numbers"]`` lists one binding per measured number, in the order the
        prose writes them: ``{"from": <code cell id>, "at": <n>, "label": <words>}`` says
        the number is the n-th number that cell printed (as ``printed_numbers`` counts),
        printed after ``label`` on its line (checked in the English edition, whose outputs
        the label quotes); ``"unsigned": true`` lets the prose drop the sign ("worse by
        0.3" for a printed -0.3), and then it must write none. Where a translation writes
        the numbers in another order, ``numbers_<lang>`` (``numbers_zh_CN``) binds its own.
        """
        name = cell.get("id", "?")
        quotes = measured("".join(cell["source"]) if source is None else source, self.code,
                          self.paper)  # fmt: skip
        bindings = bindings_of(cell, self.lang)
        if len(quotes) != len(bindings):
            texts = ", ".join(quote.text for quote in quotes) or "none"
            return [
                f"`{name}` quotes {len(quotes)} measured number(s) ({texts}) and binds "
                f"{len(bindings)}: bind each to its output (python tests/prose.py --bind)"
            ]
        problems = []
        for quote, binding in zip(quotes, bindings):
            printed, at = self.printed(binding.get("from")), binding.get("at", 0)
            number = printed[at - 1] if 1 <= at <= len(printed) else None
            if number is None:
                problem = f"cell {binding.get('from')!r} prints no number {at}"
            elif not matches(quote, number, binding.get("unsigned", False)):
                problem = (
                    f"number {at} of cell {binding['from']} is {number.value}: "
                    f"{number.line.strip()!r}"
                )
            elif self.lang == "en" and binding.get("label", "") not in label_at(number, 10_000):
                problem = (
                    f"number {at} of cell {binding['from']} follows {label_at(number)!r}, "
                    f"not the label {binding.get('label')!r}"
                )
            else:
                continue
            problems.append(f"`{name}` **{quote.text}** ({quote.sentence}): {problem}")
        return problems


def binding_problems(
    notebook: dict, paper: dict[Decimal, re.Pattern] | None = None, lang: str = "en"
) -> list[tuple[str, str]]:
    """(cell id, problem) for every measured number that its binding does not support."""
    bound = Bound(notebook, paper, lang)
    return [
        (cell.get("id", "?"), problem)
        for cell in notebook["cells"]
        if cell["cell_type"] == "markdown"
        for problem in bound.check(cell)
    ]


def verdict_problems(path: Path) -> list[tuple[str, str]]:
    """(cell id, problem) for every comparison in ``path``'s prose that no verdict backs."""
    notebook = load(path)
    bound = Bound(notebook, lang=language(path), folder=path.parent)
    return [
        (cell.get("id", "?"), problem)
        for cell in notebook["cells"]
        if cell["cell_type"] == "markdown"
        for problem in bound.check_verdicts(cell)
    ]


# ---- Proposing bindings, for the notebooks' authors -----------------------------------------


def _words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z][A-Za-z-]{2,}|[0-9]+ ?s\b", text)}


def propose(notebook: dict, index: int, quote: Quote) -> dict | None:
    """A binding for ``quote`` of Markdown cell ``index``: the printed number that matches
    it, preferring one printed with the quote's own digits, then one whose label shares the
    most words with the words just before the quote (then with its sentence), then the
    nearest code cell before the Markdown (then after it). A guess: read it (``--show``)."""
    cells = notebook["cells"]
    text = normalise("".join(cells[index]["source"]))
    near = _words(text[max(0, quote.start - 60) : quote.start])
    order = list(range(index - 1, -1, -1)) + list(range(index + 1, len(cells)))
    best, best_key = None, None
    for distance, position in enumerate(order):
        cell = cells[position]
        if cell["cell_type"] != "code":
            continue
        for at, printed in enumerate(printed_numbers(cell), start=1):
            unsigned = not matches(quote, printed)
            if unsigned and not matches(quote, printed, unsigned=True):
                continue
            label = _words(label_at(printed, 10_000))
            key = (
                printed.unit == quote.unit and not unsigned,
                len(label & near),
                len(label & _words(quote.sentence)),
                -distance,
            )
            if best_key is None or key > best_key:
                best_key, best = key, {"from": cell["id"], "at": at, "label": label_at(printed)}
                if unsigned:
                    best["unsigned"] = True
    return best


def propose_verdict(notebook: dict, index: int, claim: Claim, lang: str,
                    folder: Path) -> dict:  # fmt: skip
    """A binding for ``claim`` of Markdown cell ``index``: a printed verdict that says what
    the claim says of a run its paragraph names, preferring runs and a metric its sentence
    names, then this notebook (nearest cell first), then the other study notebooks. A
    guess: read it. ``{"not": "TODO"}`` where none fits: reword the sentence, or give the
    reason it compares no runs."""
    sentence, before = _named(claim.sentence), _named(claim.before)
    own = notebook["cells"][0].get("id")
    sources = [(None, notebook["cells"], index)] + [
        (path.stem, cells, 0)
        for path in sorted(folder.glob("[0-9]*.ipynb"))
        if STUDIES.match(path.name)
        for cells in [load(path)["cells"]]
        if cells[0].get("id") != own
    ]
    best, best_key = {"says": claim.says, "not": "TODO"}, None
    for rank, (name, cells, here) in enumerate(sources):
        for position, cell in enumerate(cells):
            if cell["cell_type"] != "code" or claim.says == "equal":
                continue
            for at, verdict in enumerate(printed_verdicts(cell, lang), start=1):
                for of, other in ((verdict.ours, verdict.theirs), (verdict.theirs, verdict.ours)):
                    found = verdict.verdict if of == verdict.ours else FLIPPED[verdict.verdict]
                    named = _named(before + sentence)
                    if (
                        found != MEANS.get(claim.says, claim.says)
                        or (claim.says in MEANS) != bool(TIME.search(verdict.metric))
                        or _named(of) not in named
                        # both runs named; the study's baseline (the verdict's second) may be
                        # called "the baseline"
                        or _named(other) not in named
                        and not (other == verdict.theirs and "baseline" in named)
                    ):
                        continue
                    key = (
                        _named(of) in sentence,
                        _named(other) in sentence,
                        len(_words(verdict.metric) & _words(sentence)),
                        -rank,
                        -abs(position - here),
                    )
                    if best_key is None or key > best_key:
                        best_key = key
                        best = {"says": claim.says, "from": cell["id"], "at": at, "of": of}
                        if name:
                            best["notebook"] = name
    return best


NUMBER_WORDS = dict(zip("one two three four five six seven eight nine ten".split(), range(1, 11)))


def _named(text: str) -> str:
    """Text as a run's name is matched in a sentence: lower case, without backticks or a
    leading "+ ", numbers in digits ("one head" is the run "1 head")."""
    text = text.lower().replace("`", "").replace("–", "-").removeprefix("+ ")
    return re.sub(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", lambda m: str(NUMBER_WORDS[m[1]]), text)


def _rebind_verdicts(notebook: dict, lang: str, folder: Path) -> dict[str, list[dict]]:
    """New verdict bindings for the Markdown cells of ``notebook`` whose bindings fail.
    Each claim takes, in order, the first unused old binding that says the same (the
    English cell's, for a translation that words its comparisons in another order; a
    reason a person wrote), else a proposal."""
    bound = Bound(notebook, lang=lang, folder=folder)
    new = {}
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown" or not bound.check_verdicts(cell):
            continue
        metadata = cell["metadata"]
        written = [
            b for b in metadata.get(f"verdicts_{lang}", []) if "in" in b and b.get("not") != "TODO"
        ]
        # the bindings a person wrote (with "in"); a proposal is proposed again
        english = [b for b in metadata.get("verdicts", []) if "in" in b and b.get("not") != "TODO"]
        if lang != "en":  # the English cell's run bindings, in order; its reasons are English
            english = [b for b in metadata.get("verdicts", []) if "from" in b]
        new[cell["id"]] = []
        for claim in claims("".join(cell["source"]), lang):
            binding = _take(written, claim, by_words=True) or _take(
                english, claim, by_words=lang == "en"
            )
            new[cell["id"]].append(binding or propose_verdict(notebook, index, claim, lang, folder))
    return new


def _take(pool: list[dict], claim: Claim, by_words: bool) -> dict | None:
    """The first binding of ``pool`` that says what ``claim`` says (and, ``by_words``,
    whose ``in`` words are in its sentence), removed from the pool."""
    for binding in pool:
        if binding.get("says") == claim.says and (
            not by_words or binding.get("in", "") in claim.sentence
        ):
            pool.remove(binding)
            return binding
    return None


def _rebind(notebook: dict, lang: str) -> tuple[dict[str, list[dict]], list[str]]:
    """New bindings for the Markdown cells of ``notebook`` (edition ``lang``) whose
    bindings do not hold: {cell id: bindings}, and the numbers no output matches."""
    paper, code = paper_numbers(), code_literals(notebook)
    wrong = {name for name, _ in binding_problems(notebook, paper, lang)}
    new, missing = {}, []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown" or cell["id"] not in wrong:
            continue
        new[cell["id"]] = []
        for quote in measured("".join(cell["source"]), code, paper):
            binding = propose(notebook, index, quote)
            if binding is None:
                missing.append(f"`{cell['id']}` **{quote.text}**: {quote.sentence}")
                binding = {"from": None, "at": 0, "label": "NO OUTPUT PRINTS IT"}
            new[cell["id"]].append(binding)
    return new, missing


def bind(path: Path, lang: str = "zh_CN") -> list[str]:
    """Bindings for every Markdown cell of the English notebook ``path`` whose numbers (and,
    in notebooks 07–10, comparisons) are not bound, then for its ``lang`` edition's cells
    where the translation writes them in another order (``numbers_<lang>``,
    ``verdicts_<lang>``, kept in both notebooks, so that the build keeps them); returns the
    numbers no output matches."""
    notebook = load(path)
    studied = bool(STUDIES.match(path.name))
    new, missing = _rebind(notebook, "en")
    verdicts = _rebind_verdicts(notebook, "en", path.parent) if studied else {}
    for cell in notebook["cells"]:
        for key, found in (("numbers", new), ("verdicts", verdicts)):
            if cell["id"] in found:  # a translation's own order stays: its check decides
                cell["metadata"][key] = found[cell["id"]]
            if not cell["metadata"].get(key):
                cell["metadata"].pop(key, None)
    edition = path.parent / lang / path.name
    if edition.exists():
        translated = load(edition)
        english = {cell["id"]: cell["metadata"] for cell in notebook["cells"]}
        for cell in translated["cells"]:
            for key in ("numbers", f"numbers_{lang}", "verdicts", f"verdicts_{lang}"):
                cell["metadata"].pop(key, None)
                if key in english.get(cell["id"], {}):
                    cell["metadata"][key] = english[cell["id"]][key]
        own, lost = _rebind(translated, lang)
        said = _rebind_verdicts(translated, lang, edition.parent) if studied else {}
        for cell in translated["cells"]:
            for key, found in (("numbers", own), ("verdicts", said)):
                if cell["id"] in found:
                    own_key = f"{key}_{lang}"
                    cell["metadata"][own_key] = english[cell["id"]][own_key] = found[cell["id"]]
        missing += [f"{lang}: {line}" for line in lost]
        save(edition, translated)
    save(path, notebook)
    return missing


def save(path: Path, notebook: dict) -> None:
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def language(path: Path) -> str:
    return "zh_CN" if "zh_CN" in path.parts else "en"


def problems(path: Path) -> list[tuple[str, str]]:
    return binding_problems(load(path), lang=language(path))


def show(path: Path) -> str:
    """Each bound number of ``path`` beside the output line it comes from."""
    notebook, paper = load(path), paper_numbers()
    code, cells = code_literals(notebook), {cell.get("id"): cell for cell in notebook["cells"]}
    lines = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        quotes = measured("".join(cell["source"]), code, paper)
        for quote, binding in zip(quotes, bindings_of(cell, language(path))):
            source = cells.get(binding["from"])
            printed = printed_numbers(source) if source else []
            at = binding["at"]
            line = printed[at - 1].line.strip() if 0 < at <= len(printed) else "(nothing)"
            lines.append(f"{cell['id']} {quote.text:>9} <- {binding['from']}#{at}: {line[:110]}")
    return "\n".join(lines)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] == ["--bind"]:
        for name in arguments[1:]:
            for line in bind(Path(name).resolve()):
                print(f"{name}: no output prints {line}")
    elif arguments[:1] == ["--show"]:
        for name in arguments[1:]:
            print(show(Path(name).resolve()))
    else:
        for path in NOTEBOOKS:
            found = problems(path) + (verdict_problems(path) if STUDIES.match(path.name) else [])
            for _, problem in found:
                print(f"{_name(path)}: {problem}")
