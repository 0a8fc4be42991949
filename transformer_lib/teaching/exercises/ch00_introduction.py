"""Notebook 00, introduction: the shape of the logits, and probabilities from logits."""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from transformer_lib.i18n import N_, _
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.transformer import Transformer
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import (
    ExerciseFailed,
    Mistake,
    _generator,
    _passed,
    exercise,
)

__all__ = ["check_logits_shape", "check_next_token_probabilities"]

# Every size different from the others, so each wrong size in an answer is recognisable.
_CONFIG = TransformerConfig(
    src_vocab_size=13,
    tgt_vocab_size=11,
    d_model=16,
    n_heads=2,
    d_ff=32,
    n_encoder_layers=1,
    n_decoder_layers=1,
    max_len=32,
    share_embeddings=False,
)


def _model_logits_shape(
    config: TransformerConfig, batch_size: int, src_len: int, tgt_len: int
) -> tuple[int, ...]:
    """The library's answer: run a real ``Transformer`` and read the shape of its output."""
    model = Transformer(config).eval()
    src = torch.randint(0, config.src_vocab_size, (batch_size, src_len))  # (B, S)
    tgt = torch.randint(0, config.tgt_vocab_size, (batch_size, tgt_len))  # (B, T)
    with torch.no_grad():
        return tuple(model(src, tgt).shape)  # (B, S), (B, T) -> (B, T, V)


LOGITS_SHAPE_MISTAKES = (
    Mistake(
        N_(
            "the logits have one row per *target* position: use tgt_len (T), not src_len (S); "
            "the source length disappears in the decoder's cross-attention."
        ),
        lambda config, batch_size, src_len, tgt_len: (batch_size, src_len, config.tgt_vocab_size),
    ),
    Mistake(
        N_(
            "the output layer scores *target* tokens: the last size is config.tgt_vocab_size, "
            "not config.src_vocab_size."
        ),
        lambda config, batch_size, src_len, tgt_len: (batch_size, tgt_len, config.src_vocab_size),
    ),
    Mistake(
        N_(
            "(B, T, d_model) is the decoder's output before the final linear layer; the logits "
            "hold one score per vocabulary entry: the last size is config.tgt_vocab_size."
        ),
        lambda config, batch_size, src_len, tgt_len: (batch_size, tgt_len, config.d_model),
    ),
    Mistake(
        N_(
            "keep the batch axis: the logits are (batch_size, tgt_len, vocabulary), "
            "one (T, V) block per sentence."
        ),
        lambda config, batch_size, src_len, tgt_len: (tgt_len, config.tgt_vocab_size),
    ),
    Mistake(
        N_(
            "the model scores *every* target position, not only the last one: put tgt_len "
            "between the batch size and the vocabulary size."
        ),
        lambda config, batch_size, src_len, tgt_len: (batch_size, config.tgt_vocab_size),
    ),
)


def _returning_a_tuple(fn: Callable) -> Callable:
    """``fn`` with a ``torch.Size`` or list result turned into a tuple (all three are right)."""

    @functools.wraps(fn)
    def shape_of(*args):
        result = fn(*args)
        return tuple(result) if isinstance(result, (list, torch.Size)) else result

    return shape_of


def _unexpected_shape(config: TransformerConfig, batch_size: int, src_len: int, tgt_len: int):
    """A ``validate`` for :func:`_expect`: any answer that reaches it is wrong; say why."""

    def explain(got) -> None:
        sizes = (
            f"B={batch_size}, S={src_len}, T={tgt_len}, d_model={config.d_model}, "
            f"src_vocab_size={config.src_vocab_size}, tgt_vocab_size={config.tgt_vocab_size}"
        )
        raise ExerciseFailed(
            _(
                "the shape of the logits: you returned {got}, but the model returns a tuple "
                "(B, T, V) for {sizes}. Which of these sizes is each axis?"
            ).format(got=repr(got), sizes=sizes)
        )

    return explain


