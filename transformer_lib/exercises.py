"""Exercises that check themselves.

Each ``check_*`` calls the student's function on seeded random CPU inputs (its own
``torch.Generator``: the global seed is neither used nor changed), compares the result
with the library / PyTorch reference, prints a short "✓ ..." line when right, and
raises :class:`ExerciseFailed` (an ``AssertionError``) with a specific hint when wrong.
Usual mistakes are recognised by comparing with deliberately wrong versions
(``_exercise_mistakes``). A stub that raises ``NotImplementedError`` gives
"... is not implemented yet"; any other exception from the student's function becomes a
short "... raised X: message", never a traceback from inside the library.

Notebook convention: a solution always lives inside a function body, between
``### BEGIN SOLUTION`` and ``### END SOLUTION``; ``make student`` replaces it with
``raise NotImplementedError(...)``, and the check after it then says "not implemented yet".

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

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from transformer_lib import _exercise_mistakes as mistakes
from transformer_lib.attention import scaled_dot_product_attention
from transformer_lib.embeddings import sinusoidal_positional_encoding

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

RTOL, ATOL = 1e-4, 1e-5
SHAPE_HINT = "Hint: print the shapes of the tensors you combine."
TRANSPOSE_HINT = (
    "Hint: after .transpose() a tensor is not contiguous; use .reshape(...) or "
    ".contiguous().view(...)."
)


class ExerciseFailed(AssertionError):
    """A check found a mistake; the message says which and how to fix it."""

    def _render_traceback_(self) -> list[str]:
        # Jupyter calls this instead of printing a traceback: the student sees one message.
        return [f"\x1b[1;31mExerciseFailed\x1b[0m: {self}"]


# -- the machinery shared by every check ---------------------------------------------------


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _name(fn) -> str:
    name = getattr(fn, "__name__", "")
    return f"`{name}`" if name and name != "<lambda>" else "your function"


def _call(fn: Callable, *args, hints: tuple[tuple[str, str], ...] = ()):
    """Call the student's function on copies of the inputs; its errors become short messages."""
    __tracebackhide__ = True
    if not callable(fn):
        raise ExerciseFailed(
            f"pass your function itself, e.g. check(my_function), not the "
            f"result of calling it; got {type(fn).__name__}."
        )
    args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
    try:
        return fn(*args)
    except NotImplementedError:
        raise ExerciseFailed(
            f"{_name(fn)} is not implemented yet: replace the "
            "`raise NotImplementedError(...)` line with your solution and run "
            "the cell again."
        ) from None
    except Exception as error:  # any bug in the student's code, reported briefly
        text = str(error)
        extra = next((hint for key, hint in hints if key in text), "")
        if not extra and "view size is not compatible" in text:
            extra = TRANSPOSE_HINT
        raise ExerciseFailed(
            f"{_name(fn)} raised {type(error).__name__}: {text} {extra}".strip()
        ) from None


def _tensor(
    got,
    what: str,
    shape: tuple[int, ...],
    letters: str,
    dtype: torch.dtype | None = torch.float32,
    shape_hints: dict | None = None,
) -> torch.Tensor:
    """Check the type, shape and dtype of a result; return it detached on the CPU."""
    __tracebackhide__ = True
    expected = f"{letters}={tuple(shape)}"
    if not isinstance(got, torch.Tensor):
        raise ExerciseFailed(
            f"{what} must be a torch.Tensor of shape {expected}; got {type(got).__name__}."
        )
    if tuple(got.shape) != tuple(shape):
        hint = (shape_hints or {}).get(tuple(got.shape), SHAPE_HINT)
        raise ExerciseFailed(
            f"wrong shape: {what} must be {expected}; got {tuple(got.shape)}. {hint}"
        )
    if dtype is not None and got.dtype != dtype:
        raise ExerciseFailed(f"wrong dtype: {what} must be {dtype}; got {got.dtype}.")
    return got.detach().cpu()


