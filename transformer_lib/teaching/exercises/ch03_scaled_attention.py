"""Notebook 03, attention: scaled dot-product attention (§3.2.1, equation 1), checked in
float32 and float16, with and without a mask, and for a query with nothing to attend to.

The expected answer is ``transformer_lib.model.attention.scaled_dot_product_attention``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import torch

from transformer_lib.i18n import N_, _
from transformer_lib.model.attention import scaled_dot_product_attention
from transformer_lib.teaching.exercises._compare import _diagnose, _expect, _tensor
from transformer_lib.teaching.exercises._core import (
    ExerciseFailed,
    Mistake,
    _call,
    _name,
    _passed,
    exercise,
)
from transformer_lib.teaching.exercises.ch03_attention import _MATMUL_HINTS, _attention_inputs, _raw

__all__ = ["check_scaled_dot_product_attention"]


def _attention(q, k, v, mask=None, scale=None, dim=-1, fill=float("-inf"), use="fill"):
    """Plain attention with one knob turned: the shared body of the mistakes below."""
    scores = _raw(q, k) / (math.sqrt(q.size(-1)) if scale is None else scale(q, k, v))
    if mask is not None and use == "fill":
        scores = scores.masked_fill(~mask, fill)  # (..., T, S)
    if mask is not None and use == "bias":  # tutorial style: bool * float is float32
        scores = scores + (~mask) * fill
    weights = torch.softmax(scores, dim=dim)
    if mask is not None and use == "after":
        weights = weights * mask
    return weights @ v, weights  # (..., T, S) @ (..., S, d_v) -> (..., T, d_v)


def _turned(hint: str, mask=lambda m: m, **knobs) -> Mistake:
    """A mistake that is plain attention with one knob turned; ``mask`` edits the mask."""
    return Mistake(
        hint,
        lambda q, k, v, m=None: _attention(q, k, v, None if m is None else mask(m), **knobs),
    )


ORDER_HINT = N_("return (output, weights) in this order; you returned the weights first.")
FILL_HINT = N_(
    "masked scores filled with a large finite number (-1e9, -1e10, torch.finfo(...).min) "
    "instead of -inf only look right: a query whose keys are all masked then gets uniform "
    "weights, averaging the padding, and in float16 masked_fill(..., -1e9) raises an overflow "
    "error. Fill with float('-inf'): exp gives exactly 0 in every dtype."
)
ATTENTION_MISTAKES = (
    _turned(
        N_(
            "you forgot to divide the scores by √d_k (§3.2.1): without it softmax saturates as d_k "
            "grows."
        ),
        scale=lambda q, k, v: 1.0,
    ),
    _turned(N_("divide the scores by √d_k, not by d_k."), scale=lambda q, k, v: q.size(-1)),
    _turned(
        N_("divide the scores by √d_k, don't multiply."), scale=lambda q, k, v: q.size(-1) ** -0.5
    ),
    _turned(
        N_("scale by √d_k with d_k = q.size(-1), not by v's width d_v."),
        scale=lambda q, k, v: v.size(-1) ** 0.5,
    ),
    _turned(
        N_("scale by √d_k with d_k = q.size(-1), not by the number of keys k.size(-2)."),
        scale=lambda q, k, v: k.size(-2) ** 0.5,
    ),
    _turned(
        N_(
            "softmax over the wrong axis: each query's weights over the keys must sum to 1, so use "
            "dim=-1 (you normalised over the queries, dim=-2)."
        ),
        dim=-2,
    ),
    _turned(
        N_(
            "your mask is inverted: True means 'may attend', so fill the scores where the mask is "
            "False: scores.masked_fill(~mask, float('-inf'))."
        ),
        mask=lambda m: ~m,
    ),
    _turned(
        N_(
            "you ignored the mask: fill the scores where mask is False with -inf before the softmax, "
            "and keep the result (masked_fill returns a new tensor: scores = scores.masked_fill(...))."
        ),
        mask=lambda m: None,
    ),
    _turned(
        N_(
            "apply the mask to the scores before the softmax; multiplying the weights afterwards "
            "leaves rows that no longer sum to 1."
        ),
        use="after",
    ),
    _turned(N_("masked scores must be -inf (so exp gives 0), not 0."), fill=0.0),
    _turned(FILL_HINT, fill=-1e9),
    _turned(
        N_(
            "a float32 'mask bias' (~mask) * -1e9 added to the scores turns float16 scores into "
            "float32 (and -1e9 does not exist in float16). Fill instead: "
            "scores.masked_fill(~mask, float('-inf')) keeps the scores' dtype."
        ),
        fill=-1e9,
        use="bias",
    ),
    _turned(
        N_(
            "the scale is a float32 tensor, torch.sqrt(torch.FloatTensor([d_k])): a tensor with "
            "an axis takes part in type promotion, so float16 scores divided by it become "
            "float32. Divide by a Python number: math.sqrt(d_k) or q.size(-1) ** 0.5."
        ),
        scale=lambda q, k, v: torch.sqrt(torch.FloatTensor([q.size(-1)])),  # (1,) float32
    ),
    Mistake(ORDER_HINT, lambda q, k, v, m=None: _attention(q, k, v, m)[::-1]),
    Mistake(
        N_("return a tuple (output, weights): the notebooks draw the weights."),
        lambda q, k, v, m=None: _attention(q, k, v, m)[0],
    ),
    Mistake(
        N_("the output is weights @ v: multiply the weights by the values v, not the keys k."),
        lambda q, k, v, m=None: _attention(q, k, k, m),
    ),
    Mistake(
        N_(
            "k.transpose(1, 2) only swaps the right axes of a 3-D (B, L, d) tensor; on "
            "(B, H, S, d_k) use k.transpose(-2, -1), the last two axes."
        ),
        lambda q, k, v, m=None: (q @ k.transpose(1, 2), None),  # crashes like the student's
    ),
)
PROMOTED = N_(
    "with float16 inputs a step of your code turned float32: a float32 tensor in it (a scale "
    "made with torch.FloatTensor or torch.tensor(...) without a dtype, a mask bias) promotes "
    "the float16 scores. Use Python numbers, such as math.sqrt(d_k), and tensors of q.dtype."
)
_FLOAT16_HINTS = _MATMUL_HINTS + tuple(
    (key, PROMOTED) for key in ("but found Half", "same dtype", "Half and Float", "Float and Half")
)
EMPTY_ROW = N_(
    "A query whose keys are all masked has nothing to attend to: the library gives it zero "
    "weights (a plain softmax of -inf gives NaN, also accepted), never weights on masked keys."
)


@exercise(scaled_dot_product_attention, ATTENTION_MISTAKES)
def check_scaled_dot_product_attention(fn: Callable) -> None:
    """fn(q, k, v, mask=None) -> (output (..., T, d_v), weights (..., T, S)).

    Also run in float16 and with a query that may attend to nothing (NaN accepted there).
    """
    __tracebackhide__ = True
    q, k, v, mask = _attention_inputs(5)
    empty = mask.clone()
    empty[0, 0, 1] = False  # query 1 of sentence 0 may attend to nothing
    cases = [
        (N_("without a mask"), (q, k, v)),
        (N_("with a mask"), (q, k, v, mask)),
        ("in float16", (q.half(), k.half(), v.half())),  # a float32 scale promotes even here
        ("in float16", (q.half(), k.half(), v.half(), mask)),  # masked_fill(-1e9) raises here
        (N_("with a fully masked query"), (q, k, v, empty)),  # -1e9 spreads weight on masked keys
    ]
    for when, args in cases:
        if args[0].dtype == torch.float16:
            _float16_case(fn, args)
            continue
        mistakes = [Mistake(m.hint, _nan_rows_as_zeros(m.fn, args)) for m in ATTENTION_MISTAKES]
        student, validate = _nan_rows_as_zeros(fn, args), _validator(when, fn, args)
        what = _("attention {when}").format(when=_(when))
        _expect(what, student, args, scaled_dot_product_attention, mistakes, validate)
    _passed(
        N_(
            "scaled dot-product attention: output and weights match, with and without a mask, "
            "in float16, and for a query with nothing to attend to."
        )
    )


def _nan_rows_as_zeros(fn: Callable, args: tuple) -> Callable:
    """``fn``, with NaN in the rows of queries that may attend to nothing read as zeros."""
    if len(args) < 4 or not callable(fn):
        return fn
    empty = ~args[3].any(dim=-1, keepdim=True)  # (..., T, 1)

    def zeroed(x):
        if isinstance(x, torch.Tensor) and x.shape[-2:-1] == empty.shape[-2:-1]:
            return x.masked_fill(empty & x.isnan(), 0.0)  # NaN rows, as a plain softmax gives
        return x

    @functools.wraps(fn)
    def accepted(*args):
        got = fn(*args)
        return type(got)(map(zeroed, got)) if isinstance(got, (tuple, list)) else got

    return accepted


def _pair(got, fn) -> tuple:
    __tracebackhide__ = True
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        kind = type(got).__name__
        message = _("{name} must return a tuple (output, weights); got {kind}.")
        raise ExerciseFailed(message.format(name=_name(fn), kind=kind))
    return tuple(got)


def _float16_case(fn: Callable, args: tuple) -> None:
    """float16 inputs: the library's answer to half precision."""
    __tracebackhide__ = True
    got = _pair(_call(fn, *args, hints=_FLOAT16_HINTS, mistakes=ATTENTION_MISTAKES), fn)
    names = (N_("the output in float16"), N_("the weights in float16"))
    for what, value, expected in zip(names, got, scaled_dot_product_attention(*args)):
        if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
            raise ExerciseFailed(_("{what}: {hint}").format(what=_(what), hint=_(PROMOTED)))
        value = _tensor(value, what, expected.shape, "like q", torch.float16)
        if not torch.allclose(value.float(), expected.float(), rtol=1e-2, atol=2e-3):
            raise ExerciseFailed(
                _(
                    "{what} differ from the library's (right in float32): keep every step in "
                    "the inputs' dtype, with no float32 constants or masks added to the scores."
                ).format(what=_(what))
            )


