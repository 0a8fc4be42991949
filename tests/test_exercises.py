"""The exercise checks accept right answers and name each usual mistake."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import math  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from transformer_lib import exercises as ex  # noqa: E402
from transformer_lib import masks  # noqa: E402
from transformer_lib.attention import MultiHeadAttention, scaled_dot_product_attention  # noqa: E402
from transformer_lib.embeddings import sinusoidal_positional_encoding  # noqa: E402

# -- right answers -------------------------------------------------------------------------


def softmax(x, dim):
    exp = torch.exp(x - x.max(dim, keepdim=True).values)
    return exp / exp.sum(dim, keepdim=True)


def attention(q, k, v, mask=None, scale=None, dim=-1, fill=float("-inf"), invert=False):
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.size(-1)) if scale is None else scale)
    if mask is not None:
        scores = scores.masked_fill(mask if invert else ~mask, fill)
    weights = torch.softmax(scores, dim=dim)
    return weights @ v, weights


def pe_table(max_len, d_model, swap=False, concat=False, two_i=True, start=0):
    position = torch.arange(start, start + max_len).float()[:, None]  # (L, 1)
    index = torch.arange(0, d_model, 2) if two_i else torch.arange(d_model // 2)
    angle = position / 10000 ** (index.float() / d_model)  # (L, D/2)
    first, second = (angle.cos(), angle.sin()) if swap else (angle.sin(), angle.cos())
    if concat:
        return torch.cat([first, second], dim=1)
    return torch.stack([first, second], dim=-1).reshape(max_len, d_model)


def shift_matrix(offset, d_model, sign=1.0):
    omega = 1 / 10000 ** (torch.arange(0, d_model, 2).float() / d_model)
    blocks = []
    for c, s in zip(torch.cos(offset * omega), torch.sin(offset * omega)):
        blocks.append(torch.tensor([[c, sign * s], [-sign * s, c]]))
    return torch.block_diag(*blocks)


def layer_norm(x, gamma, beta, eps=1e-5, unbiased=False, std_eps=False, dim=-1):
    mean = x.mean(dim, keepdim=True)
    var = x.var(dim, keepdim=True, unbiased=unbiased)
    denominator = var.sqrt() + eps if std_eps else torch.sqrt(var + eps)
    return (x - mean) / denominator * gamma + beta


def split_heads(x, n_heads):
    B, L, D = x.shape
    return x.view(B, L, n_heads, D // n_heads).transpose(1, 2)


def merge_heads(x):
    B, H, L, Dh = x.shape
    return x.transpose(1, 2).reshape(B, L, H * Dh)


def not_implemented(*args, **kwargs):
    raise NotImplementedError("Exercise: write your solution here")


CORRECT = [
    (ex.check_embedding_lookup, lambda ids, w: F.one_hot(ids, w.size(0)).float() @ w),
    (ex.check_embedding_lookup, lambda ids, w: w[ids]),
    (ex.check_scaled_embedding, lambda ids, w: F.embedding(ids, w) * math.sqrt(w.size(1))),
    (ex.check_positional_encoding, sinusoidal_positional_encoding),
    (ex.check_positional_encoding, pe_table),
    (ex.check_pe_relative_shift, shift_matrix),
    (ex.check_softmax, softmax),
    (ex.check_attention_scores, lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))),
    (ex.check_scaled_dot_product_attention, scaled_dot_product_attention),
    (ex.check_scaled_dot_product_attention, attention),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m, fill=-1e9),
    ),
    (ex.check_causal_mask, masks.causal_mask),
    (ex.check_causal_mask, lambda T: torch.tril(torch.ones(T, T, dtype=torch.bool))),
    (ex.check_padding_mask, masks.padding_mask),
    (ex.check_target_mask, masks.target_mask),
    (ex.check_split_heads, split_heads),
    (ex.check_merge_heads, merge_heads),
    (
        ex.check_mha_parameter_count,
        lambda d, h: sum(p.numel() for p in MultiHeadAttention(d, h).parameters()),
    ),
    (ex.check_layer_norm, layer_norm),
    (ex.check_layer_norm, lambda x, g, b, eps=1e-5: F.layer_norm(x, x.shape[-1:], g, b, eps)),
    (ex.check_feed_forward, lambda x, w1, b1, w2, b2: torch.relu(x @ w1.T + b1) @ w2.T + b2),
    (ex.check_residual_post_norm, lambda x, sublayer, norm: norm(x + sublayer(x))),
    (ex.check_residual_pre_norm, lambda x, sublayer, norm: x + sublayer(norm(x))),
]


@pytest.mark.parametrize(("check", "fn"), CORRECT)
def test_a_right_answer_passes_with_a_tick(check, fn, capsys):
    check(fn)
    assert capsys.readouterr().out.startswith("✓ ")


def test_checks_neither_use_nor_change_the_global_seed():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    ex.check_scaled_dot_product_attention(scaled_dot_product_attention)
    ex.check_residual_post_norm(lambda x, sublayer, norm: norm(x + sublayer(x)))
    assert torch.equal(torch.get_rng_state(), before)


def test_exercise_failed_is_an_assertion_error_with_a_short_jupyter_rendering():
    assert issubclass(ex.ExerciseFailed, AssertionError)
    lines = ex.ExerciseFailed("boom")._render_traceback_()
    assert len(lines) == 1 and "boom" in lines[0]


# -- every check recognises a stub and other exceptions ------------------------------------

ALL_CHECKS = [getattr(ex, name) for name in ex.__all__ if name.startswith("check_")]


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.__name__)
def test_a_stub_is_reported_as_not_implemented_yet(check):
    with pytest.raises(ex.ExerciseFailed, match="not implemented yet") as info:
        check(not_implemented)
    assert info.value.__cause__ is None and info.value.__suppress_context__


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.__name__)
def test_any_other_exception_is_reported_briefly(check):
    def broken(*args):
        raise KeyError("oops")

    with pytest.raises(ex.ExerciseFailed, match=r"`broken` raised KeyError: 'oops'") as info:
        check(broken)
    assert info.value.__suppress_context__


def test_passing_the_result_instead_of_the_function_is_explained():
    with pytest.raises(ex.ExerciseFailed, match="pass your function itself"):
        ex.check_causal_mask(torch.ones(3, 3))


# -- each usual mistake is named -----------------------------------------------------------

D_SCALE = math.sqrt


def _shift_backwards(offset, d_model):
    return shift_matrix(offset, d_model, sign=-1.0)


MISTAKES = [
    # 01 embeddings
    (ex.check_embedding_lookup, lambda ids, w: F.one_hot(ids).float() @ w, "num_classes"),
    (ex.check_embedding_lookup, lambda ids, w: F.one_hot(ids, w.size(0)) @ w, r"\.float\(\)"),
    (ex.check_embedding_lookup, lambda ids, w: F.one_hot(ids, w.size(0)).float(), "one-hot"),
    (ex.check_embedding_lookup, lambda ids, w: w[ids].double(), "wrong dtype"),
    (ex.check_scaled_embedding, lambda ids, w: w[ids], "forgot the scaling"),
    (ex.check_scaled_embedding, lambda ids, w: w[ids] / math.sqrt(w.size(1)), "multiply"),
    (ex.check_scaled_embedding, lambda ids, w: w[ids] * w.size(1), "square root"),
    (ex.check_scaled_embedding, lambda ids, w: w[ids] * math.sqrt(w.size(0)), "vocabulary"),
    (ex.check_scaled_embedding, lambda ids, w: w[ids] * math.sqrt(ids.size(1)), "sequence length"),
    # 02 positional encoding
    (
        ex.check_positional_encoding,
        lambda n, d: pe_table(n, d, swap=True),
        "sin and cos are swapped",
    ),
    (ex.check_positional_encoding, lambda n, d: pe_table(n, d, concat=True), "concatenated"),
    (
        ex.check_positional_encoding,
        lambda n, d: pe_table(n, d, two_i=False),
        r"arange\(0, d_model, 2\)",
    ),
    (ex.check_positional_encoding, lambda n, d: pe_table(n, d, start=1), "positions start at 0"),
    (ex.check_positional_encoding, lambda n, d: pe_table(n, d).T, "transposed"),
    (ex.check_positional_encoding, lambda n, d: pe_table(n, d).double(), "wrong dtype"),
    (ex.check_positional_encoding, lambda n, d: pe_table(n, d).numpy(), "must be a torch.Tensor"),
    (ex.check_pe_relative_shift, _shift_backwards, "backwards"),
    (ex.check_pe_relative_shift, lambda k, d: shift_matrix(k, d) * 0 + torch.eye(d) * 2, "differs"),
    # 03 attention
    (ex.check_softmax, lambda x, dim: torch.softmax(x, -1), "use the `dim` argument"),
    (ex.check_softmax, lambda x, dim: x.exp() / x.exp().sum(dim, keepdim=True), "NaN or inf"),
    (ex.check_softmax, lambda x, dim: x.exp() / x.exp().sum(), "sum of all"),
    (ex.check_softmax, lambda x, dim: x.exp() / x.exp().sum(dim), "keepdim"),
    (ex.check_attention_scores, lambda q, k: q @ k.transpose(-2, -1), r"forgot to divide by √d_k"),
    (ex.check_attention_scores, lambda q, k: q @ k.transpose(-2, -1) / q.size(-1), "not by d_k"),
    (ex.check_attention_scores, lambda q, k: q.transpose(-2, -1) @ k, r"k\.transpose\(-2, -1\)"),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m, scale=1.0),
        r"forgot to divide the scores by √d_k",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m, scale=q.size(-1)),
        "not by d_k",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m, dim=-2),
        "softmax over the wrong axis",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m, invert=True),
        "mask is inverted",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v),
        "ignored the mask",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m, fill=0.0),
        "-inf",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m)[::-1],
        "in this order",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m)[0],
        "must return a tuple",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: (attention(q, k, v, m)[1] @ k, attention(q, k, v, m)[1]),
        "by v",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m, scale=1.0, dim=-2),
        "sum to 1 over the keys",
    ),
    # 04 masking
    (ex.check_causal_mask, lambda T: torch.triu(torch.ones(T, T, dtype=torch.bool), 1), "inverted"),
    (
        ex.check_causal_mask,
        lambda T: torch.tril(torch.ones(T, T, dtype=torch.bool), -1),
        "diagonal excluded",
    ),
    (ex.check_causal_mask, lambda T: torch.triu(torch.ones(T, T, dtype=torch.bool)), "upper"),
    (ex.check_causal_mask, lambda T: torch.tril(torch.ones(T, T)), "dtype is torch.float32"),
    (
        ex.check_causal_mask,
        lambda T: torch.triu(torch.full((T, T), float("-inf")), 1),
        "additive float mask",
    ),
    (ex.check_causal_mask, lambda T: torch.ones(T + 1, T + 1, dtype=torch.bool), "wrong shape"),
    (ex.check_padding_mask, lambda t, p: (t == p)[:, None, None, :], "inverted"),
    (ex.check_padding_mask, lambda t, p: (t != 0)[:, None, None, :], "hard-coded 0"),
    (ex.check_padding_mask, lambda t, p: t != p, r"mask\[:, None, None, :\]"),
    (ex.check_padding_mask, lambda t, p: (t != p)[:, None, :, None], "S axis goes last"),
    (ex.check_target_mask, lambda t, p: masks.causal_mask(t.size(1)), "causal mask alone"),
    (ex.check_target_mask, lambda t, p: masks.padding_mask(t, p), "padding mask alone"),
    (
        ex.check_target_mask,
        lambda t, p: masks.padding_mask(t, p) | masks.causal_mask(t.size(1)),
        "AND",
    ),
    (
        ex.check_target_mask,
        lambda t, p: (t != p)[:, None, :, None] & masks.causal_mask(t.size(1)),
        "padded keys",
    ),
    # 05 multi-head attention
    (
        ex.check_split_heads,
        lambda x, h: x.view(x.size(0), h, x.size(1), -1),
        r"wrong view.*\.transpose\(1, 2\)",
    ),
    (ex.check_split_heads, lambda x, h: x.view(x.size(0), x.size(1), h, -1), "forgot .transpose"),
    (
        ex.check_split_heads,
        lambda x, h: x.view(*x.shape[:2], -1, h).permute(0, 3, 1, 2),
        "wrong order",
    ),
    (
        ex.check_split_heads,
        lambda x, h: x.view(x.size(0), x.size(1), 3, -1).transpose(1, 2),
        "wrong shape",
    ),
    (
        ex.check_merge_heads,
        lambda x: x.reshape(x.size(0), x.size(2), -1),
        r"transpose\(1, 2\) back",
    ),
    (
        ex.check_merge_heads,
        lambda x: x.transpose(1, 2).view(x.size(0), x.size(2), -1),
        "contiguous",
    ),
    (
        ex.check_merge_heads,
        lambda x: x.permute(0, 2, 3, 1).reshape(x.size(0), x.size(2), -1),
        "head after head",
    ),
    (ex.check_mha_parameter_count, lambda d, h: 4 * d * d, "biases"),
    (ex.check_mha_parameter_count, lambda d, h: 3 * (d * d + d), "W\\^O"),
    (ex.check_mha_parameter_count, lambda d, h: h * 4 * (d * d + d), "does not change"),
    (ex.check_mha_parameter_count, lambda d, h: 4.0 * (d * d + d), "return an int"),
    # 06 encoder and decoder
    (
        ex.check_layer_norm,
        lambda x, g, b, eps=1e-5: layer_norm(x, g, b, eps, unbiased=True),
        "unbiased variance",
    ),
    (
        ex.check_layer_norm,
        lambda x, g, b, eps=1e-5: layer_norm(x, g, b, eps, std_eps=True),
        "inside the square root",
    ),
    (
        ex.check_layer_norm,
        lambda x, g, b, eps=1e-5: layer_norm(x, g, b, eps, unbiased=True, std_eps=True),
        "unbiased std and std \\+ eps",
    ),
    (ex.check_layer_norm, lambda x, g, b, eps=1e-5: layer_norm(x, g, b, eps, dim=0), "BatchNorm"),
    (ex.check_layer_norm, lambda x, g, b, eps=1e-5: layer_norm(x, 1.0, 0.0, eps), "gamma"),
    (ex.check_layer_norm, lambda x, g, b, eps=1e-5: layer_norm(x, g, b), "eps argument"),
    (ex.check_layer_norm, lambda x, g, b, eps=1e-5: (x - x.mean(-1)) / x.std(-1), "keepdim"),
    (ex.check_feed_forward, lambda x, w1, b1, w2, b2: (x @ w1.T + b1) @ w2.T + b2, "apply ReLU"),
    (
        ex.check_feed_forward,
        lambda x, w1, b1, w2, b2: torch.relu(x @ w1 + b1) @ w2 + b2,
        "out_features, in_features",
    ),
    (
        ex.check_feed_forward,
        lambda x, w1, b1, w2, b2: torch.relu(torch.relu(x @ w1.T + b1) @ w2.T + b2),
        "no activation",
    ),
    (ex.check_feed_forward, lambda x, w1, b1, w2, b2: F.gelu(x @ w1.T + b1) @ w2.T + b2, "GELU"),
    (ex.check_residual_post_norm, lambda x, s, n: x + s(n(x)), "that is pre-norm"),
    (ex.check_residual_post_norm, lambda x, s, n: n(s(x)), "forgot the residual"),
    (ex.check_residual_post_norm, lambda x, s, n: x + s(x), "after the sum"),
    (ex.check_residual_pre_norm, lambda x, s, n: n(x + s(x)), "that is post-norm"),
    (ex.check_residual_pre_norm, lambda x, s, n: s(n(x)), "forgot the residual"),
]


@pytest.mark.parametrize(
    ("check", "fn", "match"), MISTAKES, ids=[f"{c.__name__}-{m}" for c, _, m in MISTAKES]
)
def test_each_usual_mistake_gets_its_own_hint(check, fn, match):
    with pytest.raises(ex.ExerciseFailed, match=match):
        check(fn)


def test_the_module_docstring_lists_every_check_for_notebook_writers():
    for name in ex.__all__:
        if name.startswith("check_"):
            assert f"{name}(fn)" in ex.__doc__, name
