"""transformer_lib.inference.translate: text in, text (and cross-attention) out."""

import pytest
import torch

from transformer_lib import Transformer, TransformerConfig
from transformer_lib.data.vocab import Vocab
from transformer_lib.inference.translate import Translation, translate, translate_detailed

# Tiny models gain nothing from a second thread (see conftest.one_thread).
pytestmark = pytest.mark.usefixtures("one_thread")


def test_translate_strings_unknown_words_and_attention(decoding_model, src_vocab, tgt_vocab):
    model = decoding_model(eos_bias=3.0)
    texts = translate(
        model, ["the dog sees a cat.", "a zebra sees the dog."], src_vocab, tgt_vocab, max_len=10
    )
    assert len(texts) == 2 and all(isinstance(t, str) for t in texts)
    one = translate(model, ["the dog."], src_vocab, tgt_vocab, max_len=10)
    assert isinstance(one, list) and translate(model, ("the dog.",), src_vocab, tgt_vocab) == one
    (result,) = translate_detailed(
        model,
        ["a zebra sees the dog."],
        src_vocab,
        tgt_vocab,
        method="beam",
        max_len=10,
        attention=True,
    )
    assert isinstance(result, Translation) and result.source == "a zebra sees the dog."
    assert result.unknown == ["zebra"] and result.src_tokens[1] == "<unk>"
    n_layers, H, T, S = result.cross_attention.shape
    assert (n_layers, H, T, S) == (2, 4, len(result.tgt_tokens), 6)
    torch.testing.assert_close(result.cross_attention.sum(-1), torch.ones(2, 4, T))
    assert translate(model, ["", "the dog."], src_vocab, tgt_vocab, max_len=10)[0] == ""


def test_translate_errors(decoding_model, src_vocab, tgt_vocab):
    model = decoding_model()
    with pytest.raises(ValueError, match="`method` must be 'greedy' or 'beam'"):
        translate(model, ["the dog."], src_vocab, tgt_vocab, method="sampling")
    with pytest.raises(TypeError, match=r"`sentences` must be a list of str; got str 'the dog\.'\. "
                       r"Wrap a single sentence in a list: translate\(model, \[sentence\]"):  # fmt: skip
        translate(model, "the dog.", src_vocab, tgt_vocab)
    with pytest.raises(TypeError, match=r"`sentences\[1\]` must be a str"):
        translate(model, ["the dog.", 3], src_vocab, tgt_vocab)
    with pytest.raises(
        ValueError, match=r"`sentences\[0\]` must be at most max_len=40 positions long"
    ):
        translate(model, ["the dog " * 30], src_vocab, tgt_vocab)


@pytest.fixture
def german_larger(src_vocab, tgt_vocab):
    """A model whose target vocabulary (11 tokens) is one larger than its source's (10), so
    that vocabularies passed in the wrong order show in their sizes."""
    tgt = Vocab([*tgt_vocab.tokens, "Maus"])
    config = TransformerConfig.small(
        len(src_vocab), len(tgt), d_model=16, n_heads=2, d_ff=32, max_len=32
    )
    return Transformer(config), src_vocab, tgt


def test_vocabularies_must_match_the_model(german_larger):
    model, src_vocab, tgt_vocab = german_larger
    assert isinstance(translate(model, ["the dog."], src_vocab, tgt_vocab, max_len=4)[0], str)
    with pytest.raises(
        ValueError,
        match=r"`src_vocab` must be a vocabulary of the model's src_vocab_size=10 tokens; got 11 "
        r"tokens\. Were src_vocab and tgt_vocab passed in the wrong order\?",
    ):
        translate(model, ["the dog."], tgt_vocab, src_vocab)
    with pytest.raises(ValueError, match=r"`tgt_vocab` must be .*=11 tokens; got 10 tokens\. Use"):
        translate(model, ["the dog."], src_vocab, src_vocab)
    with pytest.raises(TypeError, match="`tgt_vocab` must be a transformer_lib.vocab.Vocab"):
        translate(model, ["the dog."], src_vocab, tgt_vocab.tokens)


def test_search_settings_are_checked_before_any_text(decoding_model, src_vocab, tgt_vocab):
    model = decoding_model()
    with pytest.raises(
        ValueError,
        match=r"`max_len` must be at most 40, the positions the model's table \(max_len=40\) has for an output",
    ):
        translate(model, ["the dog."], src_vocab, tgt_vocab, max_len=41)
    with pytest.raises(ValueError, match="`alpha` must be a finite float >= 0.0; got nan"):
        translate(model, ["the dog."], src_vocab, tgt_vocab, method="beam", alpha=float("nan"))
    with pytest.raises(ValueError, match="`beam_size` must be an int >= 1; got 0"):
        translate(model, [""], src_vocab, tgt_vocab, method="beam", beam_size=0)


def test_text_without_tokens_translates_to_nothing(decoding_model, src_vocab, tgt_vocab):
    model = decoding_model(eos_bias=-100.0)  # would never stop by itself
    assert translate(model, [""], src_vocab, tgt_vocab) == [""]
    assert translate(model, ["  ", "\t"], src_vocab, tgt_vocab, method="beam") == ["", ""]
    (empty,) = translate_detailed(model, [" "], src_vocab, tgt_vocab, attention=True)
    assert (empty.text, empty.src_tokens, empty.tgt_tokens) == ("", [], [])