def _validator(when: str, fn: Callable, args: tuple) -> Callable:
    """Name what is wrong when no known mistake matches: order, shapes, weights, output."""

    def validate(got) -> None:
        __tracebackhide__ = True
        expected_out, expected = scaled_dot_product_attention(*args)
        out, weights = _pair(got, fn)
        if isinstance(out, torch.Tensor) and out.shape == expected.shape:
            raise ExerciseFailed(_(ORDER_HINT))
        transposed = {(2, 3, 5, 4): N_("Queries are rows, keys columns: q @ k.transpose(-2, -1).")}
        weights_what = _("the weights ({when})").format(when=_(when))
        weights = _tensor(weights, weights_what, expected.shape, "(B, H, T, S)",
                          shape_hints=transposed)  # fmt: skip
        mask = args[3] if len(args) > 3 else torch.ones((), dtype=torch.bool)
        empty = ~mask.any(dim=-1)  # (..., T): rows with nothing to attend to
        if not (((weights.nan_to_num().sum(-1) - 1).abs() < 1e-4) | empty).all():
            hint = N_("Each query row must sum to 1 over the keys: softmax(scores, dim=-1).")
        elif (weights.masked_select(~mask.expand_as(weights)).nan_to_num() != 0).any():
            hint = N_("Blocked keys (mask False) must get weight 0: fill their scores with -inf.")
        else:
            scale = N_("Check the scale: divide by √d_k = √q.size(-1).")
            hint = EMPTY_ROW if empty.any() else scale
        _diagnose(weights_what, weights, expected, fallback=hint)
        out_what = _("the output ({when})").format(when=_(when))
        wrong_width = {(2, 3, 4, 8): N_("Multiply the weights by v: d_v = v.size(-1).")}
        out = _tensor(out, out_what, expected_out.shape, "(B, H, T, d_v)", shape_hints=wrong_width)
        hint = N_("The weights are right; the output is weights @ v.")
        _diagnose(out_what, out, expected_out, fallback=hint)
        message = _("return a tuple (output, weights), not a {kind}.")
        raise ExerciseFailed(message.format(kind=type(got).__name__))

    return validate
