"""Our ``LanguageModel`` as PyTorch writes a decoder-only model: ``nn.TransformerEncoder``
under a causal mask (``is_causal=True``), weights copied.

Shapes:
    B batch, L sequence length, D d_model, V vocabulary.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from transformer_lib.model.language_model import LanguageModel
from transformer_lib.model.masks import causal_mask
from transformer_lib.model.reference.layers import to_torch_encoder_layer


class TorchLanguageModel(nn.Module):
    """``nn.TransformerEncoder``'s layers between copies of our embeddings, positional
    encoding, final norm and output layer (a tied output stays tied to the copy).

    ``TorchLanguageModel.from_model(ours)`` is the same function as ``ours``: PyTorch's
    causal mask (True = blocked above the diagonal) with ``is_causal=True``, and the
    padding as ``src_key_padding_mask``.

    Shapes: tokens (B, L) -> logits (B, L, V).
    """

    def __init__(self, model: LanguageModel) -> None:
        super().__init__()
        self.pad_id = model.pad_id
        self.embed = copy.deepcopy(model.embed)
        self.positional = copy.deepcopy(model.positional)
        layers = [to_torch_encoder_layer(layer) for layer in model.layers]
        norm = copy.deepcopy(model.norm) if isinstance(model.norm, nn.LayerNorm) else None
        self.stack = nn.TransformerEncoder(
            layers[0], len(layers), norm=norm, enable_nested_tensor=False
        )
        self.stack.layers = nn.ModuleList(layers)  # the copies, not N clones of the first
        self.output = copy.deepcopy(model.output)
        if model.output.weight is model.embed.embedding.weight:
            self.output.weight = self.embed.embedding.weight
        self.train(model.training)

    @classmethod
    def from_model(cls, model: LanguageModel) -> TorchLanguageModel:
        """The same model in PyTorch's modules: ``TorchLanguageModel(model)``."""
        return cls(model)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Shapes: tokens (B, L) ids -> logits (B, L, V)."""
        L = tokens.size(1)
        blocked = ~causal_mask(L, device=tokens.device)[0, 0]  # (L, L), True = blocked
        x = self.positional(self.embed(tokens))  # (B, L) -> (B, L, D)
        hidden = self.stack(
            x, mask=blocked, src_key_padding_mask=tokens == self.pad_id, is_causal=True
        )
        return self.output(hidden)  # (B, L, D) -> (B, L, V)
