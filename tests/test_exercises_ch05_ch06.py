"""Exercises of notebooks 05 multi-head attention and 06 encoder and decoder: other right
answers students write, and what these checks do beyond their catalogues (which
tests/test_exercises.py runs entry by entry)."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from transformer_lib.model.attention import (
    MultiHeadAttention,
    scaled_dot_product_attention,
)
from transformer_lib.teaching import exercises as ex
from transformer_lib.teaching.exercises.ch05_attention_layer import _Inline


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(var + eps) * gamma + beta


def split_heads(x, n_heads):
    B, L, D = x.shape
    return x.view(B, L, n_heads, D // n_heads).transpose(1, 2)


def merge_heads(x):
    B, H, L, Dh = x.shape
    return x.transpose(1, 2).reshape(B, L, H * Dh)


class Skeleton(nn.Module):
    """Notebook 05's exercise skeleton; subclasses are students' forwards."""

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.n_heads, self.d_k = n_heads, d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)


class WithTorchAttention(Skeleton):
    """F.scaled_dot_product_attention, heads split with -1 for the length."""

    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape

        def split(x):
            return x.view(B, -1, self.n_heads, self.d_k).transpose(1, 2)  # (B, H, L, Dh)

        q, k, v = split(self.w_q(query)), split(self.w_k(key)), split(self.w_v(value))
        heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, H, T, Dh)
        return self.w_o(heads.transpose(1, 2).contiguous().view(B, T, D))


class WithLibraryAttentionAndMinusBillion(Skeleton):
    """The library's attention function via einsum-free split helpers; -1e9 would do here."""

    def forward(self, query, key, value, mask=None):
        q = split_heads(self.w_q(query), self.n_heads)
        k, v = split_heads(self.w_k(key), self.n_heads), split_heads(self.w_v(value), self.n_heads)
        scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.d_k)
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        heads = torch.softmax(scores, dim=-1) @ v
        return self.w_o(merge_heads(heads))


class WithLibraryFunction(Skeleton):
    def forward(self, query, key, value, mask=None):
        q = split_heads(self.w_q(query), self.n_heads)
        k, v = split_heads(self.w_k(key), self.n_heads), split_heads(self.w_v(value), self.n_heads)
        heads, _ = scaled_dot_product_attention(q, k, v, mask)
        return self.w_o(merge_heads(heads))


CORRECT = [
    (ex.check_split_heads, split_heads),
    (ex.check_split_heads, lambda x, h: torch.stack(x.chunk(h, dim=-1), dim=1)),
    (ex.check_merge_heads, merge_heads),
    (ex.check_merge_heads, lambda x: torch.cat(x.unbind(1), dim=-1)),
    (ex.check_multi_head_attention, WithTorchAttention),
    (ex.check_multi_head_attention, WithLibraryAttentionAndMinusBillion),
    (ex.check_multi_head_attention, WithLibraryFunction),
    (
        ex.check_mha_parameter_count,
        lambda d, h: sum(p.numel() for p in MultiHeadAttention(d, h).parameters()),
    ),
    (ex.check_mha_parameter_count, lambda d, h: 4 * (d * d + d)),
    (ex.check_layer_norm, layer_norm),
    (ex.check_layer_norm, lambda x, g, b, eps=1e-5: F.layer_norm(x, x.shape[-1:], g, b, eps)),
    (ex.check_feed_forward, lambda x, w1, b1, w2, b2: torch.relu(x @ w1.T + b1) @ w2.T + b2),
    (
        ex.check_feed_forward,
        lambda x, w1, b1, w2, b2: F.linear(F.relu(F.linear(x, w1, b1)), w2, b2),
    ),
    (
        ex.check_residual_post_norm,
        lambda x, sublayer, norm, dropout: norm(x + dropout(sublayer(x))),
    ),
    (ex.check_residual_pre_norm, lambda x, sublayer, norm, dropout: x + dropout(sublayer(norm(x)))),
]


@pytest.mark.parametrize(("check", "fn"), CORRECT)
def test_a_right_answer_passes_with_a_tick(check, fn, capsys):
    check(fn)
    assert capsys.readouterr().out.startswith("✓ ")


# -- multi-head attention ----------------------------------------------------------------


class ReturnsWeightsToo(_Inline):
    def forward(self, query, key, value, mask=None):
        return super().forward(query, key, value, mask), None


class DetachesTheValues(_Inline):
    def project_value(self, value):
        return self.w_v(value).detach()


class OutputProjectedTwice(_Inline):
    def output(self, merged):
        return self.w_o(self.w_o(merged))


class NoWo(Skeleton):
    def __init__(self, d_model, n_heads):
        super().__init__(d_model, n_heads)
        del self.w_o
        self.out = nn.Linear(d_model, d_model)


def test_the_key_value_length_bug_crashes_with_its_own_hint_on_cross_attention():
    class QueryLength(Skeleton):  # written as the tutorial in notebook 05, section 7
        def forward(self, query, key, value, mask=None):
            B, T, D = query.shape

            def split(x):
                return x.view(B, T, self.n_heads, self.d_k).transpose(1, 2)

            q, k, v = split(self.w_q(query)), split(self.w_k(key)), split(self.w_v(value))
            heads, _ = scaled_dot_product_attention(q, k, v, mask)
            return self.w_o(merge_heads(heads))

    with pytest.raises(ex.ExerciseFailed, match=r"shape '\[2, 5, 4, 8\]' is invalid.*own length"):
        ex.check_multi_head_attention(QueryLength)


