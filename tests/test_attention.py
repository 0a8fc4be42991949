import pytest
import torch
import torch.nn.functional as F

from transformer_lib.model import masks
from transformer_lib.model.attention import (
    MultiHeadAttention,
    scaled_dot_product_attention,
)
from transformer_lib.model.reference import to_torch_attention, to_torch_padding_mask

B, H, T, S, D = 2, 4, 5, 7, 16


def _padded_tokens(length, lengths=(4, S)):
    tokens = torch.randint(1, 20, (len(lengths), length))
    for row, n in enumerate(lengths):
        tokens[row, n:] = 0
    return tokens


MASKS = {
    "none": lambda: None,
    "padding": lambda: masks.padding_mask(_padded_tokens(S), 0),  # (B, 1, 1, S)
    "causal": lambda: masks.causal_mask(S)[..., :T, :],  # (1, 1, T, S)
    "combined": lambda: masks.padding_mask(_padded_tokens(S), 0) & masks.causal_mask(S)[..., :T, :],
}


@pytest.mark.parametrize("mask_name", MASKS)
def test_sdpa_equals_pytorch_forward_and_backward(mask_name):
    mask = MASKS[mask_name]()
    q, k, v = (torch.randn(B, H, n, D // H, requires_grad=True) for n in (T, S, S))
    q2, k2, v2 = (x.detach().clone().requires_grad_() for x in (q, k, v))
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q2, k2, v2, attn_mask=mask)
    torch.testing.assert_close(out, expected)
    grad = torch.randn_like(out)
    out.backward(grad)
    expected.backward(grad)
    for ours, theirs in ((q, q2), (k, k2), (v, v2)):
        torch.testing.assert_close(ours.grad, theirs.grad)


def test_attention_rows_sum_to_one_and_respect_the_mask():
    mask = MASKS["combined"]()
    q, k, v = torch.randn(B, H, T, 8), torch.randn(B, H, S, 8), torch.randn(B, H, S, 8)
    _, weights = scaled_dot_product_attention(q, k, v, mask)
    assert weights.shape == (B, H, T, S)
    torch.testing.assert_close(weights.sum(-1), torch.ones(B, H, T))
    assert (weights.masked_select(~mask.expand_as(weights)) == 0).all()


def test_fully_masked_row_gives_zeros_and_finite_gradients():
    q, k, v = (torch.randn(1, 1, 3, 4, requires_grad=True) for _ in range(3))
    mask = torch.tensor([[True, False, False], [False, False, False], [True, True, True]])
    out, weights = scaled_dot_product_attention(q, k, v, mask[None, None])
    assert torch.equal(out[0, 0, 1], torch.zeros(4))
    assert torch.equal(weights[0, 0, 1], torch.zeros(3))
    out.sum().backward()
    for x in (q, k, v):
        assert torch.isfinite(x.grad).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_masking_works_in_half_precision(dtype):
    """-inf is representable in every float type; -1e9 is not (float16 max is 65504)."""
    mask = MASKS["combined"]()
    q, k, v = torch.randn(B, H, T, 8), torch.randn(B, H, S, 8), torch.randn(B, H, S, 8)
    out_half, weights_half = scaled_dot_product_attention(
        q.to(dtype), k.to(dtype), v.to(dtype), mask
    )
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    assert out_half.dtype == dtype and torch.isfinite(out_half).all()
    assert (weights_half.masked_select(~mask.expand_as(weights_half)) == 0).all()
    torch.testing.assert_close(out_half.float(), out, atol=2e-2, rtol=2e-2)


def test_sdpa_refuses_a_mask_of_another_rank_even_when_it_broadcasts():
    # A (B, S) padding mask against (B, T, S) scores lines its batch axis up with the
    # queries. With T == B it broadcasts, and query t of every sentence would get the
    # padding of sentence t: it must be refused, with the fix in the message.
    n = 3  # B == T
    q, k, v = torch.randn(n, n, 8), torch.randn(n, S, 8), torch.randn(n, S, 8)
    flat = _padded_tokens(S, lengths=(2, 4, S)) != 0  # (B, S)
    assert torch.broadcast_shapes(flat.shape, (n, n, S)) == (n, n, S)  # the silent case
    with pytest.raises(
        ValueError,
        match=r"`mask` must be 3-D like the scores \(\.\.\., T, S\)=\(3, 3, 7\), with size 1 "
        r"on the axes it repeats over; got 2-D bool \(3, 7\)\. Add the missing axes: "
        r"a \(B, S\) key-padding mask becomes mask\[:, None, :\]",
    ):
        scaled_dot_product_attention(q, k, v, flat)
    with pytest.raises(ValueError, match=r"must be 4-D like the scores .*masks\.padding_mask"):
        scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], flat)  # (B, H, T, S)
    out, _ = scaled_dot_product_attention(q, k, v, flat[:, None, :])  # the fix: (B, 1, S)
    for b, length in enumerate((2, 4, S)):  # each sentence sees only its own real keys
        alone, _ = scaled_dot_product_attention(q[b], k[b, :length], v[b, :length])
        torch.testing.assert_close(out[b], alone)


