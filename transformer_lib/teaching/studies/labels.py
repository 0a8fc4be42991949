"""The names of the studies, their variants, scores and decodings, as a student reads them.

A variant's name (``"1 head"``, ``"notebook 07"``) is its identifier: in the code, in
``benchmarks/results`` and in the notebooks' assertions it stays English. Where it is shown
(a verdict of :meth:`compare.Verdict.sentence`, a table, a figure's axis), :func:`localised`
shows it in the course's language. ``N_`` puts each name in the library's catalogue
(``tools/i18n_notebooks.py library``); ``tests/test_study_labels.py`` checks that every
variant of every study is here, translated.
"""

from __future__ import annotations

import re

from transformer_lib.i18n import N_, _, translated

VARIANTS = (
    # ablation.STUDIES (notebook 08); "4 heads" is notebook 07's model, counted in heads
    *(N_("notebook 07"), N_("separate init"), N_("attention dropout"), N_("final norm")),
    *(N_("nn.Transformer"), N_("1 head"), N_("2 heads"), N_("4 heads"), N_("8 heads")),
    *(N_("dropout 0.1"), N_("dropout 0.1 + attention"), N_("no smoothing")),
    *(N_("learned positions"), N_("no joined pairs"), N_("learned, no joined pairs")),
    *(N_("pre-norm"), N_("warmup 25"), N_("warmup 400")),
    # ablation.OTHER_STUDIES, and the names notebook 08 shows them by ("former: " dropped)
    *(N_("former: paper"), N_("former: attention dropout"), N_("former: final norm")),
    *(N_("former: fused init"), N_("former: all three"), N_("former: nn.Transformer")),
    *(N_("paper"), N_("fused init"), N_("all three")),
    # decoder_only.VARIANTS (notebook 09)
    *(N_("encoder-decoder"), N_("decoder-only"), N_("+ pre-norm"), N_("+ GELU")),
    *(N_("+ learned positions"), N_("untied")),
    # encoder_only.VARIANTS (notebook 10)
    *(N_("pretrained"), N_("random start"), N_("bag of words")),
)
# Notebook 10: where it reads the word "dog" (its stages' names) and the two classes of its
# task (data.classification.SUBJECT_NUMBER_CLASSES)
STAGES = (N_("table (01)"), N_("input"), N_("layer 1"), N_("layer 2"))
CLASSES = (N_("singular"), N_("plural"))
# The decodings notebook 07 chooses between (translator_seeds.csv's decoding column)
DECODINGS = (N_("greedy"), N_("beam 4"), N_("beam 4, alpha 0"), N_("beam 4, alpha 0.6"))
# The studies' names (ablation.STUDIES and OTHER_STUDIES: notebook 08's table and figures)
STUDIES = (
    *(N_("stack"), N_("heads"), N_("dropout"), N_("smoothing"), N_("positions"), N_("norm")),
    *(N_("warmup"), N_("former stack")),
)
# What the verdicts are on (the metric of Verdict.sentence, a table's column)
SCORES = (
    *(N_("valid BLEU"), N_("longer BLEU"), N_("valid AER"), N_("longer-split BLEU")),
    *(N_("training time"), N_("valid BLEU at equal time"), N_("accuracy")),
)


# A study's, a variant's, a score's or a decoding's name in the course's language: itself in
# English, or where the catalogue does not hold it (the figures' lookup, under the studies' name)
localised = translated


# A results file's machine column, as benchmarks/ write it
_MACHINE = re.compile(
    r"(?P<cpu>.+), (?P<threads>\d+) threads, torch (?P<torch>\S+), (?P<device>\S+)"
)


def localised_machine(text: str) -> str:
    """A results file's machine (``"AMD EPYC, 2 threads, torch 2.13.0+cpu, cpu"``) in the
    course's language; any other text as it is."""
    found = _MACHINE.fullmatch(text)
    if found is None:
        return text
    return _("{cpu}, {threads} threads, torch {torch}, {device}").format(**found.groupdict())
