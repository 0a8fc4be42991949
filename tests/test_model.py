import pytest
import torch
from torch import nn

from transformer_lib import _checks
from transformer_lib.model import masks
from transformer_lib.model.attention import AttentionWeights, MultiHeadAttention
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import ModelContract
from transformer_lib.model.reference import TorchTransformer
from transformer_lib.model.transformer import (
    Transformer,
    count_parameters,
    init_parameters,
)

V = 10  # conftest's toy vocabularies
SIZES = dict(d_model=32, n_heads=4, d_ff=64, n_encoder_layers=2, max_len=20)


@pytest.fixture
def model(tiny_model) -> Transformer:
    return tiny_model(**SIZES).eval()


def _tokens(batch: int, length: int) -> torch.Tensor:
    return torch.randint(4, V, (batch, length))


def test_paper_base_parameter_count():
    """The base model has 63,119,496 parameters; the paper's Table 3 says "65M".

    With a shared vocabulary of V = 37000 and D = 512, d_ff = 2048, N = 6:
      embedding, shared by source, target and the output layer (§3.4): V·D = 18,944,000
      output bias: V = 37,000
      attention block: 4 projections of D·D + D = 4·262,656 = 1,050,624
      feed-forward: D·d_ff + d_ff + d_ff·D + D = 2,099,712
      LayerNorm: 2·D = 1,024
      encoder layer = 1 attention + FFN + 2 norms = 3,152,384;  × 6 = 18,914,304
      decoder layer = 2 attention + FFN + 3 norms = 4,204,032;  × 6 = 25,224,192
      total = 18,944,000 + 37,000 + 18,914,304 + 25,224,192 = 63,119,496 ≈ 63M.
    The paper does not list its exact vocabulary size for this count; the ≈2M gap to
    "65M" is about 4k more vocabulary rows (2M / 512), so "65M" is consistent within rounding
    of V. Untied embeddings would add 2·V·D ≈ 37.9M.
    """
    model = Transformer(TransformerConfig())
    assert count_parameters(model) == 63_119_496
    untied = Transformer(TransformerConfig(share_embeddings=False, tie_output=False))
    assert count_parameters(untied) - count_parameters(model) == 2 * 37000 * 512


def test_weight_tying_shares_one_matrix(model):
    assert model.src_embed is model.tgt_embed
    assert model.output.weight is model.tgt_embed.embedding.weight
    untied = Transformer(TransformerConfig.small(V, 40, share_embeddings=False, tie_output=False))
    assert untied.output.weight is not untied.tgt_embed.embedding.weight


def test_forward_shapes_and_attention_per_layer_and_head(model):
    src, tgt = _tokens(2, 7), _tokens(2, 5)
    weights = AttentionWeights()
    logits = model(src, tgt, attention=weights)
    assert logits.shape == (2, 5, V)
    assert [w.shape for w in weights.encoder] == [(2, 4, 7, 7)] * 2
    assert [w.shape for w in weights.decoder_self] == [(2, 4, 5, 5)] * 2
    assert [w.shape for w in weights.cross] == [(2, 4, 5, 7)] * 2
    torch.testing.assert_close(model(src, tgt), logits)


def test_encode_and_decode_fill_their_part_of_the_attention_weights(model):
    src, tgt = _tokens(2, 7), _tokens(2, 5)
    src_mask = masks.padding_mask(src, 0)
    weights = AttentionWeights()
    memory = model.encode(src, src_mask, attention=weights)
    assert len(weights.encoder) == 2 and not weights.cross and not weights.decoder_self
    model.decode(tgt, memory, src_mask, attention=weights)
    assert len(weights.decoder_self) == len(weights.cross) == 2
    for layer in weights.cross:  # each row is a distribution over the source keys
        torch.testing.assert_close(layer.sum(dim=-1), torch.ones(2, 4, 5))


def test_the_model_states_its_contract(tiny_model):
    model = tiny_model(**SIZES, pad_id=1).eval()
    assert (model.pad_id, model.max_len) == (1, 20)
    assert (model.src_vocab_size, model.tgt_vocab_size) == (V, V)
    with pytest.raises(AttributeError):
        model.pad_id = 0  # read-only: it comes from the frozen config


def test_encode_decode_equals_forward(model):
    src, tgt = _tokens(2, 7), _tokens(2, 5)
    src_mask = masks.padding_mask(src, 0)
    logits = model.decode(tgt, model.encode(src, src_mask), src_mask)
    torch.testing.assert_close(logits, model(src, tgt))


def test_decoder_output_at_t_ignores_later_tokens(model):
    src, tgt = _tokens(2, 7), _tokens(2, 6)
    changed = tgt.clone()
    changed[:, 3:] = _tokens(2, 3)
    before, after = model(src, tgt), model(src, changed)
    torch.testing.assert_close(before[:, :3], after[:, :3])
    assert not torch.allclose(before[:, 3:], after[:, 3:])


