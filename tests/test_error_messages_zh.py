"""The library's errors speak the edition's language (issue 46): every template that
``fail()`` is given (what an argument must be, the hint) is a string literal the library's
catalogue holds, found by ``tools/i18n_notebooks.py``'s ``error_templates``; in the Chinese
edition an error reads in Chinese, the argument's name and what arrived (a repr, a dtype and
shape) as the code writes them, and in the English edition it reads as it always did."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from transformer_lib import _checks
from transformer_lib.model.attention import scaled_dot_product_attention

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import i18n_notebooks as tool  # noqa: E402

LANG = "zh_CN"
CJK_OR_SPACE = re.compile(r"[\s\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+")
CODE = re.compile(r"[_.(\[=`]")  # padding_mask, transformer_lib.masks, mask[:, n_heads=3, `x`


def english_words(text: str) -> set[str]:
    """The words of three or more Latin letters in ``text`` that are not code."""
    tokens = [token for token in CJK_OR_SPACE.split(text) if not CODE.search(token)]
    return {word for token in tokens for word in re.findall(r"[A-Za-z]{3,}", token)}


def test_every_error_template_is_a_literal_the_chinese_catalogue_translates():
    """Fails, naming the line, where a call gives fail() an f-string or any other text the
    catalogue cannot hold; then where the catalogue lacks a template's Chinese."""
    templates = tool.error_templates()  # raises for a template that is no literal
    assert len(templates) > 200 and "divisible by n_heads={n_heads}" in templates
    catalog = tool.read_catalogue(tool.library_catalogue_path(LANG), LANG)
    untranslated = [
        template
        for template in templates
        if (message := catalog.get(template)) is None or message.fuzzy or not message.string
    ]
    assert untranslated == []


