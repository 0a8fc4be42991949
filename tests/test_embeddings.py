import math

import pytest
import torch

from transformer_lib.model.embeddings import (
    PositionalEncoding,
    TokenEmbedding,
    sinusoidal_positional_encoding,
)


def test_pe_table_matches_hand_computed_values():
    pe = sinusoidal_positional_encoding(50, 8)
    assert pe.shape == (50, 8)
    assert pe[0].tolist() == [0.0, 1.0] * 4  # sin(0) = 0, cos(0) = 1 for every frequency
    # pos = 1, i = 0: angle 1 / 10000^0 = 1
    assert pe[1, 0].item() == pytest.approx(math.sin(1.0))
    assert pe[1, 1].item() == pytest.approx(math.cos(1.0))
    # pos = 3, 2i = 2: angle 3 / 10000^(2/8) = 3 / 10 = 0.3
    assert pe[3, 2].item() == pytest.approx(math.sin(0.3), abs=1e-6)
    assert pe[3, 3].item() == pytest.approx(math.cos(0.3), abs=1e-6)
    # pos = 49, 2i = 6: angle 49 / 10000^(6/8) = 49 / 1000
    assert pe[49, 7].item() == pytest.approx(math.cos(0.049), abs=1e-6)


def test_pe_shift_is_a_rotation():
    """PE(pos + k) is a fixed linear map of PE(pos) (§3.5): a 2x2 rotation per frequency."""
    d_model, k = 16, 5
    pe = sinusoidal_positional_encoding(40, d_model)
    freqs = 1.0 / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    cos, sin = torch.cos(k * freqs), torch.sin(k * freqs)
    shifted = torch.empty_like(pe[:-k])
    shifted[:, 0::2] = pe[:-k, 0::2] * cos + pe[:-k, 1::2] * sin
    shifted[:, 1::2] = pe[:-k, 1::2] * cos - pe[:-k, 0::2] * sin
    torch.testing.assert_close(shifted, pe[k:], atol=1e-5, rtol=0)


def test_token_embedding_is_a_scaled_lookup():
    torch.manual_seed(0)
    emb = TokenEmbedding(10, 4)
    ids = torch.tensor([[1, 2, 9]])
    expected = emb.embedding.weight[ids] * 2.0  # sqrt(4)
    torch.testing.assert_close(emb(ids), expected)


def test_positional_encoding_adds_the_table_and_moves_with_the_module():
    module = PositionalEncoding(8, max_len=10, dropout=0.0)
    x = torch.zeros(2, 6, 8)
    torch.testing.assert_close(module(x), sinusoidal_positional_encoding(10, 8)[:6].expand(2, 6, 8))
    assert "pe" not in module.state_dict()  # a constant, not a parameter to save


def test_learned_positions_are_parameters():
    module = PositionalEncoding(7, max_len=10, dropout=0.0, learned=True)  # odd width allowed
    assert module.position_embedding.weight.requires_grad
    assert module(torch.zeros(1, 3, 7)).shape == (1, 3, 7)


def test_positional_encoding_keeps_half_precision():
    module = PositionalEncoding(8, max_len=10, dropout=0.0)
    assert module(torch.zeros(1, 4, 8, dtype=torch.float16)).dtype == torch.float16


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: sinusoidal_positional_encoding(10, 7),
            ValueError,
            r"`d_model` must be even .*; got 7\. Use learned positions",
        ),
        (
            lambda: PositionalEncoding(8, max_len=4, dropout=0.0)(torch.zeros(1, 5, 8)),
            ValueError,
            r"`x` must be at most max_len=4 positions long; got length 5\. Raise max_len",
        ),
        (
            lambda: PositionalEncoding(8, dropout=-0.1),
            ValueError,
            r"`dropout` must be a float in \[0, 1\); got -0.1",
        ),
        (
            lambda: TokenEmbedding(10, 4)(torch.tensor([[3, 10]])),
            ValueError,
            r"`tokens` must be token ids in \[0, 10\) \(the vocabulary size\); got min 3, max 10",
        ),
        (
            lambda: TokenEmbedding(10, 4)(torch.tensor([[0.0, 1.0]])),
            TypeError,
            r"`tokens` must be an integer tensor of token ids.*; got float32 \(1, 2\)",
        ),
    ],
)
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()
