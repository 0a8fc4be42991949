"""The library's dropout is PyTorch's ``nn.Dropout`` (§5.4), in every place it stands.

It once had a ``Dropout`` of its own (the same distribution, a faster mask draw); the tests
that held that class to ``nn.Dropout``'s behaviour now hold the modules in the model to it.
"""

import pytest
import torch
from torch import nn

from transformer_lib import PositionalEncoding, Transformer, TransformerConfig
from transformer_lib.model.layers import FeedForward


def _dropouts(model: nn.Module) -> dict[str, nn.Module]:
    return {name: m for name, m in model.named_modules() if isinstance(m, nn.Dropout)}


def test_every_dropout_of_the_model_is_nn_dropout_with_the_configs_rate():
    config = TransformerConfig.small(11, dropout=0.2, attention_dropout=0.1)
    found = _dropouts(Transformer(config))
    assert found and all(type(m) is nn.Dropout for m in found.values())
    rates = {name: m.p for name, m in found.items()}
    attention = {name for name in rates if name.endswith("attn.dropout")}
    assert attention and {rates[name] for name in attention} == {0.1}
    assert {rate for name, rate in rates.items() if name not in attention} == {0.2}


def test_training_zeroes_about_p_and_scales_the_rest_to_keep_the_mean():
    torch.manual_seed(0)
    x = torch.full((200, 500), 2.0, requires_grad=True)
    y = FeedForward(8, 16, dropout=0.1).dropout(x)
    kept = y != 0
    assert abs(1 - kept.float().mean().item() - 0.1) < 0.005  # 100,000 draws
    torch.testing.assert_close(y[kept], torch.full_like(y[kept], 2.0 / 0.9))
    y.sum().backward()  # gradient flows through kept entries only, scaled like them
    torch.testing.assert_close(x.grad, kept.float() / 0.9)


def test_it_matches_nn_dropout_random_numbers_included():
    x = torch.randn(64, 16, 32)
    ours, theirs = PositionalEncoding(32, max_len=16, dropout=0.3).dropout, nn.Dropout(0.3)
    assert isinstance(ours, nn.Dropout) and repr(ours) == repr(theirs)
    torch.manual_seed(1)
    a = ours(x)
    torch.manual_seed(1)
    b = theirs(x)
    assert torch.equal(a, b)
    kept = a != 0
    torch.testing.assert_close(a[kept], x[kept] / 0.7)  # survivors scaled as nn.Dropout does
    for module in (ours, theirs):
        module.eval()
    assert torch.equal(ours(x), x) and torch.equal(theirs(x), x)


@pytest.mark.parametrize(("p", "expected"), [(0.0, "x"), (1.0, "zeros")])
def test_the_edge_probabilities_are_identity_and_all_zeros(p, expected):
    x = torch.randn(4, 5)
    y = nn.Dropout(p)(x)
    assert torch.equal(y, x if expected == "x" else torch.zeros_like(x))
