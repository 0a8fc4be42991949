"""Notebook 06, the residual connection around each sub-layer, post-norm (§3.1) or pre-norm,
with dropout on the sub-layer's output (§5.4).

The checks run in training mode with a dropout they pass in, so that dropout in the wrong
place (after the norm, on the residual path) changes the result as it does in training.
Every call runs under the same RNG seed, so the right answer drops the same entries as the
library's :func:`~transformer_lib.model.layers.sublayer_connection`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn

from transformer_lib.i18n import N_, _
from transformer_lib.model.layers import sublayer_connection
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import Mistake, _generator, _passed, exercise

__all__ = ["check_residual_post_norm", "check_residual_pre_norm"]

P_DROP = 0.25  # large enough that a 2 x 3 x 8 batch always loses some entries


def _post_norm(x, sublayer, norm, dropout) -> torch.Tensor:
    """The library's post-norm connection: LayerNorm(x + Dropout(Sublayer(x)))."""
    return sublayer_connection(x, sublayer, norm, dropout, norm_first=False)


def _pre_norm(x, sublayer, norm, dropout) -> torch.Tensor:
    """The library's pre-norm connection: x + Dropout(Sublayer(LayerNorm(x)))."""
    return sublayer_connection(x, sublayer, norm, dropout, norm_first=True)


def _residual_inputs(seed: int):
    g = _generator(seed)
    x = torch.randn(2, 3, 8, generator=g) * 2 + 1
    w, b = torch.randn(8, 8, generator=g) / 3, torch.randn(8, generator=g)
    gamma, beta = torch.rand(8, generator=g) + 0.5, torch.randn(8, generator=g)

    def sublayer(h: torch.Tensor) -> torch.Tensor:
        return F.linear(h, w, b)

    def norm(h: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(h, (8,), gamma, beta)

    return x, sublayer, norm, nn.Dropout(P_DROP).train()


def _run(fallback: str, fn: Callable, seed: int, reference: Callable, mistakes) -> None:
    __tracebackhide__ = True
    _expect(
        _("the output (training mode, dropout p={p})").format(p=P_DROP),
        fn,
        _residual_inputs(seed),
        reference,
        mistakes,
        validate=partial(_tensor, what=N_("the output"), shape=(2, 3, 8), letters="(B, L, D)"),
        fallback=fallback,
    )


_DROPOUT_AFTER_NORM = N_(
    "dropout after the norm, dropout(norm(x + sublayer(x))), also drops the residual path and "
    "un-normalises the output: drop only the sub-layer's output, norm(x + dropout(sublayer(x))) "
    "(§5.4)."
)

RESIDUAL_POST_NORM_MISTAKES = (
    Mistake(_DROPOUT_AFTER_NORM, lambda x, s, n, d: d(n(x + s(x)))),
    Mistake(
        N_(
            "dropout on the sum also drops the residual path x: drop only the sub-layer's output, "
            "norm(x + dropout(sublayer(x)))."
        ),
        lambda x, s, n, d: n(d(x + s(x))),
    ),
    Mistake(
        N_(
            "you forgot the dropout: apply it to the sub-layer's output before the sum (§5.4), "
            "norm(x + dropout(sublayer(x)))."
        ),
        lambda x, s, n, d: n(x + s(x)),
    ),
    Mistake(
        N_(
            "dropout goes on the sub-layer's output, not on its input: "
            "norm(x + dropout(sublayer(x)))."
        ),
        lambda x, s, n, d: n(x + s(d(x))),
    ),
    Mistake(
        N_(
            "that is pre-norm, x + Dropout(Sublayer(LayerNorm(x))); the paper's post-norm is "
            "LayerNorm(x + Dropout(Sublayer(x))) (§3.1)."
        ),
        lambda x, s, n, d: x + d(s(n(x))),
    ),
    Mistake(
        N_("you forgot the residual connection: add x before the norm."),
        lambda x, s, n, d: n(d(s(x))),
    ),
    Mistake(N_("apply the LayerNorm after the sum."), lambda x, s, n, d: x + d(s(x))),
    Mistake(
        N_("normalise the sum x + Dropout(Sublayer(x)), not only the sub-layer's output."),
        lambda x, s, n, d: x + n(d(s(x))),
    ),
)


@exercise(_post_norm, RESIDUAL_POST_NORM_MISTAKES)
def check_residual_post_norm(fn: Callable) -> None:
    """fn(x (B, L, D), sublayer, norm, dropout) -> norm(x + dropout(sublayer(x))) (§3.1, §5.4)."""
    __tracebackhide__ = True
    _run(
        N_(
            "post-norm is LayerNorm(x + Dropout(Sublayer(x))); dropout goes on the sub-layer's "
            "output, before the sum."
        ),
        fn,
        12,
        _post_norm,
        RESIDUAL_POST_NORM_MISTAKES,
    )
    _passed(N_("post-norm residual: right, with dropout in its place, in training mode too."))


RESIDUAL_PRE_NORM_MISTAKES = (
    Mistake(
        N_(
            "dropout after the norm, sublayer(dropout(norm(x))), drops the sub-layer's input: "
            "drop its output instead, x + dropout(sublayer(norm(x))) (§5.4)."
        ),
        lambda x, s, n, d: x + s(d(n(x))),
    ),
    Mistake(
        N_(
            "dropout on the sum also drops the residual path x, the identity path pre-norm keeps "
            "clean: x + dropout(sublayer(norm(x)))."
        ),
        lambda x, s, n, d: d(x + s(n(x))),
    ),
    Mistake(
        N_(
            "you forgot the dropout: apply it to the sub-layer's output before the sum (§5.4), "
            "x + dropout(sublayer(norm(x)))."
        ),
        lambda x, s, n, d: x + s(n(x)),
    ),
    Mistake(
        N_(
            "that is post-norm, LayerNorm(x + Dropout(Sublayer(x))); pre-norm is "
            "x + Dropout(Sublayer(LayerNorm(x)))."
        ),
        lambda x, s, n, d: n(x + d(s(x))),
    ),
    Mistake(
        N_("you forgot the residual connection: add x to the sub-layer's output."),
        lambda x, s, n, d: d(s(n(x))),
    ),
    Mistake(
        N_("add the un-normalised x: x + Dropout(Sublayer(LayerNorm(x))), not LayerNorm(x) + ..."),
        lambda x, s, n, d: n(x) + d(s(n(x))),
    ),
    Mistake(
        N_("apply the LayerNorm to the sub-layer's input, before the sub-layer."),
        lambda x, s, n, d: x + d(s(x)),
    ),
    Mistake(
        N_("normalise the sub-layer's input, not its output: x + Dropout(Sublayer(LayerNorm(x)))."),
        lambda x, s, n, d: x + d(n(s(x))),
    ),
)


@exercise(_pre_norm, RESIDUAL_PRE_NORM_MISTAKES)
def check_residual_pre_norm(fn: Callable) -> None:
    """fn(x (B, L, D), sublayer, norm, dropout) -> x + dropout(sublayer(norm(x)))."""
    __tracebackhide__ = True
    _run(
        N_(
            "pre-norm is x + Dropout(Sublayer(LayerNorm(x))); dropout goes on the sub-layer's "
            "output, before the sum."
        ),
        fn,
        13,
        _pre_norm,
        RESIDUAL_PRE_NORM_MISTAKES,
    )
    _passed(N_("pre-norm residual: right, with dropout in its place, in training mode too."))
