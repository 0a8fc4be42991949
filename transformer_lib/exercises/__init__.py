"""Exercises that check themselves.

Each ``check_*`` calls the student's function on seeded random CPU inputs (its own
``torch.Generator``: the global seed is neither used nor changed), compares the result
with the library / PyTorch reference, prints a short "✓ ..." line when right, and
raises :class:`ExerciseFailed` (an ``AssertionError``) with a specific hint when wrong.
Usual mistakes are recognised by comparing with deliberately wrong versions: each
check's catalogue, a ``*_mistakes`` function beside it in its chapter module, takes the
check's inputs and returns ``(hint, wrong output)`` pairs; when the student's answer
equals a wrong output, the check shows that hint. These are the mistakes well-known
tutorial code makes; keep the hints short and say the fix. A stub that raises
``NotImplementedError`` gives "... is not implemented yet"; any other exception from the
student's function becomes a short "... raised X: message", never a traceback from inside
the library.

Notebook convention: a solution always lives inside a function body, between
``### BEGIN SOLUTION`` and ``### END SOLUTION``; ``make student`` replaces it with
``raise NotImplementedError(...)``, and the check after it then says "not implemented yet".

Layout: one module per notebook (``ch01_embeddings`` ... ``ch06_encoder_decoder``), each
check beside its catalogue; ``_core`` holds what they share (calling the student's
function, checking a result's type and shape, naming a mistake).

The checks, with the signature of the function they take (masks: bool, True = may attend):

01 embeddings
    check_embedding_lookup(fn)      fn(ids (B, L) int64, weight (V, D)) -> (B, L, D), e.g.
                                    one_hot(ids, V).float() @ weight or weight[ids].
                                    Names: scaled by √D too early, one_hot without num_classes
                                    or left as int64, wrong shape/dtype.
    check_scaled_embedding(fn)      fn(ids, weight) -> weight[ids] * √D   (§3.4).
                                    Names: no scaling, divided, × D, √V or √L instead of √D.
02 positional encoding
    check_positional_encoding(fn)   fn(max_len, d_model) -> (max_len, d_model) float32, paper
                                    layout (sin even columns, cos odd).  Names: sin/cos swapped,
                                    concatenated layout, exponent i instead of 2i, one frequency
                                    per column, multiplied by 10000^(2i/d), positions from 1,
                                    transposed, float64.
    check_pe_relative_shift(fn)     fn(offset, d_model) -> M (d_model, d_model) with
                                    PE[pos + offset] == M @ PE[pos] for every pos (a rotation
                                    per (sin, cos) pair).  Names: backwards shift (transposed
                                    blocks), cos-only diagonal.
03 attention
    check_softmax(fn)               fn(x, dim) -> softmax of x along dim, stable for large x.
                                    Names: wrong/ignored dim, missing keepdim, sum over all
                                    entries, overflow (no max subtraction).
    check_attention_scores(fn)      fn(q (..., T, d_k), k (..., S, d_k)) -> q kᵀ / √d_k (..., T, S).
                                    Names: no scaling, / d_k, × √d_k, √length.
    check_scaled_dot_product_attention(fn)
                                    fn(q, k, v, mask=None) -> (output (..., T, d_v),
                                    weights (..., T, S)); mask broadcastable to (..., T, S).
                                    Names: forgotten √d_k, / d_k, × √d_k, √d_v, softmax over the
                                    query axis, inverted or ignored mask, mask applied after
                                    softmax, masked scores 0 instead of -inf, swapped return
                                    order, k used instead of v.
04 masking
    check_causal_mask(fn)           fn(T) -> bool (T, T) or (1, 1, T, T), True = may attend.
                                    Names: inverted, diagonal excluded, upper triangle, nothing
                                    masked, float or additive (0/-inf) masks.
    check_padding_mask(fn)          fn(tokens (B, S), pad_id) -> bool (B, 1, 1, S).
                                    Names: inverted, hard-coded pad 0, missing axes (B, S),
                                    queries masked instead of keys.
    check_target_mask(fn)           fn(tgt (B, T), pad_id) -> bool (B, 1, T, T) = causal AND
                                    padding.  Names: causal only, padding only, OR instead of
                                    AND, padded query rows masked.
05 multi-head attention
    check_split_heads(fn)           fn(x (B, L, D), n_heads) -> (B, H, L, Dh).  Names: view(B, H,
                                    L, Dh) without transpose, (Dh, H) order, forgotten transpose.
    check_merge_heads(fn)           fn(x (B, H, L, Dh)) -> (B, L, D).  Names: reshape without
                                    transpose, (Dh, H) order, .view on a non-contiguous tensor.
    check_mha_parameter_count(fn)   fn(d_model, n_heads) -> int, parameters of multi-head
                                    attention with biases.  Names: no biases, no W^O, × n_heads.
06 encoder and decoder
    check_layer_norm(fn)            fn(x (..., D), gamma (D,), beta (D,), eps=1e-5) -> like
                                    nn.LayerNorm.  Names: unbiased variance, std + eps, both,
                                    batch axis, no gamma/beta, eps ignored.
    check_feed_forward(fn)          fn(x (B, L, D), w1 (d_ff, D), b1, w2 (D, d_ff), b2) -> (B, L, D),
                                    weights in nn.Linear layout.  Names: no ReLU, ReLU at the end,
                                    GELU, weights not transposed.
    check_residual_post_norm(fn)    fn(x, sublayer, norm) -> norm(x + sublayer(x))   (§3.1).
    check_residual_pre_norm(fn)     fn(x, sublayer, norm) -> x + sublayer(norm(x)).
                                    Both name the other placement, a missing residual, a
                                    missing or misplaced norm.
"""

from transformer_lib.exercises._core import ExerciseFailed
from transformer_lib.exercises.ch01_embeddings import (
    check_embedding_lookup,
    check_scaled_embedding,
)
from transformer_lib.exercises.ch02_positional_encoding import (
    check_pe_relative_shift,
    check_positional_encoding,
)
from transformer_lib.exercises.ch03_attention import (
    check_attention_scores,
    check_scaled_dot_product_attention,
    check_softmax,
)
from transformer_lib.exercises.ch04_masking import (
    check_causal_mask,
    check_padding_mask,
    check_target_mask,
)
from transformer_lib.exercises.ch05_multi_head_attention import (
    check_merge_heads,
    check_mha_parameter_count,
    check_split_heads,
)
from transformer_lib.exercises.ch06_encoder_decoder import (
    check_feed_forward,
    check_layer_norm,
    check_residual_post_norm,
    check_residual_pre_norm,
)

__all__ = [
    "ExerciseFailed",
    "check_embedding_lookup",
    "check_scaled_embedding",
    "check_positional_encoding",
    "check_pe_relative_shift",
    "check_softmax",
    "check_attention_scores",
    "check_scaled_dot_product_attention",
    "check_causal_mask",
    "check_padding_mask",
    "check_target_mask",
    "check_split_heads",
    "check_merge_heads",
    "check_mha_parameter_count",
    "check_layer_norm",
    "check_feed_forward",
    "check_residual_post_norm",
    "check_residual_pre_norm",
]
