"""transformer_lib.translate: text in, text (and cross-attention) out."""

import pytest
import torch

from transformer_lib.translate import Translation, translate

# Tiny models gain nothing from a second thread (see conftest.one_thread).
pytestmark = pytest.mark.usefixtures("one_thread")


def test_translate_strings_unknown_words_and_attention(decoding_model, src_vocab, tgt_vocab):
    model = decoding_model(eos_bias=3.0)
    texts = translate(
        model, ["the dog sees a cat.", "a zebra sees the dog."], src_vocab, tgt_vocab, max_len=10
    )
    assert len(texts) == 2 and all(isinstance(t, str) for t in texts)
    assert (
        translate(model, "the dog.", src_vocab, tgt_vocab, max_len=10)
        == translate(model, ["the dog."], src_vocab, tgt_vocab, max_len=10)[0]
    )
    result = translate(
        model,
        "a zebra sees the dog.",
        src_vocab,
        tgt_vocab,
        method="beam",
        max_len=10,
        return_attention=True,
    )
    assert isinstance(result, Translation)
    assert result.unknown == ["zebra"] and result.src_tokens[1] == "<unk>"
    n_layers, H, T, S = result.cross_attention.shape
    assert (n_layers, H, T, S) == (2, 4, len(result.tgt_tokens), 6)
    torch.testing.assert_close(result.cross_attention.sum(-1), torch.ones(2, 4, T))
    assert translate(model, ["", "the dog."], src_vocab, tgt_vocab, max_len=10)[0] == ""


def test_translate_errors(decoding_model, src_vocab, tgt_vocab):
    model = decoding_model()
    with pytest.raises(ValueError, match="`method` must be 'greedy' or 'beam'"):
        translate(model, "the dog.", src_vocab, tgt_vocab, method="sampling")
    with pytest.raises(TypeError, match=r"`sentences\[1\]` must be a str"):
        translate(model, ["the dog.", 3], src_vocab, tgt_vocab)
    with pytest.raises(
        ValueError, match=r"`sentences\[0\]` must be at most max_len=40 positions long"
    ):
        translate(model, "the dog " * 30, src_vocab, tgt_vocab)