def _same(got: torch.Tensor, expected: torch.Tensor) -> bool:
    if got.shape != expected.shape:
        return False
    if got.dtype == torch.bool or expected.dtype == torch.bool:
        return torch.equal(got.bool(), expected.bool())
    return torch.allclose(got.double(), expected.double(), rtol=RTOL, atol=ATOL, equal_nan=True)


def _diagnose(
    what: str,
    got: torch.Tensor,
    expected: torch.Tensor,
    wrong: Callable[[], list[tuple[str, torch.Tensor]]] | None = None,
    fallback: str = "",
) -> None:
    """Pass if ``got`` matches; else name the first known mistake it matches.

    ``wrong`` builds the (hint, wrong value) pairs only when needed: right answers stay fast.
    """
    __tracebackhide__ = True
    if _same(got, expected):
        return
    for hint, wrong_value in wrong() if wrong else []:
        if _same(got, wrong_value.detach()):
            raise ExerciseFailed(f"{what}: {hint}")
    if torch.isnan(got.double()).any() and not torch.isnan(expected.double()).any():
        raise ExerciseFailed(f"{what} contains NaN. {fallback}".strip())
    diff = (got.double() - expected.double()).abs().nan_to_num(float("inf"))
    index = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    raise ExerciseFailed(
        f"{what} differs from the reference: at index {index} you have "
        f"{got[index].item():.4g}, expected {expected[index].item():.4g}. "
        f"{fallback}".strip()
    )


def _passed(message: str) -> None:
    print(f"✓ {message}")


# -- 01 embeddings -------------------------------------------------------------------------

_ONE_HOT_HINTS = (
    (
        "shapes cannot be multiplied",
        "Hint: F.one_hot(ids) without num_classes only makes "
        "max(ids) + 1 columns; pass num_classes=weight.size(0).",
    ),
    (
        "dtype",
        "Hint: F.one_hot returns int64; convert with .float() before multiplying by the weight.",
    ),
    ("expected scalar type", "Hint: F.one_hot returns int64; convert with .float()."),
)


