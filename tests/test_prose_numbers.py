"""Every number in the notebooks' prose is a code literal, a cited paper value, or bound to
the one printed number it quotes (the rules: ``tests/prose.py``'s docstring).

``python tests/prose.py`` lists what fails; ``python tests/prose.py --bind NOTEBOOK`` binds
a changed cell's numbers and ``--show NOTEBOOK`` prints each binding beside its output.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from prose import (
    NOTEBOOKS,
    ROOT,
    Bound,
    _decimal,
    _name,
    load,
    paper_entries,
    paper_numbers,
    printed_numbers,
    problems,
    prose_numbers,
)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_name)
def test_every_measured_number_is_bound_to_the_output_it_quotes(path):
    bad = [problem for _, problem in problems(path)]
    assert not bad, (
        f"{len(bad)} number(s) in the prose of {_name(path)} are not the printed number "
        "their binding names (rules: tests/prose.py); fix the number, or rebind the cell "
        "(python tests/prose.py --bind, then read --show):\n" + "\n".join(bad)
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


@pytest.mark.parametrize(
    "prose, signs",
    [
        ("a difference of −0.3, +0.4 and 0.5", [-1, 1, 0]),
        ("from 95.1-96.9 and [0.052–0.058]", [0, 0, 0, 0]),
        ("- 0.5 of a list item, $-12$", [0, -1]),
    ],
)
def test_a_sign_written_before_a_number_counts(prose, signs):
    assert [q.sign for q in prose_numbers(prose)] == signs


def test_digits_in_names_dates_hashes_and_versions_are_not_printed_numbers():
    text = "60a62d7+uncommitted, 2026-11-28, float32, torch 2.13.0+cpu, d128; BLEU 96.4 -0.05 17%"
    cell = {"outputs": [{"output_type": "stream", "name": "stdout", "text": text}]}
    printed = [(p.value, p.percent) for p in printed_numbers(cell)]
    assert printed == [(Decimal("96.4"), False), (Decimal("-0.05"), False), (Decimal(17), True)]


def _notebook(markdown: str, output: str, bindings: list[dict], code: str = "x = 1") -> dict:
    return {
        "cells": [
            {
                "cell_type": "code",
                "id": "c",
                "source": code,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": output}],
            },
            {
                "cell_type": "markdown",
                "id": "m",
                "source": markdown,
                "metadata": {"numbers": bindings},
            },  # fmt: skip
        ]
    }


def _fails(markdown, output, bindings, code="x = 1", paper=None) -> list[str]:
    notebook = _notebook(markdown, output, bindings, code)
    return Bound(notebook, paper={} if paper is None else paper).check(notebook["cells"][1])


def at(*positions, **extra) -> list[dict]:
    return [{"from": "c", "at": n, "label": "", **extra} for n in positions]


@pytest.mark.parametrize(
    "prose, output, ok",
    [
        ("BLEU 95.1", "valid BLEU 95.13", True),  # rounded
        ("BLEU 95", "valid BLEU 95.13", True),
        ("BLEU 95.13", "valid BLEU 95.1", False),  # digits the output does not have
        ("BLEU 95.10", "valid BLEU 95.1", True),  # a trailing zero
        ("BLEU 95.2", "valid BLEU 95.13", False),
        ("40 %", "share 0.404", True),
        ("40 %", "share 40.2%", True),
        ("41 %", "share 0.404", False),
        ("24,000 pairs", "train 24000 pairs", True),
        ("about 1.7e-06", "difference 1.7e-06", True),
        ("about 2e-06", "difference 1.7e-06", True),  # at the quote's one digit
        ("about 3e-06", "difference 1.7e-06", False),
        ("0.2 BLEU", "difference 0.17", True),
        ("a change of −0.3", "change -0.3", True),
        ("a change of 0.3", "change -0.3", False),  # the sign counts
        ("a change of +0.3", "change -0.3", False),
        ("12 steps", "nothing", False),
    ],
)
def test_when_the_bound_number_supports_a_quote(prose, output, ok):
    assert (_fails(prose, output, at(1)) == []) is ok


def test_a_dropped_sign_needs_unsigned_and_then_no_sign():
    assert _fails("worse by 0.3", "change -0.3", at(1, unsigned=True)) == []
    assert _fails("worse by −0.3", "change -0.3", at(1, unsigned=True))


def test_the_order_of_a_against_b_counts():
    output = "AER 0.054 [0.052-0.058] and 0.106"
    assert _fails("AER 0.054 against 0.106", output, at(1, 4)) == []
    assert _fails("AER 0.106 against 0.054", output, at(1, 4))


def test_one_binding_per_measured_number_and_only_the_one_it_names():
    output = "valid BLEU 96.4, longer 65.1"
    assert _fails("96.4 and 65.1", output, at(1)), "a number left unbound"
    assert _fails("96.4", output, at(2)), "bound to another printed number"
    assert _fails("96.4", output, at(3)), "the cell prints no third number"
    assert _fails("96.4", output, [{"from": "elsewhere", "at": 1}])


def test_the_label_names_the_words_printed_before_the_number():
    output = "valid BLEU 96.4, longer BLEU 65.1"
    assert _fails("65.1", output, [{"from": "c", "at": 2, "label": "longer BLEU"}]) == []
    assert _fails("65.1", output, [{"from": "c", "at": 2, "label": "valid BLEU"}]) == []
    assert _fails("65.1", output, [{"from": "c", "at": 2, "label": "test BLEU"}])


def test_code_literals_and_the_paper_support_only_the_same_value():
    code = "STEPS, PEAK = 800, 0.005"
    assert _fails("800 steps, 0.005 and 0.0050", "", [], code) == []
    assert _fails("801 steps", "", [], code)
    paper = {Decimal(512): re.compile("paper")}
    assert _fails("512 wide, as in the paper.", "", [], code, paper) == []
    # the cue must be in the number's own sentence, not elsewhere in the cell
    assert _fails("512 wide. The paper says so.", "", [], code, paper)
    # in a table, the header, the paragraph before it or the heading above it may cite it
    table = "## Table 3 of the paper\n\n| row | width |\n|---|---|\n| base | 512 |"
    assert _fails(table, "", [], code, paper) == []


def test_drawing_options_are_not_configuration():
    code = "plt.subplots(figsize=(12, 4.5), dpi=90)\nax.plot(x, alpha=0.5, lw=2)\nSTEPS = 800"
    assert _fails("12, 4.5, 90, 0.5 and 800", "", [], code)[0].startswith(
        "`m` quotes 4 measured number(s) (12, 4.5, 90, 0.5) and binds 0"
    )


@pytest.mark.parametrize("name", ["09_decoder_only.ipynb", "zh_CN/09_decoder_only.ipynb"])
def test_a_planted_wrong_number_in_a_stored_notebook_fails(name):
    """The last digit of a bound quote +3: the check names that cell and that number."""
    notebook = load(ROOT / "notebooks" / name)
    bound = Bound(notebook, lang="zh_CN" if "zh_CN" in name else "en")
    cell = next(c for c in notebook["cells"] if c.get("metadata", {}).get("numbers"))
    assert bound.check(cell) == []
    quote = max(
        (q for q in prose_numbers("".join(cell["source"])) if q.text[-1].isdigit()),
        key=lambda q: len(q.text),
    )
    source = "".join(cell["source"])
    wrong = quote.text[:-1] + str((int(quote.text[-1]) + 3) % 10)
    failed = bound.check(cell, source.replace(quote.text, wrong))
    assert failed and f"**{wrong}**" in failed[0]