def _package(root: Path, **modules: str) -> Path:
    """A package ``root/pkg`` of ``modules`` ({name: source}), for the scan."""
    package = root / "pkg"
    package.mkdir()
    for name, source in modules.items():
        (package / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return package


CHECKS = """
    from pkg.i18n import N_

    DAMAGED = N_("The file is damaged.")

    def fail(name, expected, got, hint="", error=ValueError, **values): ...

    def check_real(name, value, hint=""):
        expected = "a float" if value is None else "a float >= {low}"
        fail(name, expected, repr(value), hint, low=0)

    def check_file(name):
        fail(name, "present", "nothing", DAMAGED)
"""


def test_the_scan_follows_names_constants_and_helpers_to_their_literals(tmp_path):
    user = """
        from pkg.checks import DAMAGED, check_real, fail

        def load(path, n):
            check_real("alpha", path, hint="0 switches it off.")
            hint = "Tokenize first." if n else "Pass one."
            fail("path", "at most {n} long", str(path), hint, n=n)
            fail("meta", "valid JSON", "text", DAMAGED)
    """
    found = tool.error_templates(_package(tmp_path, checks=CHECKS, user=user))
    assert found == {
        "a float": "expected",
        "a float >= {low}": "expected",
        "present": "expected",
        "The file is damaged.": "hint",
        "at most {n} long": "expected",
        "Tokenize first.": "hint",
        "Pass one.": "hint",
        "valid JSON": "expected",
        "0 switches it off.": "hint",
    }


@pytest.mark.parametrize(
    "call, problem",
    [
        ('fail("n", f"at most {n}", "3")', "user.py:5: fail()'s expected is not a string literal"),
        ('fail("n", "a", "3", "Is it " + n)', "user.py:5: fail()'s hint is not a string literal"),
        ('fail("n", "at most {n}", "3")', "user.py:5: fail() fills ['n'] of 'at most {n}'"),
        ('fail("n", "a dict {\'k\': 1}", "3")', "fills [\"'k'\"] of \"a dict {'k': 1}\""),
        ('check_real("x", n, hint=f"not {n}")', "check_real()'s hint, which fail() shows, is not"),
    ],
)
def test_the_scan_names_each_template_the_catalogue_could_not_hold(tmp_path, call, problem):
    user = f"""
        from pkg.checks import check_real, fail

        def load(n):
            {call}
    """
    with pytest.raises(ValueError, match="is not a string literal|from no keyword") as raised:
        tool.error_templates(_package(tmp_path, checks=CHECKS, user=user))
    assert problem in str(raised.value)


def _attend_under_a_key_padding_mask() -> None:
    q, kv = torch.zeros(3, 4, 3, 8), torch.zeros(3, 4, 7, 8)  # (B, H, T, d), (B, H, S, d)
    scaled_dot_product_attention(q, kv, kv, torch.ones(3, 7, dtype=torch.bool))  # mask (B, S)


# (what goes wrong, the call that raises, its error, the English message; what the Chinese one
# says in place of the English words)
CASES = {
    "a float mask": (
        lambda: _checks.check_mask("src_mask", torch.zeros(2, 7), (2, 1, 1, 7), "(B, 1, 1, S)"),
        TypeError,
        "`src_mask` must be bool (True = may attend) broadcastable to (B, 1, 1, S)=(2, 1, 1, 7); "
        "got float32 (2, 7). Build it with transformer_lib.masks (padding_mask, causal_mask, "
        "target_mask).",
        ["可广播到(B, 1, 1, S)=(2, 1, 1, 7)的bool张量", "可以关注", "transformer_lib.masks"],
    ),
    "a 3-D tensor of ids": (
        lambda: _checks.check_tensor(
            "tokens", torch.zeros(2, 3, 4, dtype=torch.long), ndim=2, shape_hint="(B, S)"
        ),
        ValueError,
        "`tokens` must be a 2-D tensor of shape (B, S); got 3-D int64 (2, 3, 4).",
        ["形状为(B, S)的2维张量"],
    ),
    "a dropout of 1.5": (
        lambda: _checks.check_probability("dropout", 1.5),
        ValueError,
        "`dropout` must be a float in [0, 1); got 1.5.",
        ["[0, 1)内的float"],
    ),
    "heads that do not divide d_model": (
        lambda: _checks.check_heads(10, 3),
        ValueError,
        "`d_model` must be divisible by n_heads=3; got 10. Each head gets d_model / n_heads "
        "dimensions.",
        ["n_heads=3的整数倍", "每个头分得d_model / n_heads个维度"],
    ),
    "a key-padding mask without its query axis": (
        _attend_under_a_key_padding_mask,
        ValueError,
        "`mask` must be 4-D like the scores (..., T, S)=(3, 4, 3, 7), with size 1 on the axes "
        "it repeats over; got 2-D bool (3, 7). Add the missing axes: a (B, S) key-padding mask "
        "becomes mask[:, None, :] (B, 1, S) for (B, T, S) scores; masks.padding_mask() builds "
        "(B, 1, 1, S) for (B, H, T, S).",
        ["分数(..., T, S)=(3, 4, 3, 7)", "4维张量", "mask[:, None, :]", "(B, 1, 1, S)"],
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_an_error_reads_in_the_editions_language(case, monkeypatch):
    raise_it, error, english, chinese_parts = CASES[case]
    monkeypatch.setenv("COURSE_LANG", "en")
    with pytest.raises(error) as raised:
        raise_it()
    assert str(raised.value) == english  # as it read before errors were translated
    name = english[: english.index("` ") + 1]
    got = english.split("; got ")[1].split(". ")[0].removesuffix(".")
    monkeypatch.setenv("COURSE_LANG", LANG)
    with pytest.raises(error) as raised:
        raise_it()
    chinese = str(raised.value)
    assert chinese.startswith(f"{name}必须是") and f"；实际得到{got}。" in chinese
    assert [part for part in chinese_parts if part not in chinese] == []
    rest = chinese.replace(name, " ").replace(got, " ")
    assert english_words(rest) <= {"bool", "True", "float", "None"}  # code names, Python's
