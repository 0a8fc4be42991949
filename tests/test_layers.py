import pytest
import torch
from torch import nn

from transformer_lib.model import masks
from transformer_lib.model.attention import AttentionWeights, MultiHeadAttention
from transformer_lib.model.layers import DecoderLayer, EncoderLayer, FeedForward
from transformer_lib.model.reference import (
    to_torch_decoder_layer,
    to_torch_encoder_layer,
    to_torch_padding_mask,
)

B, S, T, D, H, D_FF = 2, 7, 5, 16, 4, 32


def _randomise_norms(layer) -> None:
    # nn.LayerNorm starts at gain 1, bias 0; random values make the copy test meaningful
    with torch.no_grad():
        for module in layer.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.normal_()
                module.bias.normal_()


def _padding(length: int) -> torch.Tensor:
    tokens = torch.randint(1, 9, (B, length))
    tokens[0, length - 2 :] = 0
    return masks.padding_mask(tokens, 0)  # (B, 1, 1, L)


def _compare_grads(ours: nn.Module, theirs: nn.Module) -> None:
    for a, b in ((ours.feed_forward.linear1, theirs.linear1), (ours.norm1, theirs.norm1)):
        torch.testing.assert_close(a.weight.grad, b.weight.grad)
    torch.testing.assert_close(
        ours.self_attn.w_o.weight.grad, theirs.self_attn.out_proj.weight.grad
    )


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_equals_nn_transformer_encoder_layer(norm_first):
    ours = EncoderLayer(D, H, D_FF, dropout=0.0, norm_first=norm_first)
    _randomise_norms(ours)
    theirs = to_torch_encoder_layer(ours)
    assert theirs.norm_first == norm_first and theirs.linear1.out_features == D_FF
    x = torch.randn(B, S, D)
    mask = _padding(S)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    out = ours(x1, mask)
    expected = theirs(x2, src_key_padding_mask=to_torch_padding_mask(mask))  # True = ignore
    torch.testing.assert_close(out, expected)
    grad = torch.randn_like(out)
    out.backward(grad)
    expected.backward(grad)
    torch.testing.assert_close(x1.grad, x2.grad)
    _compare_grads(ours, theirs)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_equals_nn_transformer_decoder_layer(norm_first):
    ours = DecoderLayer(D, H, D_FF, dropout=0.0, norm_first=norm_first)
    _randomise_norms(ours)
    theirs = to_torch_decoder_layer(ours)
    assert theirs.norm_first == norm_first and theirs.linear1.out_features == D_FF
    x, memory = torch.randn(B, T, D), torch.randn(B, S, D)  # S != T
    tgt_tokens = torch.randint(1, 9, (B, T))
    tgt_tokens[1, -1] = 0
    tgt_mask = masks.target_mask(tgt_tokens, 0)  # (B, 1, T, T)
    src_mask = _padding(S)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    m1, m2 = memory.clone().requires_grad_(), memory.clone().requires_grad_()
    out = ours(x1, m1, tgt_mask, src_mask)
    expected = theirs(
        x2,
        m2,
        tgt_mask=~masks.causal_mask(T)[0, 0],
        tgt_key_padding_mask=tgt_tokens == 0,
        memory_key_padding_mask=to_torch_padding_mask(src_mask),
    )
    torch.testing.assert_close(out, expected)
    grad = torch.randn_like(out)
    out.backward(grad)
    expected.backward(grad)
    torch.testing.assert_close(x1.grad, x2.grad)
    torch.testing.assert_close(m1.grad, m2.grad)
    _compare_grads(ours, theirs)
    torch.testing.assert_close(ours.norm3.weight.grad, theirs.norm3.weight.grad)