@exercise(_model_logits_shape, LOGITS_SHAPE_MISTAKES)
def check_logits_shape(fn: Callable) -> None:
    """fn(config, batch_size, src_len, tgt_len) -> the shape of the model's logits, a tuple."""
    __tracebackhide__ = True
    student = _returning_a_tuple(fn) if callable(fn) else fn
    for batch_size, src_len, tgt_len in ((2, 5, 3), (1, 4, 6)):
        args = (_CONFIG, batch_size, src_len, tgt_len)
        _expect(
            N_("the shape of the logits"),
            student,
            args,
            _model_logits_shape,
            LOGITS_SHAPE_MISTAKES,
            validate=_unexpected_shape(*args),
        )
    _passed(N_("logits shape: (batch_size, tgt_len, tgt_vocab_size), as the model returns."))


def _softmax(logits: torch.Tensor) -> torch.Tensor:
    return torch.softmax(logits, dim=-1)  # normalise over the vocabulary


NEXT_TOKEN_PROBABILITIES_MISTAKES = (
    Mistake(
        N_(
            "softmax over the wrong axis: dim=1 normalises over target positions; the "
            "vocabulary is the last axis, use dim=-1."
        ),
        lambda logits: torch.softmax(logits, dim=1),
    ),
    Mistake(
        N_(
            "softmax over the batch axis (dim=0, also what F.softmax picks for a 3-d tensor when "
            "dim is left out): pass dim=-1, the vocabulary axis."
        ),
        lambda logits: torch.softmax(logits, dim=0),
    ),
    Mistake(
        N_(
            "those are log-probabilities (all ≤ 0): use torch.softmax(logits, dim=-1), "
            "not log_softmax."
        ),
        lambda logits: F.log_softmax(logits, dim=-1),
    ),
    Mistake(
        N_(
            "you returned the logits unchanged: turn them into probabilities with "
            "torch.softmax(logits, dim=-1)."
        ),
        lambda logits: logits,
    ),
    Mistake(
        N_(
            "sigmoid squashes each score on its own, so a row does not sum to 1: softmax "
            "normalises over the vocabulary, torch.softmax(logits, dim=-1)."
        ),
        torch.sigmoid,
    ),
    Mistake(
        N_(
            "you normalised over the whole tensor: each (sentence, position) needs its own "
            "distribution, so sum over dim=-1 with keepdim=True."
        ),
        lambda logits: logits.exp() / logits.exp().sum(),
    ),
    Mistake(
        N_(
            "sum(dim=-1) drops the vocabulary axis, so it cannot divide the (B, T, V) tensor: "
            "add keepdim=True."
        ),
        lambda logits: logits.exp() / logits.exp().sum(dim=-1),
    ),
    Mistake(
        N_(
            "exp overflows for large logits (float32 overflows above about 88) and inf / inf "
            "gives NaN: subtract each row's maximum first, or use torch.softmax, which does."
        ),
        lambda logits: logits.exp() / logits.exp().sum(dim=-1, keepdim=True),
    ),
)


@exercise(_softmax, NEXT_TOKEN_PROBABILITIES_MISTAKES)
def check_next_token_probabilities(fn: Callable) -> None:
    """fn(logits (B, T, V)) -> probabilities (B, T, V): softmax over the vocabulary axis."""
    __tracebackhide__ = True
    g = _generator(0)
    B, T, V = 2, 3, 7  # all different: a softmax over the wrong axis cannot hide
    ordinary = torch.randn(B, T, V, generator=g) * 2
    large = torch.randn(B, T, V, generator=g) * 100  # exp() of these overflows float32
    cases = (
        (N_("the probability tensor"), ordinary),
        (N_("for large logits, the probability tensor"), large),
    )
    for what, logits in cases:
        _expect(
            what,
            fn,
            (logits,),
            _softmax,
            NEXT_TOKEN_PROBABILITIES_MISTAKES,
            validate=partial(_tensor, what=what, shape=(B, T, V), letters="(B, T, V)"),
            fallback=N_(
                "Each row over the vocabulary must be exp(z) / Σ exp(z): "
                "non-negative and summing to 1."
            ),
        )
    _passed(N_("next-token probabilities: softmax over the vocabulary, safe for large logits."))
