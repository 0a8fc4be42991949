"""Our ``EncoderOnlyModel`` as PyTorch writes an encoder-only model: ``nn.TransformerEncoder``
under the padding mask alone (``src_key_padding_mask``, no causal mask), weights copied.

Shapes:
    B batch, L sequence length, D d_model, V vocabulary.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from transformer_lib.model.encoder_only import EncoderOnlyModel
from transformer_lib.model.reference.transformer import _torch_encoder


class TorchEncoderOnlyModel(nn.Module):
    """``nn.TransformerEncoder`` (its layers and, where ours has one, its final norm: copies
    of ours) between copies of our embeddings, positional encoding and output layer (a tied
    output stays tied to the copy).

    ``TorchEncoderOnlyModel.from_model(ours)`` is the same function as ``ours``: every
    position attends to every real position, the padding given as PyTorch's
    ``src_key_padding_mask`` (True = padding).

    Shapes: tokens (B, L) -> logits (B, L, V).
    """

    def __init__(self, model: EncoderOnlyModel) -> None:
        super().__init__()
        self.pad_id = model.pad_id
        self.embed = copy.deepcopy(model.embed)
        self.positional = copy.deepcopy(model.positional)
        self.encoder = _torch_encoder(model.encoder)
        self.output = copy.deepcopy(model.output)
        if model.output.weight is model.embed.embedding.weight:
            self.output.weight = self.embed.embedding.weight
        self.train(model.training)

    @classmethod
    def from_model(cls, model: EncoderOnlyModel) -> TorchEncoderOnlyModel:
        """The same model in PyTorch's modules: ``TorchEncoderOnlyModel(model)``."""
        return cls(model)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Shapes: tokens (B, L) ids -> logits (B, L, V)."""
        x = self.positional(self.embed(tokens))  # (B, L) -> (B, L, D)
        hidden = self.encoder(x, src_key_padding_mask=tokens == self.pad_id)  # (B, L, D)
        return self.output(hidden)  # (B, L, D) -> (B, L, V)
