"""Does the prose check catch a slip? Mutants of every measured quote in notebooks 07–10.

For every measured number of every Markdown cell of notebooks 07–10, English and Chinese,
the prose is changed the way a slip changes it: its last digit +1, −1, +3 and −3; its sign
flipped (a minus written before it, or the written sign removed); and, for every two
measured numbers of one sentence, the two swapped ("AER 0.054 against 0.106" becomes
"0.106 against 0.054"). A mutant is caught when ``prose.Bound.check`` reports the cell; the
test prints the rate and every survivor, and fails below 95 %.
"""

from __future__ import annotations

import re
from itertools import combinations

from prose import NOTEBOOKS, Bound, _name, language, load, measured, normalise

STUDIED = [path for path in NOTEBOOKS if re.match(r"(07|08|09|10)_", path.name)]
MINIMUM = 0.95


def _replace(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def mutants(source: str, bound: Bound) -> list[tuple[str, str]]:
    """(what changed, the mutated text) for every measured quote of ``source``."""
    text = normalise(source)
    quotes = measured(text, bound.code, bound.paper)
    found = []
    for quote in quotes:
        digits = [i for i in range(quote.start, quote.end) if text[i].isdigit()]
        last = digits[-1]
        for step in (1, -1, 3, -3):
            digit = str((int(text[last]) + step) % 10)
            found.append((f"{quote.text} {step:+d} in its last digit",
                          _replace(text, last, last + 1, digit)))  # fmt: skip
        if quote.sign:  # written right before the number
            flipped = _replace(text, quote.start - 1, quote.start, "")
        else:
            flipped = _replace(text, quote.start, quote.start, "−")
        found.append((f"{quote.text}: sign flipped", flipped))
    for a, b in combinations(quotes, 2):
        if a.sentence == b.sentence and text[a.start : a.end] != text[b.start : b.end]:
            swapped = _replace(text, b.start, b.end, text[a.start : a.end])
            swapped = _replace(swapped, a.start, a.end, text[b.start : b.end])
            found.append((f"{a.text} and {b.text} swapped", swapped))
    return found


def test_at_least_95_percent_of_the_mutants_of_a_measured_quote_fail():
    caught, survivors = 0, []
    for path in STUDIED:
        notebook = load(path)
        bound = Bound(notebook, lang=language(path))
        for cell in notebook["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            source = "".join(cell["source"])
            assert not bound.check(cell, normalise(source)), (_name(path), cell["id"])
            for change, text in mutants(source, bound):
                if bound.check(cell, text):
                    caught += 1
                else:
                    survivors.append(f"{_name(path)} `{cell['id']}`: {change}")
    total = caught + len(survivors)
    print(f"\nmutants of measured quotes in {len(STUDIED)} notebooks: {total}; caught "
          f"{caught} ({caught / total:.1%}); survivors:\n" + "\n".join(survivors))  # fmt: skip
    assert total > 500, "too few measured quotes: is the check reading the notebooks?"
    assert caught / total >= MINIMUM, f"{len(survivors)} survivors:\n" + "\n".join(survivors)
