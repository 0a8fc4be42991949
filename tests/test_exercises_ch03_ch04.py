"""Exercises of notebooks 03 attention and 04 masking: other right answers students write, and
what these checks teach beyond their catalogues (-inf vs -1e9, padded queries, wrong answers
that no catalogue entry names). Each catalogue entry's own hint is tested in test_exercises.py.
"""

import math

import pytest
import torch

from transformer_lib.model import masks
from transformer_lib.model.attention import scaled_dot_product_attention
from transformer_lib.teaching import exercises as ex
from transformer_lib.teaching.exercises import ch03_attention, ch03_scaled_attention, ch04_padding


def softmax(x, dim):
    exp = torch.exp(x - x.max(dim, keepdim=True).values)
    return exp / exp.sum(dim, keepdim=True)


def attention(q, k, v, mask=None, fill=float("-inf"), scale=None, dim=-1, own_softmax=False):
    """The tutorial form: fill, then a plain softmax (a row of -inf gives NaN)."""
    scores = q @ k.transpose(-2, -1) / (math.sqrt(q.size(-1)) if scale is None else scale)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, fill)
    weights = softmax(scores, dim) if own_softmax else torch.softmax(scores, dim=dim)
    return weights @ v, weights


def attention_without_nan(q, k, v, mask=None):
    out, weights = attention(q, k, v, mask)
    return out.nan_to_num(), weights.nan_to_num()


def causal_by_comparison(size):
    positions = torch.arange(size)
    return positions[None, :] <= positions[:, None]


def target_from_scratch(tgt, pad_id):
    causal = torch.tril(torch.ones(tgt.size(1), tgt.size(1), dtype=torch.bool))  # (T, T)
    return (tgt != pad_id).unsqueeze(1).unsqueeze(2) & causal  # (B, 1, 1, T) & (T, T)


CORRECT = [
    (ex.check_softmax, softmax),
    (ex.check_softmax, lambda x, dim: torch.nn.functional.softmax(x, dim=dim)),
    (ex.check_attention_scores, lambda q, k: q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))),
    (ex.check_attention_scores, lambda q, k: (q / q.size(-1) ** 0.5) @ k.mT),
    (ex.check_scaled_dot_product_attention, scaled_dot_product_attention),
    (ex.check_scaled_dot_product_attention, attention),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m, own_softmax=True),
    ),
    (ex.check_scaled_dot_product_attention, attention_without_nan),
    (ex.check_causal_mask, masks.causal_mask),
    (ex.check_causal_mask, lambda T: torch.tril(torch.ones(T, T, dtype=torch.bool))),
    (ex.check_causal_mask, lambda T: torch.ones(1, T, T).tril().bool()),
    (ex.check_causal_mask, causal_by_comparison),
    (ex.check_padding_mask, masks.padding_mask),
    (ex.check_padding_mask, lambda t, p: (t != p).unsqueeze(1).unsqueeze(2)),
    (ex.check_padding_mask, lambda t, p: ~(t == p)[:, None, None]),
    (ex.check_target_mask, masks.target_mask),
    (ex.check_target_mask, target_from_scratch),
    (ex.check_target_mask, lambda t, p: masks.padding_mask(t, p) & causal_by_comparison(t.size(1))),
]


@pytest.mark.parametrize(("check", "fn"), CORRECT)
def test_a_right_answer_passes_with_a_tick(check, fn, capsys):
    check(fn)
    assert capsys.readouterr().out.startswith("✓ ")


@pytest.mark.parametrize("fill", [-1e9, -1e10, float("-1e9"), -1e4])
def test_a_large_finite_fill_is_named_in_float16(fill):
    with pytest.raises(ex.ExerciseFailed) as info:
        ex.check_scaled_dot_product_attention(lambda q, k, v, m=None: attention(q, k, v, m, fill))
    message = str(info.value)
    assert ch03_scaled_attention.FILL_HINT in message
    if fill < -65504:  # beyond float16: masked_fill refuses, and the student sees why
        assert "without overflow" in message


def float32_scale(q, k, v, mask=None):
    """A tutorial's scale: a 1-element float32 tensor, which promotes float16 scores."""
    return attention(q, k, v, mask, scale=torch.sqrt(torch.FloatTensor([q.size(-1)])))


def test_a_float32_tensor_scale_is_named_in_float16_not_a_mask_bias():
    with pytest.raises(ex.ExerciseFailed) as info:
        ex.check_scaled_dot_product_attention(float32_scale)
    message = str(info.value)
    assert "the scale is a float32 tensor" in message and "mask bias" not in message


def test_a_float32_result_from_float16_inputs_names_the_promotion():
    def cast_back(q, k, v, mask=None):
        out, weights = float32_scale(q.float(), k.float(), v.float(), mask)
        return (out.to(v.dtype), weights) if q.dtype == torch.float16 else (out, weights)

    with pytest.raises(
        ex.ExerciseFailed,
        match="the weights in float16: with float16 inputs a step .* turned float32",
    ):
        ex.check_scaled_dot_product_attention(cast_back)


