"""Attention masks (paper §3.2.3).

Convention used everywhere in this course: a mask is a ``torch.bool`` tensor and
**True means "may attend"**, the same as ``F.scaled_dot_product_attention``.
(``nn.MultiheadAttention`` uses the opposite: True there means "blocked".)
Masks broadcast against attention scores of shape ``(B, H, T, S)``.

Shapes:
    B batch, T query (target) length, S key (source) length.
"""

from __future__ import annotations

import torch

from transformer_lib._checks import check_int, check_tensor


def padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Mask out padded key positions.

    Shapes: tokens (B, S) integer ids -> mask (B, 1, 1, S), True at real tokens.
    Only keys are masked: under this mask alone, a padded *query* row still sees the
    real tokens of its sequence, and a row is fully masked only when the whole sequence
    is padding. Combined with the causal mask (``target_mask``) there is a second case:
    in a target padded on the left, each leading pad row t may see only positions
    0..t, all of them padding. ``attention.scaled_dot_product_attention`` gives such rows
    all-zero weights (output 0, never NaN).
    """
    check_tensor("tokens", tokens, ndim=2, integer=True, shape_hint="(B, S)")
    check_int("pad_id", pad_id)
    return (tokens != pad_id)[:, None, None, :]  # (B, S) -> (B, 1, 1, S)


def causal_mask(size: int, device: torch.device | str | None = None) -> torch.Tensor:
    """Lower-triangular mask: position t may attend to positions 0..t (itself included).

    Shapes: -> (1, 1, T, T). Built the same way in training and evaluation.
    """
    check_int("size", size, minimum=1)
    ones = torch.ones(size, size, dtype=torch.bool, device=device)
    return torch.tril(ones)[None, None]  # (T, T) -> (1, 1, T, T)


def target_mask(tgt: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Decoder self-attention mask: causal AND not padding.

    Shapes: tgt (B, T) -> (B, 1, T, T).
    """
    check_tensor("tgt", tgt, ndim=2, integer=True, shape_hint="(B, T)")
    causal = causal_mask(tgt.size(1), device=tgt.device)  # (1, 1, T, T)
    return padding_mask(tgt, pad_id) & causal  # (B, 1, 1, T) & (1, 1, T, T) -> (B, 1, T, T)