@pytest.mark.parametrize("shape", [(1, 1, 1, S), (B, 1, 1, S), (1, 1, T, S), (B, H, T, S)])
def test_sdpa_takes_size_one_axes_of_the_same_rank(shape):
    mask = torch.ones(shape, dtype=torch.bool)
    q, k, v = torch.randn(B, H, T, 8), torch.randn(B, H, S, 8), torch.randn(B, H, S, 8)
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, scaled_dot_product_attention(q, k, v)[0])
    assert weights.shape == (B, H, T, S)


@pytest.mark.parametrize("kind", ["self", "cross"])
def test_multi_head_attention_equals_nn_multihead_attention(kind):
    mha = MultiHeadAttention(D, H)
    reference = to_torch_attention(mha)
    query = torch.randn(B, T, D)
    memory = query if kind == "self" else torch.randn(B, S, D)  # cross: S != T
    key_tokens = _padded_tokens(memory.size(1), lengths=(3, memory.size(1)))
    mask = masks.padding_mask(key_tokens, 0)  # (B, 1, 1, L), True = may attend
    inputs = [x.clone().requires_grad_() for x in (query, memory)]
    inputs_ref = [x.clone().requires_grad_() for x in (query, memory)]

    out, weights = mha(inputs[0], inputs[1], inputs[1], mask, return_attention=True)
    expected, expected_weights = reference(
        inputs_ref[0],
        inputs_ref[1],
        inputs_ref[1],
        key_padding_mask=to_torch_padding_mask(mask),  # (B, L), True = ignore
        average_attn_weights=False,
    )
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(weights, expected_weights)

    grad = torch.randn_like(out)
    out.backward(grad)
    expected.backward(grad)
    in_proj_grad = torch.cat([mha.w_q.weight.grad, mha.w_k.weight.grad, mha.w_v.weight.grad])
    torch.testing.assert_close(in_proj_grad, reference.in_proj_weight.grad)
    torch.testing.assert_close(mha.w_o.weight.grad, reference.out_proj.weight.grad)
    for ours, theirs in zip(inputs, inputs_ref, strict=True):
        torch.testing.assert_close(ours.grad, theirs.grad)


# The fused path (F.scaled_dot_product_attention) against the explicit one: float32
# rounding of a different order of operations, never more than this.
FUSED_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


@pytest.mark.parametrize("kind", ["self", "cross"])
@pytest.mark.parametrize("mask_name", [*MASKS, "a fully masked row"])
def test_the_fused_path_equals_the_explicit_path_forward_and_backward(mask_name, kind):
    mha = MultiHeadAttention(D, H)
    if mask_name == "a fully masked row":
        mask = torch.ones(B, 1, T, S, dtype=torch.bool)
        mask[0, 0, 2] = False  # query 2 of sentence 0 may attend to nothing
    else:
        mask = MASKS[mask_name]()
    query, memory = torch.randn(B, T, D), torch.randn(B, S, D)
    if kind == "self" and mask is not None:
        mask = mask[..., :T]  # (..., T, S) -> (..., T, T)
    runs = {}
    for path in ("explicit", "fused"):
        mha.zero_grad()
        x, m = query.clone().requires_grad_(), memory.clone().requires_grad_()
        key = x if kind == "self" else m
        if path == "explicit":
            out, _ = mha(x, key, key, mask, return_attention=True)
        else:
            out = mha(x, key, key, mask)
        out.backward(torch.ones_like(out))
        grads = [x.grad, *(p.grad.clone() for p in mha.parameters())]
        runs[path] = (out, grads if kind == "self" else [*grads, m.grad])
    torch.testing.assert_close(runs["fused"][0], runs["explicit"][0], **FUSED_TOLERANCE)
    for fused, explicit in zip(runs["fused"][1], runs["explicit"][1], strict=True):
        torch.testing.assert_close(fused, explicit, **FUSED_TOLERANCE)
    if mask_name == "a fully masked row":
        assert torch.all(runs["fused"][0][0, 2] == mha.w_o.bias)  # zero heads, then W^O


def test_only_a_call_without_weights_takes_the_fused_path(monkeypatch):
    calls = []
    fused = F.scaled_dot_product_attention
    monkeypatch.setattr(
        F, "scaled_dot_product_attention", lambda *a, **k: calls.append(1) or fused(*a, **k)
    )
    mha, x = MultiHeadAttention(D, H), torch.randn(B, T, D)
    mha(x, x, x, return_attention=True)
    assert calls == []
    mha(x, x, x)
    assert calls == [1]