def _embedding_inputs(seed: int, V: int, D: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = _generator(seed)
    ids = torch.randint(0, V - 1, (2, 5), generator=g)  # never V - 1: one_hot needs num_classes
    return ids, torch.randn(V, D, generator=g)


def check_embedding_lookup(fn: Callable) -> None:
    """fn(ids (B, L) int64, weight (V, D)) -> (B, L, D): row ids[b, l] of weight."""
    __tracebackhide__ = True
    ids, weight = _embedding_inputs(1, V=11, D=6)
    got = _tensor(
        _call(fn, ids, weight, hints=_ONE_HOT_HINTS),
        "the embeddings",
        (2, 5, 6),
        "(B, L, D)",
        shape_hints={
            (2, 5, 11): "That is the one-hot matrix (B, L, V): multiply it by the weight (V, D)."
        },
    )
    expected = weight[ids]  # (B, L) -> (B, L, D)
    _diagnose(
        "the embeddings",
        got,
        expected,
        lambda: [
            (
                "this exercise is the plain lookup; the √d_model scaling comes next.",
                expected * math.sqrt(6),
            )
        ],
        "Row ids[b, l] of weight goes to out[b, l].",
    )
    _passed("embedding lookup: equals weight[ids] (one-hot × matrix selects rows).")


def check_scaled_embedding(fn: Callable) -> None:
    """fn(ids (B, L) int64, weight (V, D)) -> weight[ids] * √D   (§3.4)."""
    __tracebackhide__ = True
    ids, weight = _embedding_inputs(2, V=9, D=16)
    got = _tensor(
        _call(fn, ids, weight, hints=_ONE_HOT_HINTS),
        "the scaled embeddings",
        (2, 5, 16),
        "(B, L, D)",
    )
    _diagnose(
        "the scaled embeddings",
        got,
        weight[ids] * 4.0,
        partial(mistakes.scaled_embedding, ids, weight),
    )
    _passed("scaled embedding: weight[ids] × √d_model.")


# -- 02 positional encoding ----------------------------------------------------------------


def check_positional_encoding(fn: Callable) -> None:
    """fn(max_len, d_model) -> (max_len, d_model) float32: sin on even, cos on odd columns."""
    __tracebackhide__ = True
    for max_len, d_model in ((50, 16), (7, 4)):
        got = _tensor(
            _call(fn, max_len, d_model),
            "the table",
            (max_len, d_model),
            "(max_len, d_model)",
            shape_hints={(d_model, max_len): "It looks transposed: one row per position."},
        )
        _diagnose(
            "the table",
            got,
            sinusoidal_positional_encoding(max_len, d_model),
            partial(mistakes.positional_encoding, max_len, d_model),
            "PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(...).",
        )
    _passed("positional encoding: matches the paper's table (§3.5).")


def check_pe_relative_shift(fn: Callable) -> None:
    """fn(offset, d_model) -> M (d_model, d_model) with PE[pos + offset] == M @ PE[pos]."""
    __tracebackhide__ = True
    for offset, d_model in ((3, 8), (1, 4)):
        got = _tensor(
            _call(fn, offset, d_model), "the matrix", (d_model, d_model), "(d_model, d_model)"
        )
        expected = mistakes.pe_rotation(offset, d_model, 1.0)
        _diagnose(
            "the matrix",
            got,
            expected,
            partial(mistakes.pe_shift, offset, d_model),
            "Each (sin, cos) pair rotates by offset·ω_i: sin(a + b) = sin a cos b + "
            "cos a sin b, cos(a + b) = cos a cos b - sin a sin b.",
        )
    _passed("relative shift: PE(pos + k) is a fixed rotation of PE(pos).")


# -- 03 attention --------------------------------------------------------------------------


def check_softmax(fn: Callable) -> None:
    """fn(x, dim) -> softmax of x along dim; stable for large inputs."""
    __tracebackhide__ = True
    g = _generator(3)
    x3, square = torch.randn(3, 4, 5, generator=g) * 3, torch.randn(4, 4, generator=g) * 3
    cases = [(x3, -1), (x3, 1), (x3, 0), (square, -1)]
    hints = (("must match the size", "Hint: sum with keepdim=True so it broadcasts back."),)
    for x, dim in cases:
        got = _tensor(
            _call(fn, x, dim, hints=hints), f"softmax(x, dim={dim})", tuple(x.shape), "x.shape"
        )
        _diagnose(
            f"softmax(x, dim={dim})", got, torch.softmax(x, dim), partial(mistakes.softmax, x, dim)
        )
    big = torch.randn(4, 6, generator=g) * 1000
    got = _tensor(_call(fn, big, -1), "softmax of large values", (4, 6), "x.shape")
    if not torch.isfinite(got).all():
        raise ExerciseFailed(
            "softmax of large values gives NaN or inf: exp overflows. Subtract "
            "the max along dim first, x - x.max(dim, keepdim=True).values; "
            "the result does not change."
        )
    _diagnose("softmax of large values", got, torch.softmax(big, -1))
    _passed("softmax: right along any dim, and stable for large inputs.")


_MATMUL_HINTS = tuple(
    (key, "Hint: scores = q @ k.transpose(-2, -1): (..., T, d_k) @ (..., d_k, S) -> (..., T, S).")
    for key in ("batch2", "cannot be multiplied", "must match the size")
)


def _attention_inputs(seed: int):
    g = _generator(seed)
    q = torch.randn(2, 3, 4, 8, generator=g)  # (B, H, T, d_k)
    k = torch.randn(2, 3, 5, 8, generator=g)  # (B, H, S, d_k)
    v = torch.randn(2, 3, 5, 6, generator=g)  # (B, H, S, d_v)
    mask = torch.rand(2, 1, 4, 5, generator=g) < 0.6  # (B, 1, T, S)
    mask[..., 0], mask[..., -1] = True, False  # no row fully blocked, even when inverted
    return q, k, v, mask


def check_attention_scores(fn: Callable) -> None:
    """fn(q (..., T, d_k), k (..., S, d_k)) -> scores q kᵀ / √d_k of shape (..., T, S)."""
    __tracebackhide__ = True
    q, k, _, _ = _attention_inputs(4)
    got = _tensor(_call(fn, q, k, hints=_MATMUL_HINTS), "the scores", (2, 3, 4, 5), "(B, H, T, S)")
    _diagnose(
        "the scores",
        got,
        q @ k.transpose(-2, -1) / math.sqrt(8),
        partial(mistakes.attention_scores, q, k),
    )
    _passed("attention scores: q kᵀ / √d_k.")


def _pair(got, fn) -> tuple:
    __tracebackhide__ = True
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise ExerciseFailed(
            f"{_name(fn)} must return a tuple (output, weights); got {type(got).__name__}."
        )
    return tuple(got)


def check_scaled_dot_product_attention(fn: Callable) -> None:
    """fn(q, k, v, mask=None) -> (output (..., T, d_v), weights (..., T, S))."""
    __tracebackhide__ = True
    q, k, v, mask = _attention_inputs(5)
    for m in (None, mask):
        out, weights = _pair(
            _call(fn, q, k, v, hints=_MATMUL_HINTS)
            if m is None
            else _call(fn, q, k, v, m, hints=_MATMUL_HINTS),
            fn,
        )
        if isinstance(out, torch.Tensor) and tuple(out.shape) == (2, 3, 4, 5):
            raise ExerciseFailed(
                "return (output, weights) in this order; you returned the weights first."
            )
        when = "without a mask" if m is None else "with a mask"
        weights = _tensor(
            weights,
            f"the weights ({when})",
            (2, 3, 4, 5),
            "(B, H, T, S)",
            shape_hints={
                (2, 3, 5, 4): "Queries are rows and keys columns: scores = q @ k.transpose(-2, -1)."
            },
        )
        expected_out, expected_weights = scaled_dot_product_attention(q, k, v, m)
        _diagnose(
            f"the weights ({when})",
            weights,
            expected_weights,
            partial(mistakes.attention_weights, q, k, v, m),
            _weights_property(weights, m),
        )
        out = _tensor(
            out,
            f"the output ({when})",
            (2, 3, 4, 6),
            "(B, H, T, d_v)",
            shape_hints={
                (2, 3, 4, 8): "The output's last dimension is d_v = "
                "v.size(-1): multiply the weights by v."
            },
        )
        _diagnose(
            f"the output ({when})",
            out,
            expected_out,
            fallback="The weights are right; the output is weights @ v.",
        )
    _passed("scaled dot-product attention: output and weights match, with and without a mask.")


def _weights_property(weights: torch.Tensor, mask: torch.Tensor | None) -> str:
    """A hint from what the weights look like, when no single known mistake matches."""
    if not torch.allclose(weights.sum(-1), torch.ones(()), atol=1e-4):
        return "Each query row must sum to 1 over the keys: softmax(scores, dim=-1)."
    if mask is not None and (weights.masked_select(~mask.expand_as(weights)) != 0).any():
        return "Blocked keys (mask False) must get weight 0: fill their scores with -inf."
    return "Check the scale: scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))."


# -- 04 masking ----------------------------------------------------------------------------


def _bool_mask(
    got,
    what: str,
    expected: torch.Tensor,
    shapes: tuple,
    letters: str,
    shape_hints: dict | None = None,
) -> torch.Tensor:
    """Accept any of ``shapes``; name a float or additive mask; return a bool tensor."""
    __tracebackhide__ = True
    if isinstance(got, torch.Tensor) and tuple(got.shape) in shapes[1:]:
        got = got.reshape(shapes[0])
    got = _tensor(got, what, shapes[0], letters, dtype=None, shape_hints=shape_hints)
    if got.dtype != torch.bool:
        if _same(got, expected.float()):
            raise ExerciseFailed(
                f"{what}: the pattern is right but the dtype is {got.dtype}; "
                "masks are torch.bool (use .bool() or dtype=torch.bool)."
            )
        if torch.isinf(got.double()).any():
            raise ExerciseFailed(
                f"{what}: that is an additive float mask (0 / -inf, the "
                "nn.Transformer convention); here masks are torch.bool, "
                "True = may attend."
            )
        raise ExerciseFailed(f"wrong dtype: {what} must be torch.bool; got {got.dtype}.")
    return got


def check_causal_mask(fn: Callable) -> None:
    """fn(T) -> bool mask (T, T) or (1, 1, T, T), True where query t may see key s (s <= t)."""
    __tracebackhide__ = True
    for size in (5, 1):
        expected = torch.tril(torch.ones(size, size, dtype=torch.bool))
        shapes = ((size, size), (1, size, size), (1, 1, size, size))
        got = _bool_mask(_call(fn, size), f"causal_mask({size})", expected, shapes, "(T, T)")
        _diagnose(f"causal_mask({size})", got, expected, partial(mistakes.causal_mask, size))
    _passed("causal mask: each position sees itself and the past, never the future.")


def _padded_tokens(seed: int, pad_id: int = 0) -> torch.Tensor:
    """(3, 6) ids with rows of length 3, 5 and 6; id 0 is a real token when pad_id != 0."""
    g = _generator(seed)
    tokens = torch.randint(4, 20, (3, 6), generator=g)
    tokens[0, 3:], tokens[1, 5:] = pad_id, pad_id
    if pad_id:
        tokens[2, 0] = 0
    return tokens


def check_padding_mask(fn: Callable) -> None:
    """fn(tokens (B, S), pad_id) -> bool (B, 1, 1, S), True at real (non-pad) tokens."""
    __tracebackhide__ = True
    missing_axes = "Add the head and query axes: mask[:, None, None, :] -> (B, 1, 1, S)."
    keys_last = "Padding masks keys: the S axis goes last, (B, 1, 1, S)."
    shape_hints = {
        (3, 6): missing_axes,
        (3, 1, 6): missing_axes,
        (3, 6, 1, 1): keys_last,
        (3, 1, 6, 1): keys_last,
    }
    for pad_id in (0, 3):
        tokens = _padded_tokens(6, pad_id)
        expected = (tokens != pad_id)[:, None, None, :]  # (B, S) -> (B, 1, 1, S)
        what = f"padding_mask(tokens, pad_id={pad_id})"
        got = _bool_mask(
            _call(fn, tokens, pad_id), what, expected, ((3, 1, 1, 6),), "(B, 1, 1, S)", shape_hints
        )
        _diagnose(what, got, expected, partial(mistakes.padding_mask, tokens, pad_id))
    _passed("padding mask: real tokens True, <pad> False, shaped (B, 1, 1, S).")


def check_target_mask(fn: Callable) -> None:
    """fn(tgt (B, T), pad_id) -> bool (B, 1, T, T): causal AND not padding (keys)."""
    __tracebackhide__ = True
    tgt = _padded_tokens(7)
    causal = torch.tril(torch.ones(6, 6, dtype=torch.bool))[None, None]  # (1, 1, T, T)
    expected = (tgt != 0)[:, None, None, :] & causal  # (B, 1, 1, T) & (1, 1, T, T)
    shape_hints = {
        (1, 1, 6, 6): "That is the causal mask alone; combine it with the padding mask "
        "(B, 1, 1, T) using & -> (B, 1, T, T).",
        (3, 1, 1, 6): "That is the padding mask alone; combine it with the causal mask "
        "(1, 1, T, T) using & -> (B, 1, T, T).",
        (3, 6, 6): "Keep the head axis: (B, 1, T, T).",
    }
    got = _bool_mask(
        _call(fn, tgt, 0),
        "target_mask(tgt, 0)",
        expected,
        ((3, 1, 6, 6),),
        "(B, 1, T, T)",
        shape_hints,
    )
    _diagnose("target_mask(tgt, 0)", got, expected, partial(mistakes.target_mask, tgt, 0))
    _passed("target mask: causal AND padding, shaped (B, 1, T, T).")


# -- 05 multi-head attention ---------------------------------------------------------------


def check_split_heads(fn: Callable) -> None:
    """fn(x (B, L, D), n_heads) -> (B, H, L, Dh) with Dh = D / H."""
    __tracebackhide__ = True
    x = torch.randn(2, 5, 12, generator=_generator(8))
    for n_heads in (3, 4):
        Dh = 12 // n_heads
        got = _tensor(
            _call(fn, x, n_heads),
            f"split_heads(x, n_heads={n_heads})",
            (2, n_heads, 5, Dh),
            "(B, H, L, Dh)",
            shape_hints={
                (2, 5, n_heads, Dh): "You forgot .transpose(1, 2): (B, L, H, Dh) -> (B, H, L, Dh)."
            },
        )
        expected = x.view(2, 5, n_heads, Dh).transpose(1, 2)  # (B, L, H, Dh) -> (B, H, L, Dh)
        _diagnose(
            f"split_heads(x, n_heads={n_heads})",
            got,
            expected,
            partial(mistakes.split_heads, x, n_heads),
        )
    _passed("split heads: x.view(B, L, H, Dh).transpose(1, 2).")


def check_merge_heads(fn: Callable) -> None:
    """fn(x (B, H, L, Dh)) -> (B, L, D) with D = H * Dh: the inverse of split_heads."""
    __tracebackhide__ = True
    x = torch.randn(2, 3, 5, 4, generator=_generator(9))
    got = _tensor(
        _call(fn, x, hints=(("view size", TRANSPOSE_HINT),)),
        "merge_heads(x)",
        (2, 5, 12),
        "(B, L, D)",
        shape_hints={(2, 5, 3, 4): "Now reshape (B, L, H, Dh) to (B, L, H * Dh)."},
    )
    expected = x.transpose(1, 2).reshape(2, 5, 12)  # (B, H, L, Dh) -> (B, L, D)
    _diagnose("merge_heads(x)", got, expected, partial(mistakes.merge_heads, x))
    _passed("merge heads: x.transpose(1, 2).reshape(B, L, D).")


def check_mha_parameter_count(fn: Callable) -> None:
    """fn(d_model, n_heads) -> int: parameters of MultiHeadAttention with biases."""
    __tracebackhide__ = True
    for d_model, n_heads in ((512, 8), (128, 4)):
        got = _call(fn, d_model, n_heads)
        if isinstance(got, torch.Tensor) and got.numel() == 1:
            got = got.item()
        if not isinstance(got, numbers.Integral) or isinstance(got, bool):
            raise ExerciseFailed(f"return an int; got {type(got).__name__} {got!r}.")
        expected = 4 * (d_model * d_model + d_model)
        if got != expected:
            hint = next(
                (h for h, n in mistakes.mha_parameter_count(d_model, n_heads) if n == got),
                "Count weights and biases of W^Q, W^K, W^V and W^O.",
            )
            raise ExerciseFailed(
                f"for d_model={d_model}, n_heads={n_heads} you counted {got:,}"
                f"; expected {expected:,}. {hint}"
            )
    _passed("parameter count: 4 (D² + D), whatever the number of heads.")


# -- 06 encoder and decoder ----------------------------------------------------------------


def check_layer_norm(fn: Callable) -> None:
    """fn(x (..., D), gamma (D,), beta (D,), eps=1e-5) -> same as nn.LayerNorm over D."""
    __tracebackhide__ = True
    g = _generator(10)
    # rows of very different scales: tiny rows make the place of eps visible
    x = torch.randn(2, 4, 8, generator=g) * torch.tensor([3.0, 1.0, 0.01, 0.003])[:, None]
    gamma, beta = torch.randn(8, generator=g), torch.randn(8, generator=g)
    hints = (("must match the size", "Hint: use keepdim=True in mean and var."),)
    for eps in (1e-5, 0.1):
        what = f"layer_norm(x, gamma, beta, eps={eps})"
        got = _tensor(_call(fn, x, gamma, beta, eps, hints=hints), what, (2, 4, 8), "x.shape")
        _diagnose(
            what,
            got,
            F.layer_norm(x, (8,), gamma, beta, eps),
            partial(mistakes.layer_norm, x, gamma, beta, eps),
            "y = (x - mean) / sqrt(var + eps) * gamma + beta over the last dimension.",
        )
    _passed("layer norm: equals nn.LayerNorm (biased variance, eps inside the root).")


def check_feed_forward(fn: Callable) -> None:
    """fn(x (B, L, D), w1 (d_ff, D), b1 (d_ff,), w2 (D, d_ff), b2 (D,)) -> (B, L, D)."""
    __tracebackhide__ = True
    g = _generator(11)
    x = torch.randn(2, 3, 8, generator=g)
    w1, b1 = torch.randn(16, 8, generator=g), torch.randn(16, generator=g)
    w2, b2 = torch.randn(8, 16, generator=g), torch.randn(8, generator=g)
    hints = (
        (
            "cannot be multiplied",
            "Hint: nn.Linear stores weight as (out_features, "
            "in_features): use x @ w1.T + b1, or F.linear(x, w1, b1).",
        ),
    )
    got = _tensor(_call(fn, x, w1, b1, w2, b2, hints=hints), "the output", (2, 3, 8), "(B, L, D)")
    expected = F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)
    _diagnose(
        "the output",
        got,
        expected,
        partial(mistakes.feed_forward, x, w1, b1, w2, b2),
        "FFN(x) = max(0, x W1ᵀ + b1) W2ᵀ + b2 with nn.Linear's weight layout.",
    )
    _passed("feed-forward: max(0, x W1 + b1) W2 + b2 (§3.3).")


