"""Token embeddings and positional encodings (paper §3.4, §3.5).

Shapes:
    B batch, L sequence length, D d_model, V vocabulary size.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from transformer_lib._checks import (
    check_even_width,
    check_int,
    check_length,
    check_probability,
    check_tensor,
    check_token_ids,
)


def sinusoidal_positional_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """The fixed sinusoid table of §3.5, built without Python loops.

    PE[pos, 2i] = sin(pos / 10000^(2i/d_model)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model)).

    Shapes: -> (max_len, d_model), float32. Even columns hold sines, odd columns cosines.
    """
    check_int("max_len", max_len, minimum=1)
    check_int("d_model", d_model, minimum=2)
    check_even_width(d_model)
    position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (L, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)  # (D/2,)
    angle = position / 10000.0 ** (two_i / d_model)  # (L, 1) / (D/2,) -> (L, D/2)
    table = torch.empty(max_len, d_model)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table


class TokenEmbedding(nn.Module):
    """Lookup table scaled by √d_model (§3.4).

    The scaling keeps token vectors on the same scale as the positional encodings
    they are added to, which matters when the matrix is shared with the output layer.
    """

    def __init__(self, vocab_size: int, d_model: int) -> None:
        super().__init__()
        check_int("vocab_size", vocab_size, minimum=1)
        check_int("d_model", d_model, minimum=1)
        self.d_model = d_model
        self.embedding = nn.Embedding(vocab_size, d_model)

    def forward(self, tokens: torch.Tensor, name: str = "tokens") -> torch.Tensor:
        """Shapes: tokens (B, L) -> (B, L, D). ``name``: what an error calls ``tokens``
        (a model passes its own argument's name, ``src`` or ``tgt``)."""
        check_token_ids(name, tokens, self.embedding.num_embeddings, "(B, L)", ndim=None)
        return self.embedding(tokens) * math.sqrt(self.d_model)  # (B, L) -> (B, L, D)

    def extra_repr(self) -> str:
        return f"scale=sqrt({self.d_model})"


class PositionalEncoding(nn.Module):
    """Add position information, then dropout (§3.5, §5.4).

    ``learned=False`` adds the sinusoid table (a non-persistent buffer, so it moves
    with ``.to(device)`` and is not saved); ``learned=True`` learns one vector per position.
    """

    def __init__(
        self, d_model: int, max_len: int = 512, dropout: float = 0.1, learned: bool = False
    ) -> None:
        super().__init__()
        check_probability("dropout", dropout)
        self.max_len = max_len
        self.learned = learned
        if learned:
            check_int("max_len", max_len, minimum=1)
            self.position_embedding = nn.Embedding(max_len, d_model)
        else:
            table = sinusoidal_positional_encoding(max_len, d_model)
            self.register_buffer("pe", table, persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        """Shapes: x (B, L, D) -> (B, L, D). ``positions`` (B, L) ids of the positions
        of ``x``'s vectors, default 0 .. L-1 (incremental decoding passes those of the new
        tokens, so a step embeds only them)."""
        check_tensor("x", x, ndim=3, floating=True, shape_hint="(B, L, D)")
        length = x.size(1)
        if positions is not None:
            table = self.position_embedding.weight if self.learned else self.pe.to(x.dtype)
            return self.dropout(x + table[positions])  # (B, L, D) + (B, L, D)
        check_length("x", length, self.max_len)
        if self.learned:
            table = self.position_embedding.weight[:length]  # (L, D)
        else:
            table = self.pe[:length].to(x.dtype)  # (L, D)
        return self.dropout(x + table)  # (B, L, D) + (L, D) -> (B, L, D)

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, learned={self.learned}"
