"""Notebook 01, embeddings: the lookup as one-hot × matrix, and the √d_model scaling (§3.4)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from transformer_lib.i18n import N_
from transformer_lib.model.embeddings import TokenEmbedding
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import Mistake, _generator, _passed, exercise

__all__ = ["check_embedding_lookup", "check_scaled_embedding"]

# Crashes of one-hot code that no catalogue entry reproduces word for word.
_ONE_HOT_HINTS = (
    (
        "shapes cannot be multiplied",
        N_(
            "Hint: F.one_hot(ids) without num_classes only makes "
            "max(ids) + 1 columns; pass num_classes=weight.size(0)."
        ),
    ),
    (
        "dtype",
        N_(
            "Hint: F.one_hot returns int64; convert with .float() before multiplying by the weight."
        ),
    ),
    ("expected scalar type", N_("Hint: F.one_hot returns int64; convert with .float().")),
)


def _library_embedding(weight: torch.Tensor) -> TokenEmbedding:
    """The library's ``TokenEmbedding`` holding ``weight`` (V, D)."""
    V, D = weight.shape
    module = TokenEmbedding(V, D)
    with torch.no_grad():
        module.embedding.weight.copy_(weight)
    return module


def _lookup(ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The library's lookup: ``TokenEmbedding``'s table, before its √d_model scaling."""
    with torch.no_grad():
        return _library_embedding(weight).embedding(ids)  # (B, L) -> (B, L, D)


def _scaled(ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The library's ``TokenEmbedding``: lookup × √d_model (§3.4)."""
    with torch.no_grad():
        return _library_embedding(weight)(ids)  # (B, L) -> (B, L, D)


def _embedding_inputs(seed: int, V: int, D: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = _generator(seed)
    ids = torch.randint(0, V - 1, (2, 5), generator=g)  # never V - 1: one_hot needs num_classes
    return ids, torch.randn(V, D, generator=g)


EMBEDDING_LOOKUP_MISTAKES = (
    Mistake(
        N_("this exercise is the plain lookup: leave out the √d_model scaling, it comes next."),
        lambda ids, weight: F.one_hot(ids, weight.size(0)).float() @ weight * weight.size(1) ** 0.5,
    ),
    Mistake(
        N_(
            "F.one_hot(ids) without num_classes only makes max(ids) + 1 columns, fewer than the "
            "weight's V rows: pass num_classes=weight.size(0)."
        ),
        lambda ids, weight: F.one_hot(ids).float() @ weight,
    ),
    Mistake(
        N_(
            "num_classes is the vocabulary size weight.size(0) (one column per token), not the "
            "embedding width weight.size(1)."
        ),
        lambda ids, weight: F.one_hot(ids, weight.size(1)).float() @ weight,
    ),
    Mistake(
        N_(
            "F.one_hot returns int64 and the weight is float32: convert the one-hot with .float() "
            "before multiplying."
        ),
        lambda ids, weight: F.one_hot(ids, weight.size(0)) @ weight,
    ),
    Mistake(
        N_(
            "that is the one-hot matrix (B, L, V): multiply it by the weight (V, D) to select the rows."
        ),
        lambda ids, weight: F.one_hot(ids, weight.size(0)).float(),
    ),
    Mistake(
        N_(
            "keep the weight's dtype, float32: convert the one-hot with .float(), not .double() "
            "(and leave the weight as it is)."
        ),
        lambda ids, weight: F.one_hot(ids, weight.size(0)).double() @ weight.double(),
    ),
)


@exercise(_lookup, EMBEDDING_LOOKUP_MISTAKES)
def check_embedding_lookup(fn: Callable) -> None:
    """fn(ids (B, L) int64, weight (V, D)) -> (B, L, D): row ids[b, l] of weight."""
    __tracebackhide__ = True
    ids, weight = _embedding_inputs(1, V=11, D=6)
    _expect(
        N_("the embeddings"),
        fn,
        (ids, weight),
        _lookup,
        EMBEDDING_LOOKUP_MISTAKES,
        validate=partial(_tensor, what=N_("the embeddings"), shape=(2, 5, 6), letters="(B, L, D)"),
        fallback=N_("Row ids[b, l] of weight goes to out[b, l]."),
        hints=_ONE_HOT_HINTS,
    )
    _passed(N_("embedding lookup: equals weight[ids] (one-hot × matrix selects rows)."))


SCALED_EMBEDDING_MISTAKES = (
    Mistake(
        N_("you forgot the scaling: multiply the looked-up vectors by √d_model (§3.4)."),
        lambda ids, weight: weight[ids],
    ),
    Mistake(
        N_("divide → multiply: the paper multiplies the embeddings by √d_model."),
        lambda ids, weight: weight[ids] / math.sqrt(weight.size(1)),
    ),
    Mistake(
        N_("scale by the square root √d_model, not by d_model itself."),
        lambda ids, weight: weight[ids] * weight.size(1),
    ),
    Mistake(
        N_(
            "d_model is the embedding width weight.size(1), not the vocabulary size weight.size(0)."
        ),
        lambda ids, weight: weight[ids] * math.sqrt(weight.size(0)),
    ),
    Mistake(
        N_("d_model is the embedding width weight.size(1), not the sequence length ids.size(1)."),
        lambda ids, weight: weight[ids] * math.sqrt(ids.size(1)),
    ),
)


@exercise(_scaled, SCALED_EMBEDDING_MISTAKES)
def check_scaled_embedding(fn: Callable) -> None:
    """fn(ids (B, L) int64, weight (V, D)) -> weight[ids] * √D   (§3.4)."""
    __tracebackhide__ = True
    ids, weight = _embedding_inputs(2, V=9, D=16)  # √V = 3, √L ≈ 2.24, √D = 4, D = 16
    _expect(
        N_("the scaled embeddings"),
        fn,
        (ids, weight),
        _scaled,
        SCALED_EMBEDDING_MISTAKES,
        validate=partial(
            _tensor, what=N_("the scaled embeddings"), shape=(2, 5, 16), letters="(B, L, D)"
        ),
        fallback=N_("Look up row ids[b, l] of weight, then multiply by √d_model."),
        hints=_ONE_HOT_HINTS,
    )
    _passed(N_("scaled embedding: weight[ids] × √d_model."))
