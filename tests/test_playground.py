"""transformer_lib.teaching.playground: the translation playground, without a browser."""

import ipywidgets
import matplotlib.pyplot as plt
import pytest

from transformer_lib import Transformer
from transformer_lib.data.vocab import SPECIALS, Vocab
from transformer_lib.teaching.playground import draw_translation, translation_playground, truecase

# Tiny models gain nothing from a second thread (see conftest.one_thread).
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def model(tiny_model) -> Transformer:
    return tiny_model(eos_bias=3.0, max_len=12)  # the raised <eos> logit stops it early


def test_draw_translation_shows_text_and_attention(model, src_vocab, tgt_vocab):
    fig, ax = plt.subplots()
    text = draw_translation(ax, "the dog sees a cat.", model, src_vocab, tgt_vocab)
    assert text.startswith("German: ") and "⚠" not in text
    assert [t.get_text() for t in ax.get_xticklabels()] == ["the", "dog", "sees", "a", "cat", "."]
    assert "layer 2 of 2" in ax.get_title()
    plt.close(fig)


def test_unknown_words_are_marked_not_a_crash(model, src_vocab, tgt_vocab):
    fig, ax = plt.subplots()
    text = draw_translation(
        ax, "the zebra sees a cat.", model, src_vocab, tgt_vocab, method="beam", layer=0
    )
    assert "⚠ not in the vocabulary, read as <unk>: 'zebra'" in text
    assert "zebra?" in [t.get_text() for t in ax.get_xticklabels()]
    assert "layer 1 of 2" in ax.get_title()
    plt.close(fig)


def test_empty_and_too_long_input_give_a_message(model, src_vocab, tgt_vocab):
    empty = draw_translation(None, "   ", model, src_vocab, tgt_vocab)
    assert empty.startswith("Type an English sentence")
    assert "at most 12" in draw_translation(None, "the dog " * 10, model, src_vocab, tgt_vocab)
    with pytest.raises(ValueError, match="`layer` must be a layer index in"):
        draw_translation(None, "the dog.", model, src_vocab, tgt_vocab, layer=5)


def test_widget_redraws_when_the_text_changes(model, src_vocab, tgt_vocab):
    box = translation_playground(model, src_vocab, tgt_vocab, text="the dog.")
    assert set(box.controls) == {"text", "method", "layer"}
    first = box.figure
    box.controls["text"].value = "a cat sees the dog."
    assert box.figure is not first
    labels = [t.get_text() for t in box.figure.axes[0].get_xticklabels()]
    assert labels == ["a", "cat", "sees", "the", "dog", "."]


def test_truecase_writes_words_as_the_corpus_does():
    vocab = Vocab([*SPECIALS, "the", "dog", "I", "Hund", "."])
    words = ["The", "DOG", "i", "I", "hund", "Zebra", "."]
    assert truecase(words, vocab) == ["the", "dog", "I", "I", "Hund", "Zebra", "."]


def test_capitals_are_read_as_the_corpus_writes_them(model, src_vocab, tgt_vocab):
    fig, ax = plt.subplots()
    text = draw_translation(ax, "The dog sees A cat.", model, src_vocab, tgt_vocab)
    assert "⚠" not in text  # "The" is the corpus's "the", not an unknown word
    assert text.splitlines()[0] == "read as: the dog sees a cat."
    assert [t.get_text() for t in ax.get_xticklabels()] == ["the", "dog", "sees", "a", "cat", "."]
    assert text.splitlines()[1] == draw_translation(
        None, "the dog sees a cat.", model, src_vocab, tgt_vocab
    )  # the same German as the lower-case sentence, which needs no "read as" line
    plt.close(fig)


def test_widget_says_how_capitals_are_read_and_shows_whole_labels(model, src_vocab, tgt_vocab):
    box = translation_playground(model, src_vocab, tgt_vocab)
    notes = [w.value for w in box.children if isinstance(w, ipywidgets.Label)]
    assert len(notes) == 1 and "\u201cThe\u201d is read as \u201cthe\u201d" in notes[0]
    for name, control in box.controls.items():
        assert control.style.description_width == "initial", name  # not cut at 80 px
    text = box._repr_mimebundle_()["text/plain"]  # what a notebook shows before it runs
    assert (
        text
        == "Interactive widget (translation playground: type an English sentence): run the cell to use it."
    )