def test_a_dtype_aware_finite_fill_is_named_by_the_fully_masked_row():
    def finfo_min(q, k, v, mask=None):
        return attention(q, k, v, mask, fill=torch.finfo(q.dtype).min)

    with pytest.raises(ex.ExerciseFailed, match="with a fully masked query") as info:
        ex.check_scaled_dot_product_attention(finfo_min)
    assert ch03_scaled_attention.FILL_HINT in str(info.value)


def test_a_fully_masked_row_gives_zeros_in_the_library_and_nan_is_accepted():
    q, k, v, mask = ch03_attention._attention_inputs(5)
    mask[0, 0, 1] = False
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert (weights[0, :, 1] == 0).all() and (out[0, :, 1] == 0).all()
    assert attention(q, k, v, mask)[1][0, :, 1].isnan().all()  # accepted: the plain softmax


def test_the_scores_reference_is_q_k_transposed_over_root_d_k():
    q, k, _, _ = ch03_attention._attention_inputs(4)
    expected = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    torch.testing.assert_close(ex.check_attention_scores.reference(q, k), expected)


def test_the_causal_hint_for_an_excluded_diagonal_speaks_of_comparisons_not_tril():
    hints = [m.hint for m in ex.check_causal_mask.mistakes if "diagonal" in m.hint]
    assert len(hints) == 1 and "<=" in hints[0] and "tril" not in hints[0]


def test_the_test_batch_is_padded_on_the_right_and_on_the_left():
    tokens = ch04_padding._padded_tokens(7, 0)
    real = tokens != 0
    assert not real[:, -1].all() and not real[:, 0].all()  # a row ends, another starts, in pads
    # so masking padded queries instead of keys differs from masking them as well as keys
    only_queries, also_queries = [m.fn(tokens, 0) for m in ex.check_target_mask.mistakes[-2:]]
    assert not torch.equal(only_queries.expand(4, 1, 6, 6), also_queries.expand(4, 1, 6, 6))


OUTSIDE_THE_CATALOGUE = [
    (ex.check_softmax, lambda x, dim: softmax(x, dim) * 2, r"differs from the reference: at index"),
    (ex.check_attention_scores, lambda q, k: q @ k.transpose(-2, -1) / 2, "at index"),
    (ex.check_attention_scores, lambda q, k: q @ q.transpose(-2, -1), r"must be \(B, H, T, S\)"),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m, scale=1.0, dim=-2),
        "sum to 1 over the keys",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: attention(q, k, v, m)[0].float().double(),
        "must return a tuple",
    ),
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: (attention(q, k, v, m)[0] * 2, attention(q, k, v, m)[1]),
        "the output is weights @ v",
    ),
    (ex.check_causal_mask, lambda T: torch.ones(T + 1, T + 1, dtype=torch.bool), "wrong shape"),
    (ex.check_causal_mask, lambda T: torch.ones(T, T).tril().int(), "dtype is torch.int32"),
    (ex.check_padding_mask, lambda t, p: (t != p)[:, None, None, :].long(), "pattern is right"),
    (ex.check_padding_mask, lambda t, p: (t > p)[:, None, None, :], "at index"),
    (
        ex.check_target_mask,
        lambda t, p: masks.target_mask(t, p).squeeze(1),
        r"Keep the head axis",
    ),
    (
        ex.check_target_mask,
        lambda t, p: torch.nn.Transformer.generate_square_subsequent_mask(t.size(1)),
        "additive float mask",
    ),
]


@pytest.mark.parametrize(("check", "fn", "match"), OUTSIDE_THE_CATALOGUE)
def test_a_wrong_answer_outside_the_catalogue_gets_a_sensible_message(check, fn, match):
    with pytest.raises(ex.ExerciseFailed, match=match) as info:
        check(fn)
    hints = [m.hint for m in check.mistakes]
    assert not any(hint in str(info.value) for hint in hints), "a catalogue hint fired"


def lengths_mask(tokens, pad_id):
    """The tutorials' mask from the lengths: right for right padding only."""
    lengths = (tokens != pad_id).sum(dim=1)  # (B,)
    return (torch.arange(tokens.size(1)) < lengths[:, None])[:, None, None, :]


def until_the_first_pad(tokens, pad_id):
    return torch.cumprod((tokens != pad_id).long(), dim=1).bool()[:, None, None, :]


@pytest.mark.parametrize(
    ("check", "fn"),
    [
        (ex.check_padding_mask, lengths_mask),
        (ex.check_padding_mask, until_the_first_pad),
        (ex.check_target_mask, lambda t, p: lengths_mask(t, p) & causal_by_comparison(t.size(1))),
    ],
)
def test_a_mask_right_for_right_padding_only_is_told_about_left_padding(check, fn):
    with pytest.raises(ex.ExerciseFailed, match="must also work with left padding"):
        check(fn)