def test_padding_content_does_not_change_real_positions(model):
    src, tgt = _tokens(2, 7), _tokens(2, 6)
    src[0, 4:] = 0
    tgt[1, 4:] = 0
    src_mask, tgt_mask = masks.padding_mask(src, 0), masks.target_mask(tgt, 0)
    logits = model(src, tgt, src_mask, tgt_mask)
    # same masks, different (garbage) tokens in the padded slots
    src2, tgt2 = src.clone(), tgt.clone()
    src2[0, 4:], tgt2[1, 4:] = _tokens(1, 3)[0], _tokens(1, 2)[0]
    logits2 = model(src2, tgt2, src_mask, tgt_mask)
    torch.testing.assert_close(logits[0], logits2[0])
    torch.testing.assert_close(logits[1, :4], logits2[1, :4])


def test_pre_norm_model_ends_with_a_layer_norm(tiny_model):
    model = tiny_model(**SIZES, norm_first=True).eval()
    assert isinstance(model.encoder.norm, nn.LayerNorm)
    assert isinstance(
        tiny_model(**SIZES).encoder.norm, nn.Identity
    )  # post-norm layers end normalised
    assert model(_tokens(1, 4), _tokens(1, 3)).shape == (1, 3, V)


def test_final_norm_adds_nn_transformers_layer_norm_to_a_post_norm_stack(tiny_model):
    model = tiny_model(**SIZES, final_norm=True)
    assert isinstance(model.encoder.norm, nn.LayerNorm)
    assert isinstance(model.decoder.norm, nn.LayerNorm)


def test_attention_dropout_reaches_every_attention_layer_and_nothing_else(tiny_model):
    model = tiny_model(**SIZES, dropout=0.2, attention_dropout=0.3)
    attention = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
    c = model.config
    assert len(attention) == c.n_encoder_layers + 2 * c.n_decoder_layers
    assert {m.dropout.p for m in attention} == {0.3}
    others = {m.p for m in model.modules() if isinstance(m, nn.Dropout)} - {0.3}
    assert others == {0.2}


@pytest.mark.parametrize("init", ["separate", "fused"])
def test_attention_init_draws_q_k_v_as_one_or_three_matrices(init):
    d = 128
    model = Transformer(TransformerConfig.small(50, d_model=d, attention_init=init))
    attention = model.encoder.layers[0].self_attn
    q_k_v = torch.cat([attention.w_q.weight, attention.w_k.weight, attention.w_v.weight])
    bound = (6 / (d + d)) ** 0.5 if init == "separate" else (6 / (d + 3 * d)) ** 0.5
    assert 0.99 * bound < q_k_v.abs().max() <= bound  # Xavier uniform: U(-bound, bound)
    assert attention.w_o.weight.abs().max() > (6 / (4 * d)) ** 0.5  # W^O: (D, D) either way
    biases = torch.cat([attention.w_q.bias, attention.w_o.bias])
    assert torch.all(biases == 0) == (init == "fused")  # nn.MultiheadAttention: zero biases


def test_model_learns_to_copy():
    """A 1-layer model learns to copy 6 digits in a few hundred steps."""
    config = TransformerConfig.small(
        14,
        share_embeddings=True,  # one vocabulary: the copy reads and writes the same digits
        d_model=32,
        n_heads=2,
        d_ff=64,
        n_encoder_layers=1,
        n_decoder_layers=1,
        dropout=0.0,
    )
    model = Transformer(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(300):
        src = torch.randint(4, 14, (32, 6))
        tgt = torch.cat([torch.full((32, 1), 2), src], dim=1)  # <bos> = 2, then the copy
        logits = model(src, tgt[:, :-1])
        loss = nn.functional.cross_entropy(logits.flatten(0, 1), tgt[:, 1:].flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    src = torch.randint(4, 14, (64, 6))
    tgt = torch.cat([torch.full((64, 1), 2), src], dim=1)
    accuracy = (model(src, tgt[:, :-1]).argmax(-1) == src).float().mean().item()
    assert accuracy > 0.95


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda m: m(_tokens(2, 7) + V, _tokens(2, 5)),
            ValueError,
            r"`src` must be token ids in \[0, 10\) \(the vocabulary size\); got min -?\d+, max \d+\.",
        ),
        (
            lambda m: m(_tokens(2, 7).float(), _tokens(2, 5)),
            TypeError,
            r"`src` must be an integer tensor of token ids \(int64 or int32\) of shape \(B, S\); "
            r"got float32 \(2, 7\)\. Convert with \.long\(\)",
        ),
        (  # nn.Embedding takes int64 or int32 only: smaller ints fail inside it otherwise
            lambda m: m(_tokens(2, 7).to(torch.int16), _tokens(2, 5)),
            TypeError,
            r"`src` must be an integer tensor of token ids \(int64 or int32\) .*; got int16 \(2, 7\)",
        ),
        (
            lambda m: m(_tokens(2, 7), _tokens(2, 5).to(torch.uint8)),
            TypeError,
            r"`tgt` must be an integer tensor of token ids \(int64 or int32\) .*; got uint8 \(2, 5\)",
        ),
        (
            lambda m: m.decode(_tokens(3, 4), m.encode(_tokens(2, 5)), None),
            ValueError,
            r"`memory` must be the same batch size B=3 as tgt; got shape \(2, 5, 32\)\. Pass what "
            r"encode\(\) returned",
        ),
        (
            lambda m: m(_tokens(2, 7), _tokens(2, 5)[0]),
            ValueError,
            r"`tgt` must be a 2-D tensor of shape \(B, T\); got 1-D int64 \(5,\)",
        ),
        (
            lambda m: m(_tokens(2, 7), _tokens(2, 5), src_mask=torch.ones(2, 7)),
            TypeError,
            r"`src_mask` must be bool \(True = may attend\) broadcastable to \(B, 1, 1, S\)="
            r"\(2, 1, 1, 7\); got float32 \(2, 7\)\. Build it with transformer_lib.masks",
        ),
        (
            lambda m: m(_tokens(2, 7), _tokens(2, 5), tgt_mask=masks.causal_mask(4)),
            ValueError,
            r"`tgt_mask` must be bool .* \(B, 1, T, T\)=\(2, 1, 5, 5\); got bool \(1, 1, 4, 4\)",
        ),
        (
            lambda m: m(_tokens(1, 21), _tokens(1, 5)),
            ValueError,
            r"`src` must be at most max_len=20 positions long; got length 21",
        ),
        (
            lambda m: m(_tokens(1, 5), _tokens(1, 21)),
            ValueError,
            r"`tgt` must be at most max_len=20 positions long; got length 21",
        ),
        (
            lambda m: m(_tokens(2, 5), _tokens(2, 0)),
            ValueError,
            r"`tgt` must be at least 1 position\(s\) long, \(B, T\); got shape \(2, 0\)",
        ),
        (
            lambda m: m(_tokens(2, 5), _tokens(3, 4)),
            ValueError,
            r"`tgt` must be the same batch size B=2 as src; got shape \(3, 4\)",
        ),
    ],
)
def test_bad_input_is_named(model, call, error, match):
    with pytest.raises(error, match=match):
        call(model)


