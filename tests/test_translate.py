"""transformer_lib.translate: text in, text (and cross-attention) out."""

import pytest
import torch
from test_decode import SRC_VOCAB, TGT_VOCAB, random_model

from transformer_lib.translate import Translation, translate

# Tiny models gain nothing from a second thread (see conftest.one_thread).
pytestmark = pytest.mark.usefixtures("one_thread")


def test_translate_strings_unknown_words_and_attention():
    model = random_model(eos_bias=3.0)
    texts = translate(
        model, ["the dog sees a cat.", "a zebra sees the dog."], SRC_VOCAB, TGT_VOCAB, max_len=10
    )
    assert len(texts) == 2 and all(isinstance(t, str) for t in texts)
    assert (
        translate(model, "the dog.", SRC_VOCAB, TGT_VOCAB, max_len=10)
        == translate(model, ["the dog."], SRC_VOCAB, TGT_VOCAB, max_len=10)[0]
    )
    result = translate(
        model,
        "a zebra sees the dog.",
        SRC_VOCAB,
        TGT_VOCAB,
        method="beam",
        max_len=10,
        return_attention=True,
    )
    assert isinstance(result, Translation)
    assert result.unknown == ["zebra"] and result.src_tokens[1] == "<unk>"
    n_layers, H, T, S = result.cross_attention.shape
    assert (n_layers, H, T, S) == (2, 4, len(result.tgt_tokens), 6)
    torch.testing.assert_close(result.cross_attention.sum(-1), torch.ones(2, 4, T))
    assert translate(model, ["", "the dog."], SRC_VOCAB, TGT_VOCAB, max_len=10)[0] == ""


def test_translate_errors():
    model = random_model()
    with pytest.raises(ValueError, match="`method` must be 'greedy' or 'beam'"):
        translate(model, "the dog.", SRC_VOCAB, TGT_VOCAB, method="sampling")
    with pytest.raises(TypeError, match=r"`sentences\[1\]` must be a str"):
        translate(model, ["the dog.", 3], SRC_VOCAB, TGT_VOCAB)
    with pytest.raises(ValueError, match="must be at most max_len=40 tokens"):
        translate(model, "the dog " * 30, SRC_VOCAB, TGT_VOCAB)