def test_a_mask_applied_only_in_training_fails_in_evaluation_mode():
    mistake = next(m for m in ex.check_multi_head_attention.mistakes if "self.training" in m.hint)
    with pytest.raises(ex.ExerciseFailed, match=r"^causal self-attention: .*self\.training"):
        ex.check_multi_head_attention(mistake.fn)


@pytest.mark.parametrize(
    ("cls", "match"),
    [
        (ReturnsWeightsToo, r"must be a torch.Tensor of shape \(B, T, D\)=\(2, 5, 32\); got tuple"),
        (DetachesTheValues, r"no gradient reaches w_v.weight.*\.detach\(\)"),
        (OutputProjectedTwice, r"the output differs from the reference: at index"),
        (NoWo, r"missing or different: w_o"),
    ],
)
def test_other_wrong_layers_get_a_sensible_message(cls, match):
    with pytest.raises(ex.ExerciseFailed, match=match):
        ex.check_multi_head_attention(cls)


def test_a_layer_instead_of_its_class_is_explained():
    with pytest.raises(ex.ExerciseFailed, match="pass your class itself"):
        ex.check_multi_head_attention(MultiHeadAttention(32, 4))


def test_a_stubbed_forward_is_not_implemented_yet():
    class Stub(Skeleton):
        def forward(self, query, key, value, mask=None):
            raise NotImplementedError("Exercise: write your solution here")

    with pytest.raises(ex.ExerciseFailed, match="`Stub` is not implemented yet"):
        ex.check_multi_head_attention(Stub)


# -- the other checks: wrong answers outside the catalogue --------------------------------


def test_a_hard_coded_number_of_heads_gets_the_shape_message():
    with pytest.raises(ex.ExerciseFailed, match=r"wrong shape: split_heads\(x, n_heads=4\)"):
        ex.check_split_heads(lambda x, h: x.view(x.size(0), x.size(1), 3, -1).transpose(1, 2))


def test_a_tensor_count_asks_for_an_int():
    with pytest.raises(ex.ExerciseFailed, match=r"call \.item\(\)"):
        ex.check_mha_parameter_count(lambda d, h: torch.tensor(4 * (d * d + d)))
    with pytest.raises(ex.ExerciseFailed, match="you counted 1,050,625; expected 1,050,624"):
        ex.check_mha_parameter_count(lambda d, h: 4 * (d * d + d) + 1)


@pytest.mark.parametrize(
    ("count", "named"),
    [
        (lambda d, h: 4 * d * d + 2 * d, ("The biases are missing", "LayerNorm")),
        (lambda d, h: 4 * (d * d + d) + 2 * d, ("LayerNorm",)),
        (lambda d, h: 3 * d * d + 2 * d, ("The biases are missing", "W^O is missing", "LayerNorm")),
    ],
)
def test_a_count_off_in_several_parts_names_each_part(count, named):
    with pytest.raises(ex.ExerciseFailed) as info:
        ex.check_mha_parameter_count(count)
    message = str(info.value)
    assert all(part in message for part in named), message
    unnamed = {"The biases are missing", "W^O is missing", "LayerNorm"} - set(named)
    assert not any(part in message for part in unnamed), message


class MaskCleared(WithLibraryFunction):
    """Ignores the mask by setting it to all True in place: the reference must not see that."""

    def forward(self, query, key, value, mask=None):
        if mask is not None:
            mask.fill_(True)
        return super().forward(query, key, value, mask)


def test_a_layer_that_edits_the_mask_in_place_does_not_edit_the_references():
    with pytest.raises(ex.ExerciseFailed, match="with a padding mask"):
        ex.check_multi_head_attention(MaskCleared)


def test_a_residual_that_switches_the_given_dropout_off_does_not_switch_off_the_references():
    def without_dropout(x, sublayer, norm, dropout):
        dropout.eval()  # edits the check's module: the reference must keep dropping
        return norm(x + dropout(sublayer(x)))

    with pytest.raises(ex.ExerciseFailed, match="you forgot the dropout"):
        ex.check_residual_post_norm(without_dropout)


def test_a_feed_forward_without_its_last_bias_gets_the_index_of_a_difference():
    with pytest.raises(ex.ExerciseFailed, match="differs from the reference: at index"):
        ex.check_feed_forward(lambda x, w1, b1, w2, b2: torch.relu(x @ w1.T + b1) @ w2.T)


def test_a_residual_that_ignores_the_dropout_it_is_given_is_told_where_dropout_goes():
    def own_dropout(x, sublayer, norm, dropout):
        return norm(x + F.dropout(sublayer(x), 0.5))

    with pytest.raises(ex.ExerciseFailed, match="dropout goes on the sub-layer's output"):
        ex.check_residual_post_norm(own_dropout)


def test_residual_checks_run_in_training_mode_and_leave_the_global_seed_alone():
    torch.manual_seed(0)
    before = torch.get_rng_state()
    # right in evaluation mode, wrong in training mode: the very bug notebook 06 teaches
    with pytest.raises(ex.ExerciseFailed, match="dropout after the norm"):
        ex.check_residual_post_norm(lambda x, s, n, d: d(n(x + s(x))))
    assert torch.equal(torch.get_rng_state(), before)
