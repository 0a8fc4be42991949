"""Notebook 05, the whole multi-head attention layer (§3.2.2), checked against
``nn.MultiheadAttention`` with copied weights: forward and backward, on self-attention,
causal self-attention (in evaluation mode) and cross-attention with S ≠ T.

Shapes:
    B batch, T query length, S key/value length, D d_model, H heads, Dh = D / H.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from transformer_lib.i18n import N_
from transformer_lib.model.attention import MultiHeadAttention
from transformer_lib.teaching.exercises._compare import _expect
from transformer_lib.teaching.exercises._core import Mistake, _passed, exercise
from transformer_lib.teaching.exercises.ch05_layer_runs import (
    cases,
    check_layer,
    explain,
    runner,
    torch_run,
)

__all__ = ["check_multi_head_attention"]


class _Inline(MultiHeadAttention):
    """Multi-head attention written out inline, as tutorials do; each subclass below
    changes one step to a bug from published tutorial code."""

    softmax_dim = -1

    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        S = key.size(1)
        q = self.w_q(query).view(B, T, self.n_heads, self.d_k).transpose(1, 2)  # (B, H, T, Dh)
        k = self.split_kv(self.w_k(key), B, T, S)  # (B, H, S, Dh)
        v = self.split_kv(self.project_value(value), B, T, S)  # (B, H, S, Dh)
        scores = self.scores(q, k)  # (B, H, T, S)
        if mask is not None:
            scores = self.apply_mask(scores, mask)
        weights = torch.softmax(scores, dim=self.softmax_dim)  # (B, H, T, S)
        return self.output(self.merge(weights @ v, B, T, D))  # (B, H, T, Dh) -> (B, T, D)

    def split_kv(self, x, B, T, S):
        return x.view(B, S, self.n_heads, self.d_k).transpose(1, 2)

    def project_value(self, value):
        return self.w_v(value)

    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_k)

    def apply_mask(self, scores, mask):
        return scores.masked_fill(~mask, float("-inf"))

    def merge(self, heads, B, T, D):
        return heads.transpose(1, 2).reshape(B, T, D)

    def output(self, merged):
        return self.w_o(merged)


class _KVSplitWithQueryLength(_Inline):
    def split_kv(self, x, B, T, S):
        return x.view(B, T, self.n_heads, self.d_k).transpose(1, 2)  # T: the query's length


class _NoScaling(_Inline):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1)


class _ScaledByDModel(_Inline):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / math.sqrt(self.d_model)


class _ScaledByDk(_Inline):
    def scores(self, q, k):
        return q @ k.transpose(-2, -1) / self.d_k


class _SoftmaxOverQueries(_Inline):
    softmax_dim = -2


class _ValueProjectedWithWk(_Inline):
    def project_value(self, value):
        return self.w_k(value)


class _MaskOnlyInTraining(_Inline):
    def apply_mask(self, scores, mask):
        if self.training:
            scores = scores.masked_fill(~mask, float("-inf"))
        return scores


class _MaskNotAssigned(_Inline):
    def apply_mask(self, scores, mask):
        scores.masked_fill(~mask, float("-inf"))  # returns a new tensor, dropped here
        return scores


class _MaskInverted(_Inline):
    def apply_mask(self, scores, mask):
        return scores.masked_fill(mask, float("-inf"))


class _MergedWithoutTranspose(_Inline):
    def merge(self, heads, B, T, D):
        return heads.reshape(B, T, D)


class _MergedWithView(_Inline):
    def merge(self, heads, B, T, D):
        return heads.transpose(1, 2).view(B, T, D)


class _NoOutputProjection(_Inline):
    def output(self, merged):
        return merged


MULTI_HEAD_ATTENTION_MISTAKES = (
    Mistake(
        N_(
            "K and V were split with the query's length T: keys and values have their own length "
            "S = key.size(1). Split each tensor with its own length, e.g. .view(B, -1, H, Dh)."
        ),
        _KVSplitWithQueryLength,
    ),
    Mistake(
        N_("scale the scores: q @ kᵀ / √d_k, with d_k = d_model / n_heads (§3.2.1)."), _NoScaling
    ),
    Mistake(
        N_("scale by √d_k, the width of one head (d_model / n_heads), not by √d_model."),
        _ScaledByDModel,
    ),
    Mistake(N_("scale by the square root √d_k, not by d_k itself."), _ScaledByDk),
    Mistake(
        N_("softmax over the keys, dim=-1 (each query's weights sum to 1), not over the queries."),
        _SoftmaxOverQueries,
    ),
    Mistake(N_("project the values with self.w_v, not self.w_k."), _ValueProjectedWithWk),
    Mistake(
        N_(
            "the mask is applied only when self.training is True: in evaluation mode the model "
            "then reads the future and the padding. Apply the mask in both modes."
        ),
        _MaskOnlyInTraining,
    ),
    Mistake(
        N_(
            "the mask has no effect: masked_fill returns a new tensor, so assign it, "
            "scores = scores.masked_fill(~mask, float('-inf'))."
        ),
        _MaskNotAssigned,
    ),
    Mistake(
        N_(
            "the mask is inverted: True means 'may attend', so fill where the mask is False, "
            "scores.masked_fill(~mask, float('-inf'))."
        ),
        _MaskInverted,
    ),
    Mistake(
        N_(
            "heads merged without the transpose: (B, H, T, Dh) -> .transpose(1, 2) -> "
            "(B, T, H, Dh) -> .reshape(B, T, D); reshaping (B, H, T, Dh) directly mixes positions."
        ),
        _MergedWithoutTranspose,
    ),
    Mistake(
        N_(
            "after .transpose(1, 2) the heads are not contiguous, so .view refuses: use "
            ".reshape(B, T, D) (or .contiguous().view(B, T, D))."
        ),
        _MergedWithView,
    ),
    Mistake(
        N_("you forgot the output projection: apply self.w_o to the merged heads."),
        _NoOutputProjection,
    ),
)


@exercise(MultiHeadAttention, MULTI_HEAD_ATTENTION_MISTAKES)
def check_multi_head_attention(cls: Callable) -> None:
    """cls(d_model, n_heads) with w_q, w_k, w_v, w_o; forward(query (B, T, D), key (B, S, D),
    value (B, S, D), mask=None) -> (B, T, D); equal to nn.MultiheadAttention, forward and backward."""
    __tracebackhide__ = True
    check_layer(cls)
    mistakes = [Mistake(m.hint, runner(m.fn)) for m in MULTI_HEAD_ATTENTION_MISTAKES]
    for case in cases(14):
        expected = torch_run(case)
        _expect(
            case.what,
            runner(cls),
            (case,),
            torch_run,
            mistakes,
            validate=lambda got, expected=expected, case=case: explain(got, expected, case),
        )
    _passed(
        N_(
            "multi-head attention: equals nn.MultiheadAttention, forward and backward, on self-, "
            "causal and cross-attention."
        )
    )
