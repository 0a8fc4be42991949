"""dropout.Dropout: nn.Dropout's behaviour with a faster mask."""

import pytest
import torch
from torch import nn

from transformer_lib.dropout import Dropout


def test_training_zeroes_about_p_and_scales_the_rest_to_keep_the_mean():
    torch.manual_seed(0)
    x = torch.full((200, 500), 2.0, requires_grad=True)
    y = Dropout(0.1)(x)
    kept = y != 0
    assert abs(1 - kept.float().mean().item() - 0.1) < 0.005  # 100,000 draws
    torch.testing.assert_close(y[kept], torch.full_like(y[kept], 2.0 / 0.9))
    y.sum().backward()  # gradient flows through kept entries only, scaled like them
    torch.testing.assert_close(x.grad, kept.float() / 0.9)


def test_it_matches_nn_dropout_everywhere_but_the_random_numbers():
    x = torch.randn(64, 16, 32)
    ours, theirs = Dropout(0.3), nn.Dropout(0.3)
    assert isinstance(ours, nn.Dropout) and repr(ours) == repr(theirs)
    torch.manual_seed(1)
    a = ours(x)
    torch.manual_seed(1)
    b = theirs(x)
    kept = a != 0
    torch.testing.assert_close(a[kept], x[kept] / 0.7)  # survivors scaled as nn.Dropout does
    assert abs((a != 0).float().mean() - (b != 0).float().mean()) < 0.02
    for module in (ours, theirs):
        module.eval()
    assert torch.equal(ours(x), x) and torch.equal(theirs(x), x)


@pytest.mark.parametrize(("p", "expected"), [(0.0, "x"), (1.0, "zeros")])
def test_the_edge_probabilities_are_identity_and_all_zeros(p, expected):
    x = torch.randn(4, 5)
    y = Dropout(p)(x)
    assert torch.equal(y, x if expected == "x" else torch.zeros_like(x))
