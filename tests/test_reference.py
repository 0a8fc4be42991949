import copy

import pytest
import torch
from torch import nn

from transformer_lib.inference.decode import greedy_decode
from transformer_lib.model import masks
from transformer_lib.model import transformer as model_module
from transformer_lib.model.attention import AttentionWeights, MultiHeadAttention
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import check_model
from transformer_lib.model.reference import (
    TorchTransformer,
    copy_attention_from_torch,
    to_torch_attention,
)
from transformer_lib.model.transformer import Transformer, count_parameters

B, S, T, D, H, V = 3, 7, 5, 16, 4, 10  # S != T; V: conftest's toy vocabularies


@pytest.fixture
def model(tiny_model):
    """Factory ``model(norm_first=False, shared=True)``: a tiny 2 + 2 layer Transformer in
    eval mode (no dropout, so the two are comparable) with random LayerNorm parameters
    (``nn.LayerNorm`` starts at 1 and 0: random values test the copy)."""

    def make(norm_first: bool = False, shared: bool = True) -> Transformer:
        sizes = dict(d_model=D, n_heads=H, d_ff=32, n_encoder_layers=2, n_decoder_layers=2)
        ours = tiny_model(
            norm_first=norm_first, share_embeddings=shared, tie_output=shared, **sizes
        ).eval()
        with torch.no_grad():
            for module in ours.modules():
                if isinstance(module, nn.LayerNorm):
                    module.weight.normal_()
                    module.bias.normal_()
        return ours

    return make


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    src, tgt = torch.randint(3, V, (B, S)), torch.randint(3, V, (B, T))
    src[0, 4:], tgt[1, 3:] = 0, 0  # padded at the end
    return src, tgt


def _with_grads_as_weights(model: nn.Module) -> nn.Module:
    """A copy of ``model`` whose parameters hold its gradients: mirroring it maps each of
    our gradients to its PyTorch parameter exactly as the weights were mapped."""
    grads = copy.deepcopy(model)
    with torch.no_grad():
        for param, original in zip(grads.parameters(), model.parameters(), strict=True):
            param.copy_(original.grad)
    return grads


@pytest.mark.parametrize("shared", [True, False], ids=["shared", "separate"])
@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_transformer_equals_nn_transformer_forward_and_backward(norm_first, shared, model):
    ours = model(norm_first, shared)
    theirs = TorchTransformer.from_model(ours)
    assert count_parameters(theirs) == count_parameters(ours)  # ties kept, no extra norms
    src, tgt = _batch()
    logits = ours(src, tgt)
    expected = theirs(src, tgt)
    torch.testing.assert_close(logits, expected)

    grad = torch.randn_like(logits)
    logits.backward(grad)
    expected.backward(grad)
    mirrored_grads = dict(
        TorchTransformer.from_model(_with_grads_as_weights(ours)).named_parameters()
    )
    for name, param in theirs.named_parameters():
        torch.testing.assert_close(param.grad, mirrored_grads[name], msg=name)


def test_a_final_norm_and_attention_dropout_are_mirrored(tiny_model):
    ours = tiny_model(d_model=D, n_heads=H, d_ff=32, final_norm=True, attention_dropout=0.2)
    theirs = TorchTransformer.from_model(ours.eval())
    assert count_parameters(theirs) == count_parameters(ours)  # the final norms copied
    assert {layer.self_attn.dropout for layer in theirs.encoder.layers} == {0.2}
    src, tgt = _batch()
    torch.testing.assert_close(ours(src, tgt), theirs(src, tgt))


def test_the_three_options_give_stock_nn_transformers_shape():
    config = TransformerConfig.small(V, d_model=D, n_heads=H, d_ff=32)
    like_torch = config.replace(final_norm=True, attention_dropout=config.dropout)
    assert count_parameters(Transformer(like_torch)) == count_parameters(TorchTransformer(config))
    assert count_parameters(Transformer(config)) < count_parameters(TorchTransformer(config))


def test_the_comparison_notices_a_weight_that_differs(model):
    ours = model()
    theirs = TorchTransformer.from_model(ours)
    with torch.no_grad():
        theirs.decoder.layers[1].multihead_attn.in_proj_weight[D : 2 * D] += 0.1  # W^K
    src, tgt = _batch()
    with pytest.raises(AssertionError):
        torch.testing.assert_close(ours(src, tgt), theirs(src, tgt))