def test_layers_use_nn_layer_norm_with_biased_variance():
    """Our norms are nn.LayerNorm: (x - mean) / sqrt(biased var + eps) * gain + bias.

    The usual hand-written mistakes (unbiased variance, std + eps) differ measurably.
    """
    layer = DecoderLayer(D, H, D_FF)
    norms = [m for m in layer.modules() if "Norm" in type(m).__name__]
    assert len(norms) == 3 and all(type(m) is nn.LayerNorm for m in norms)
    x = torch.randn(4, 8, D)
    mean = x.mean(-1, keepdim=True)
    by_formula = (x - mean) / torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + 1e-5)
    torch.testing.assert_close(layer.norm1(x), by_formula)
    unbiased = (x - mean) / torch.sqrt(x.var(-1, unbiased=True, keepdim=True) + 1e-5)
    std_plus_eps = (x - mean) / (x.std(-1, keepdim=True) + 1e-5)
    for wrong in (unbiased, std_plus_eps):
        assert not torch.allclose(layer.norm1(x), wrong, atol=1e-3)


def test_feed_forward_acts_on_each_position_alone():
    ff = FeedForward(D, D_FF, dropout=0.0)
    x = torch.randn(B, S, D)
    out = ff(x)
    torch.testing.assert_close(out[:, 3], ff(x[:, 3:4])[:, 0])
    expected = ff.linear2(torch.relu(ff.linear1(x)))
    torch.testing.assert_close(out, expected)


def test_layers_fill_attention_weights_on_request():
    weights = AttentionWeights()
    out = EncoderLayer(D, H, D_FF)(torch.randn(B, S, D), _padding(S), attention=weights)
    assert out.shape == (B, S, D) and [w.shape for w in weights.encoder] == [(B, H, S, S)]
    out = DecoderLayer(D, H, D_FF)(
        torch.randn(B, T, D),
        torch.randn(B, S, D),
        masks.causal_mask(T),
        _padding(S),
        attention=weights,
    )
    assert out.shape == (B, T, D) and len(weights.encoder) == 1
    assert [w.shape for w in weights.decoder_self] == [(B, H, T, T)]
    assert [w.shape for w in weights.cross] == [(B, H, T, S)]


def test_dropout_acts_on_the_sublayer_output_not_after_the_norm():
    """With post-norm the layer output is a LayerNorm output even in training mode."""
    layer = EncoderLayer(D, H, D_FF, dropout=0.5).train()
    out = layer(torch.randn(B, S, D))
    torch.testing.assert_close(out.mean(-1), torch.zeros(B, S), atol=1e-5, rtol=0)
    assert (out != 0).all()  # nothing was dropped after the norm


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: EncoderLayer(D, H, D_FF)(torch.randn(B, S, D + 1)),
            ValueError,
            r"`x` must be of width d_model=16 in its last dimension; got shape \(2, 7, 17\)",
        ),
        (
            lambda: DecoderLayer(D, H, D_FF)(torch.randn(B, T, D), torch.randn(B, S)),
            ValueError,
            r"`memory` must be a 3-D tensor of shape \(B, S, D\); got 2-D float32 \(2, 7\)",
        ),
        (lambda: FeedForward(D, 0), ValueError, r"`d_ff` must be an int >= 1; got 0"),
        (
            lambda: FeedForward(D, D_FF, dropout=1.0),
            ValueError,
            r"`dropout` must be a float in \[0, 1\); got 1.0",
        ),
    ],
)
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_layer_checks_its_inputs_once_under_its_own_names(monkeypatch):
    """The layer checks x, memory and its masks; its attentions do not check them again,
    and an error names the layer's argument (``tgt_mask``, not the attention's ``mask``)."""
    calls = []
    monkeypatch.setattr(MultiHeadAttention, "_check_inputs", lambda *args: calls.append(args))
    x, memory = torch.randn(B, T, D), torch.randn(B, S, D)
    EncoderLayer(D, H, D_FF)(memory, _padding(S), AttentionWeights())
    DecoderLayer(D, H, D_FF)(x, memory, masks.causal_mask(T), _padding(S))
    DecoderLayer(D, H, D_FF, norm_first=True)(x, memory, masks.causal_mask(T), _padding(S))
    assert calls == []
    layer = DecoderLayer(D, H, D_FF)
    with pytest.raises(ValueError, match=r"`tgt_mask` must be bool .*=\(2, 4, 5, 5\); got bool"):
        layer(x, memory, masks.causal_mask(T + 1))
    with pytest.raises(ValueError, match=r"`memory` must be the same batch size B=2 as x"):
        layer(x, memory[:1])