def test_the_fused_path_drops_attention_weights_in_training_only():
    mha, x = MultiHeadAttention(D, H, dropout=0.5), torch.randn(B, T, D)
    torch.testing.assert_close(mha.eval()(x, x, x), mha(x, x, x, return_attention=True)[0])
    torch.manual_seed(0)
    assert not torch.allclose(mha.train()(x, x, x), mha.eval()(x, x, x))


def test_cross_attention_keeps_query_and_key_lengths_apart():
    mha = MultiHeadAttention(D, H)
    out, weights = mha(
        torch.randn(B, T, D), torch.randn(B, S, D), torch.randn(B, S, D), return_attention=True
    )
    assert out.shape == (B, T, D) and weights.shape == (B, H, T, S)


def test_split_then_merge_heads_is_the_identity():
    mha = MultiHeadAttention(D, H)
    x = torch.randn(B, T, D)
    heads = mha.split_heads(x)
    assert heads.shape == (B, H, T, D // H)
    torch.testing.assert_close(heads[:, 1], x[..., D // H : 2 * D // H])  # head 1 = 2nd slice
    torch.testing.assert_close(mha.merge_heads(heads), x)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: scaled_dot_product_attention(torch.randn(4), torch.randn(4), torch.randn(4)),
            ValueError,
            r"`q` must be at least 2-D \(\.\.\., L, d\); got 1-D \(4,\)",
        ),
        (
            lambda: scaled_dot_product_attention(
                torch.ones(2, 3, dtype=torch.long), torch.randn(2, 3), torch.randn(2, 3)
            ),
            TypeError,
            r"`q` must be a floating-point tensor.*; got int64 \(2, 3\)\. Convert",
        ),
        (
            lambda: scaled_dot_product_attention(
                torch.randn(2, 3), torch.randn(4, 5), torch.randn(4, 5)
            ),
            ValueError,
            r"`k` must be last dimension d_k=3 like q; got shape \(4, 5\)",
        ),
        (
            lambda: scaled_dot_product_attention(
                torch.randn(2, 3), torch.randn(4, 3), torch.randn(5, 3)
            ),
            ValueError,
            r"`v` must be the same length S=4 as k; got shape \(5, 3\)",
        ),
        (
            lambda: scaled_dot_product_attention(
                torch.randn(2, 3), torch.randn(4, 3), torch.randn(4, 3), torch.ones(2, 4)
            ),
            TypeError,
            r"`mask` must be bool \(True = may attend\) broadcastable to "
            r"\(\.\.\., T, S\)=\(2, 4\); got float32 \(2, 4\)\. Build it with",
        ),
        (
            lambda: scaled_dot_product_attention(
                torch.randn(2, 3), torch.randn(4, 3), torch.randn(4, 3), torch.ones(3, 4).bool()
            ),
            ValueError,
            r"`mask` must be bool .*=\(2, 4\); got bool \(3, 4\)",
        ),
        (
            lambda: MultiHeadAttention(10, 3),
            ValueError,
            r"`d_model` must be divisible by n_heads=3; got 10",
        ),
        (
            lambda: MultiHeadAttention(8, 2, dropout=-0.5),
            ValueError,
            r"`dropout` must be a float in \[0, 1\); got -0.5",
        ),
        (
            lambda: MultiHeadAttention(8, 2)(
                torch.randn(5, 8), torch.randn(5, 8), torch.randn(5, 8)
            ),
            ValueError,
            r"`query` must be a 3-D tensor of shape \(B, L, D\); got 2-D float32 \(5, 8\)",
        ),
        (
            lambda: MultiHeadAttention(8, 2)(
                torch.randn(1, 5, 6), torch.randn(1, 5, 8), torch.randn(1, 5, 8)
            ),
            ValueError,
            r"`query` must be of width d_model=8 .*; got shape \(1, 5, 6\)",
        ),
        (
            lambda: MultiHeadAttention(8, 2)(
                torch.randn(1, 5, 8), torch.randn(1, 4, 8), torch.randn(1, 3, 8)
            ),
            ValueError,
            r"`value` must be the same \(B, S\)=\(1, 4\) as key; got shape \(1, 3, 8\)",
        ),
        (
            lambda: MultiHeadAttention(8, 2)(
                torch.randn(2, 5, 8),
                torch.randn(2, 4, 8),
                torch.randn(2, 4, 8),
                torch.ones(2, 4).bool(),
            ),
            ValueError,
            r"`mask` must be bool .* broadcastable to \(B, H, T, S\)=\(2, 2, 5, 4\); "
            r"got bool \(2, 4\)",
        ),
    ],
)
def test_bad_input_is_named(call, error, match):
    with pytest.raises(error, match=match):
        call()
