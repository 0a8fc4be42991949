"""Notebook 01, embeddings: the lookup as one-hot × matrix, and the √d_model scaling (§3.4)."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.exercises._core import Mistakes, _call, _diagnose, _generator, _passed, _tensor

__all__ = ["check_embedding_lookup", "check_scaled_embedding"]

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
        partial(scaled_embedding_mistakes, ids, weight),
    )
    _passed("scaled embedding: weight[ids] × √d_model.")


def scaled_embedding_mistakes(ids: torch.Tensor, weight: torch.Tensor) -> Mistakes:
    """Wrong scalings of the lookup: none, divided, × D, √V or √L instead of √D."""
    V, D = weight.shape
    L = ids.size(1)
    lookup = weight[ids]  # (B, L) -> (B, L, D)
    return [
        ("you forgot the scaling: multiply the looked-up vectors by √d_model (§3.4).", lookup),
        (
            "divide → multiply: the paper multiplies the embeddings by √d_model.",
            lookup / math.sqrt(D),
        ),
        ("scale by the square root √d_model, not by d_model itself.", lookup * D),
        (
            "d_model is the embedding width weight.size(1), not the vocabulary size "
            "weight.size(0).",
            lookup * math.sqrt(V),
        ),
        (
            "d_model is the embedding width weight.size(1), not the sequence length ids.size(1).",
            lookup * math.sqrt(L),
        ),
    ]
