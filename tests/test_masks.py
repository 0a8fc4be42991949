import pytest
import torch

from transformer_lib.model import masks


def test_padding_mask_marks_real_tokens_and_broadcasts():
    tokens = torch.tensor([[5, 6, 0, 0], [7, 8, 9, 0]])
    mask = masks.padding_mask(tokens, pad_id=0)
    assert mask.dtype == torch.bool and mask.shape == (2, 1, 1, 4)
    assert mask[:, 0, 0].tolist() == [[True, True, False, False], [True, True, True, False]]


def test_causal_mask_includes_the_diagonal():
    mask = masks.causal_mask(4)
    assert mask.shape == (1, 1, 4, 4) and mask.dtype == torch.bool
    expected = torch.tensor([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]).bool()
    assert torch.equal(mask[0, 0], expected)


def test_target_mask_is_causal_and_padding_combined():
    tgt = torch.tensor([[4, 5, 0]])
    mask = masks.target_mask(tgt, pad_id=0)
    assert mask.shape == (1, 1, 3, 3)
    expected = torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 0]]).bool()
    assert torch.equal(mask[0, 0], expected)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: masks.padding_mask(torch.tensor([1, 2, 0]), 0),
            ValueError,
            r"`tokens` must be a 2-D tensor of shape \(B, S\); got 1-D int64 \(3,\)",
        ),
        (
            lambda: masks.padding_mask(torch.ones(2, 3), 0),
            TypeError,
            r"`tokens` must be an integer tensor of token ids .*; got float32 \(2, 3\)",
        ),
        (lambda: masks.causal_mask(0), ValueError, r"`size` must be an int >= 1; got 0"),
        (lambda: masks.causal_mask(3.0), TypeError, r"`size` must be an int; got float 3.0"),
        (
            lambda: masks.target_mask(torch.tensor([[1, 2]]), "0"),
            TypeError,
            r"`pad_id` must be an int; got str '0'",
        ),
    ],
)
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()
