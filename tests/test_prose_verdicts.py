"""Every sentence of notebooks 07–10 that compares runs says what the course's rule printed.

A comparison word (better, worse, faster, slower, no difference, as well as, does not need,
hurts, helps, ... and their Chinese words: ``prose.CLAIMS``) is bound to the verdict
``studies.compare`` printed for that pair and metric, in the cell it cites, and must say
the same of the run it names; "as well as" and "does not need" claim more than the rule can
ever print, so they fail. Rules and tools: ``tests/prose.py`` (``Bound.check_verdicts``).
"""

from __future__ import annotations

import pytest
from prose import (
    NOTEBOOKS,
    ROOT,
    STUDIES,
    Bound,
    _name,
    bindings_of,
    claims,
    language,
    load,
    normalise,
    verdict_problems,
)

STUDIED = [path for path in NOTEBOOKS if STUDIES.match(path.name)]
NOTEBOOK_09 = ROOT / "notebooks" / "09_decoder_only.ipynb"
# Notebook 09's verdict on its study as it stood before the verdicts were bound (cell
# 09-056, commit e8f8764): "no difference shown" read as "as well as", "does not need".
OLD_09_056 = (
    "At equal steps the two show no difference, on `valid` or on `longer`: after 600 steps the\n"
    "decoder-only model translates as well as notebook 07's encoder–decoder, within the spread "
    "of\nthree seeds. At this scale, translation does not need the encoder.\n"
)


@pytest.mark.parametrize("path", STUDIED, ids=_name)
def test_every_comparison_says_what_the_rule_printed(path):
    bad = [problem for _, problem in verdict_problems(path)]
    assert not bad, (
        f"{len(bad)} comparison(s) in the prose of {_name(path)} say more than, or other "
        "than, the verdict they cite (tests/prose.py; rebind with python tests/prose.py "
        "--bind, then read the bindings):\n" + "\n".join(bad)
    )


def test_reading_no_difference_as_equal_fails_on_the_old_notebook_09():
    notebook = load(NOTEBOOK_09)
    cell = next(c for c in notebook["cells"] if c["id"] == "09-056")
    stated = claims(OLD_09_056)
    assert [claim.says for claim in stated] == ["no difference shown", "equal", "equal"]
    # bind each claim as generously as possible: all three to the printed "no difference
    # shown" of decoder-only against encoder-decoder on valid BLEU, at equal steps
    no_difference = {"from": "09-055", "at": 1, "of": "decoder-only"}
    cell = {**cell, "metadata": {"verdicts": [no_difference] * 3}}
    problems = Bound(notebook, folder=NOTEBOOK_09.parent).check_verdicts(cell, OLD_09_056)
    assert len(problems) == 2, problems
    assert all("claims they are equal" in problem for problem in problems), problems
    assert "**as well as**" in problems[0] and "**does not need**" in problems[1]


FLIP = {
    "en": {"better": "worse", "worse": "better"},
    "zh_CN": {"更好": "更差", "更差": "更好", "优于": "不如", "不如": "优于"},
}


@pytest.mark.parametrize("path", [p for p in STUDIED if p.name.startswith("09")], ids=_name)
def test_a_flipped_word_fails(path):
    """Every better or worse of the stored notebook that is bound to a verdict, flipped: the
    check names it."""
    notebook = load(path)
    lang = language(path)
    bound = Bound(notebook, lang=lang, folder=path.parent)
    flipped = 0
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        text = normalise("".join(cell["source"]))
        bindings = bindings_of(cell, lang, "verdicts")
        for claim, binding in zip(claims(text, lang), bindings):
            if claim.word in FLIP[lang] and "from" in binding:
                end = claim.start + len(claim.word)
                problems = bound.check_verdicts(
                    cell, text[: claim.start] + FLIP[lang][claim.word] + text[end:]
                )
                assert problems, (cell["id"], claim.word)
                flipped += 1
    assert flipped >= 3, f"{_name(path)} states {flipped} bound better or worse: flip another word"


@pytest.mark.parametrize(
    "text, lang, says",
    [
        ("A is worse than B, and C took longer; D showed no difference.", "en",
         ["worse", "slower", "no difference shown"]),
        ('> "This hurts perplexity" (§5.4)\n\nIt helps.', "en", ["better"]),
        ("仅解码器模型不如编码器-解码器，GELU更慢，两者没有显示出差异；翻译不需要编码器。", "zh_CN",
         ["worse", "slower", "no difference shown", "equal"]),
    ],
)  # fmt: skip
def test_what_counts_as_a_comparison(text, lang, says):
    assert [claim.says for claim in claims(text, lang)] == says
