"""transformer_lib.playground: the translation playground, without a browser."""

import matplotlib.pyplot as plt
import pytest

from transformer_lib import Transformer
from transformer_lib.playground import draw_translation, translation_playground

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
    assert "⚠ not in the vocabulary, read as <unk>: zebra" in text
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