def test_mirror_is_independent_and_keeps_ties(model):
    ours = model()
    theirs = TorchTransformer.from_model(ours)
    assert theirs.src_embed is theirs.tgt_embed
    assert theirs.output.weight is theirs.tgt_embed.embedding.weight
    assert theirs.src_embed is not ours.src_embed
    assert theirs.encoder.norm is None and theirs.decoder.norm is None  # post-norm


def test_explicit_masks_and_encode_decode_match_ours(model):
    ours = model(norm_first=True)
    theirs = TorchTransformer.from_model(ours)
    src, tgt = _batch()
    src_mask = masks.padding_mask(src, 0)  # (B, 1, 1, S)
    for tgt_mask in (masks.target_mask(tgt, 0), masks.causal_mask(T)):  # (B|1, 1, T, T)
        memory = theirs.encode(src, src_mask)
        torch.testing.assert_close(memory, ours.encode(src, src_mask))
        torch.testing.assert_close(
            theirs.decode(tgt, memory, src_mask, tgt_mask),
            ours.decode(tgt, memory, src_mask, tgt_mask),
        )


def test_attention_weights_equal_ours(model):
    ours = model()
    theirs = TorchTransformer.from_model(ours)
    src, tgt = _batch()
    ours_weights, theirs_weights = AttentionWeights(), AttentionWeights()
    with torch.no_grad():  # also where nn.TransformerEncoderLayer has a fused fast path
        ours(src, tgt, attention=ours_weights)
        theirs(src, tgt, attention=theirs_weights)
    for part in ("encoder", "decoder_self", "cross"):
        torch.testing.assert_close(getattr(theirs_weights, part), getattr(ours_weights, part))
    assert [w.shape for w in theirs_weights.cross] == [(B, H, T, S)] * 2
    theirs(src, tgt, attention=None)
    assert len(theirs_weights.cross) == 2  # hooks are gone once the call returns


def test_stock_torch_transformer_states_the_contract_and_decodes(model):
    torch.manual_seed(0)
    ours = model()
    torch.manual_seed(0)
    theirs = TorchTransformer(ours.config, Transformer(ours.config)).eval()
    assert isinstance(theirs.decoder.norm, nn.LayerNorm)  # nn.Transformer's final norms
    torch.testing.assert_close(theirs.src_embed.embedding.weight, ours.src_embed.embedding.weight)
    check_model("model", theirs)
    assert (theirs.pad_id, theirs.max_len, theirs.tgt_vocab_size) == (0, ours.max_len, V)
    src, _ = _batch()
    tokens, _ = greedy_decode(TorchTransformer.from_model(ours), src, max_len=6)
    torch.testing.assert_close(tokens, greedy_decode(ours, src, max_len=6)[0])


def test_stock_torch_transformer_builds_none_of_our_stacks(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("built one of our stacks")

    monkeypatch.setattr(model_module.Encoder, "__init__", refuse)
    monkeypatch.setattr(model_module.Decoder, "__init__", refuse)
    config = TransformerConfig.small(V, d_model=D, n_heads=H, d_ff=32, tie_output=True)
    theirs = TorchTransformer(config)
    assert theirs.output.weight is theirs.tgt_embed.embedding.weight  # tied as ours
    src, tgt = _batch()
    assert theirs(src, tgt).shape == (B, T, V)


def test_attention_copy_round_trip():
    ours = MultiHeadAttention(D, H)
    theirs = to_torch_attention(ours)
    query, memory = torch.randn(B, T, D), torch.randn(B, S, D)
    torch.testing.assert_close(
        theirs(query, memory, memory, need_weights=False)[0], ours(query, memory, memory)
    )
    back = MultiHeadAttention(D, H)
    copy_attention_from_torch(back, theirs)
    for name, value in ours.state_dict().items():
        torch.testing.assert_close(back.state_dict()[name], value, msg=name)
    assert to_torch_attention(ours.double()).in_proj_weight.dtype == torch.float64