def _residual_inputs(seed: int):
    g = _generator(seed)
    x = torch.randn(2, 3, 8, generator=g) * 2 + 1
    w, b = torch.randn(8, 8, generator=g) / 3, torch.randn(8, generator=g)
    gamma, beta = torch.rand(8, generator=g) + 0.5, torch.randn(8, generator=g)

    def sublayer(h: torch.Tensor) -> torch.Tensor:
        return F.linear(h, w, b)

    def norm(h: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(h, (8,), gamma, beta)

    return x, sublayer, norm


def check_residual_post_norm(fn: Callable) -> None:
    """fn(x (B, L, D), sublayer, norm) -> norm(x + sublayer(x)), the paper's order (§3.1)."""
    __tracebackhide__ = True
    x, sublayer, norm = _residual_inputs(12)
    got = _tensor(_call(fn, x, sublayer, norm), "the output", (2, 3, 8), "(B, L, D)")
    _diagnose(
        "the output",
        got,
        norm(x + sublayer(x)),
        partial(mistakes.residual_post_norm, x, sublayer, norm),
    )
    _passed("post-norm residual: LayerNorm(x + Sublayer(x)).")


def check_residual_pre_norm(fn: Callable) -> None:
    """fn(x (B, L, D), sublayer, norm) -> x + sublayer(norm(x))."""
    __tracebackhide__ = True
    x, sublayer, norm = _residual_inputs(13)
    got = _tensor(_call(fn, x, sublayer, norm), "the output", (2, 3, 8), "(B, L, D)")
    _diagnose(
        "the output",
        got,
        x + sublayer(norm(x)),
        partial(mistakes.residual_pre_norm, x, sublayer, norm),
    )
    _passed("pre-norm residual: x + Sublayer(LayerNorm(x)).")
