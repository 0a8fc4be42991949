"""The sentences notebook 07 prints for the student to read, marked for the library's catalogue.

The notebook prints each of them through the catalogue, ``print(i18n._("...").format(...))``,
so that each edition speaks its own language (its first cell calls ``set_language``); numbers,
labels and code stay as they are. The catalogue (``transformer_lib/locale``) holds the
messages marked in the library's code, so the notebook's templates are marked here, word for
word; ``tests/test_notebook_messages.py`` fails when a notebook prints through ``_`` a
template that the catalogue does not hold.
"""

from __future__ import annotations

from transformer_lib.i18n import N_

__all__ = ["PRINTED"]

PRINTED = (
    N_("restored: same config, vocabularies, step and weights"),
    N_(
        "the paper's base model as notebook 06 builds it (Table 3: 65M): "
        "{base:,} parameters, {times:.0f} times as many"
    ),
    N_("beam search changed {changed} of {total} translations"),
    N_("the model prefers beam search's output (it scores higher): not a search error"),
    N_(
        "beam search's output scores lower: the search lost a hypothesis it would have "
        "ranked first (a search error)"
    ),
    N_(
        "beam search's output scores higher than greedy search's in {higher} of the "
        "{changed} changed translations and lower in {lower} (search errors); it is "
        "closer to the reference in {closer} and further from it in {further}"
    ),
    N_("beam search scored below greedy search on {below} of {total} sentences"),
    N_("{n} greedy outputs repeat a word"),
    N_("chosen: the checkpoint of step {step}, {decoding}"),
    N_("  ({tied} score exactly the same: the first one tried wins)"),
    N_(
        "beam minus greedy: {difference:+.2f} BLEU, p = {p:.4f}; {differ} of {n} "
        "translations differ"
    ),
    N_("identical translations: nothing to test (sacrebleu still reports its smallest p, 1/1001)"),
    N_(
        "no difference shown between beam search and greedy search on these {n} "
        "sentences: p = {p:.4f} is not below {threshold}"
    ),
    N_(
        "beam search is better than greedy search on these {n} sentences: p = {p:.4f} < {threshold}"
    ),
    N_("beam search is worse than greedy search on these {n} sentences: p = {p:.4f} < {threshold}"),
    N_(
        "seed 0 of the file is this notebook's stored run: step {step}, {decoding}, valid"
        " BLEU {valid:.2f}, test BLEU {test:.2f}"
    ),
    N_(
        "seed 0 of the file is not the run stored here (step {step}, {decoding}, valid "
        "BLEU {valid:.2f}, test BLEU {test:.2f}): another machine, thread count or kernel"
        " set trains another model"
    ),
    N_(
        "greedy decoding of {n} test sentences: {plain:.2f} s re-running the prefix, "
        "{cached:.2f} s with the cache, the same tokens (and beam search too)"
    ),
)