@pytest.mark.parametrize("mirror", [False, True], ids=["Transformer", "TorchTransformer"])
def test_decode_has_no_default_source_mask(model, mirror):
    """Forgetting src_mask is an error, not queries silently attending to <pad> (notebook 04)."""
    model = TorchTransformer.from_model(model) if mirror else model
    src, tgt = _tokens(2, 7), _tokens(2, 5)
    src[0, 4:] = 0  # a shorter sentence
    src_mask = masks.padding_mask(src, 0)
    memory = model.encode(src, src_mask)
    with pytest.raises(TypeError, match="src_mask"):
        model.decode(tgt, memory)
    masked, unmasked = model.decode(tgt, memory, src_mask), model.decode(tgt, memory, None)
    assert not torch.allclose(masked[0], unmasked[0])  # the padded sentence reads its pads
    torch.testing.assert_close(masked[1], unmasked[1])  # the full one has none


def test_initialisation_goes_by_module_type_not_by_name():
    """Embeddings (std 1/√D) and linear maps (Xavier) are told apart by their type: a
    linear map named "embed..." is Xavier, an embedding table named otherwise is not."""
    D = 64
    config = TransformerConfig.small(V, d_model=D, n_heads=4, d_ff=128)
    parts = nn.ModuleDict({"table": nn.Embedding(1000, D), "embed_proj": nn.Linear(D, D)})
    init_parameters(parts, config)
    bound = (6 / (D + D)) ** 0.5  # xavier_uniform_'s
    assert parts["embed_proj"].weight.abs().max() <= bound
    assert parts["table"].weight.abs().max() > bound  # a normal draw, 64,000 of them
    assert abs(parts["table"].weight.std().item() - D**-0.5) < 0.005


def test_a_forward_reads_the_token_ids_once(model, monkeypatch):
    """The id range is checked where the ids are looked up (the embeddings), once per
    tensor, and the error names the model's argument (test_bad_input_is_named)."""
    seen, check = [], _checks.check_id_range

    def counted(name, *args):
        seen.append(name)
        check(name, *args)

    monkeypatch.setattr(_checks, "check_id_range", counted)
    model(_tokens(2, 7), _tokens(2, 5))
    assert seen == ["src", "tgt"]


def test_one_forward_for_every_model_of_the_contract(model):
    """Padding mask, encode, decode: written once, in ModelContract, and a model whose
    encode and decode take no attention or target mask still runs it."""
    assert Transformer.forward is TorchTransformer.forward is ModelContract.forward

    class Bare(ModelContract):
        def __init__(self, inner):
            super().__init__()
            self.inner, self.config = inner, inner.config

        def encode(self, src, src_mask=None):
            return self.inner.encode(src, src_mask)

        def decode(self, tgt, memory, src_mask):
            return self.inner.decode(tgt, memory, src_mask)

    src, tgt = _tokens(2, 7), _tokens(2, 5)
    torch.testing.assert_close(Bare(model)(src, tgt), model(src, tgt))
    with pytest.raises(ValueError, match=r"`tgt` must be the same batch size B=2 as src"):
        TorchTransformer.from_model(model)(src, _tokens(3, 5))  # the contract's checks too
