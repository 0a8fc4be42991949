"""transformer_lib.teaching.studies.labels: every study's variants are shown translated."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages import pofile

import transformer_lib
from transformer_lib.i18n import set_language
from transformer_lib.teaching.studies import ablation, decoder_only, encoder_only, labels
from transformer_lib.teaching.studies.compare import compare

LANG = "zh_CN"
CATALOGUE = (
    Path(transformer_lib.__file__).parent / "locale" / LANG / "LC_MESSAGES" / "transformer_lib.po"
)


@pytest.fixture
def chinese():
    set_language(LANG)
    yield
    set_language("en")


def study_variants() -> set[str]:
    studies = [*ablation.STUDIES.values(), *ablation.OTHER_STUDIES.values()]
    studies += [*decoder_only.STUDIES.values(), decoder_only.VARIANTS, encoder_only.VARIANTS]
    return {name for names in studies for name in names}


def translated() -> dict[str, str]:
    """{English: translation} of the library catalogue's translated entries."""
    with CATALOGUE.open("rb") as po:
        catalogue = pofile.read_po(po, locale=LANG)
    return {m.id: m.string for m in catalogue if m.id and m.string and not m.fuzzy}


def test_every_variant_of_every_study_has_a_label():
    assert study_variants() - set(labels.VARIANTS) == set()
    assert ablation.BASE in labels.VARIANTS


def test_every_study_of_notebook_08_has_a_label():
    assert {*ablation.STUDIES, *ablation.OTHER_STUDIES} == set(labels.STUDIES)


def test_every_label_has_a_translation_in_the_library_catalogue():
    strings = translated()
    names = [*labels.VARIANTS, *labels.STUDIES, *labels.SCORES, *labels.DECODINGS]
    assert [name for name in names if name not in strings] == []


def test_a_label_is_english_in_english_and_translated_in_chinese(chinese):
    assert labels.localised("1 head") == translated()["1 head"] != "1 head"
    assert labels.localised("not a study's name") == "not a study's name"
    assert labels.localised("") == ""
    set_language("en")
    assert labels.localised("1 head") == "1 head"


def test_a_verdict_names_the_runs_and_the_metric_in_the_course_language(chinese):
    sentence = compare([1, 2, 3], [4, 5, 6]).sentence("1 head", ablation.BASE, "valid BLEU")
    first = sentence.splitlines()[0]
    for name in ("1 head", ablation.BASE, "valid BLEU"):
        assert labels.localised(name) in first
    assert "1 head" not in first and ablation.BASE not in first
