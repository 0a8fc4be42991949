"""What training, decoding, translation and checkpoints rely on in a model, stated once.

A model of the course derives from :class:`ModelContract`: ``model.Transformer``,
``reference.TorchTransformer`` (``nn.Transformer``'s stacks), or a model of your own.
Every entry point checks its model with :func:`check_model`.

Shapes:
    B batch, S source length, T target length, D d_model, V target vocabulary.
"""

from __future__ import annotations

import torch
from torch import nn

from transformer_lib._checks import fail
from transformer_lib.config import TransformerConfig


class ModelContract(nn.Module):
    """An encoder-decoder built from a :class:`TransformerConfig`, which it keeps as
    ``config`` (checkpoints store it), with

    - ``encode(src, src_mask) -> memory``: src (B, S) ids, src_mask (B, 1, 1, S) -> (B, S, D);
    - ``decode(tgt, memory, src_mask) -> logits``: tgt (B, T) ids -> (B, T, V), causal;
    - ``forward(src, tgt) -> logits`` (B, T, V), with the padding and causal masks built
      from ``pad_id``;
    - the properties below, read from ``config``.

    Masks are bool, True = may attend (``masks``). The model ends in logits: training
    and decoding take the log-softmax themselves.
    """

    config: TransformerConfig

    @property
    def pad_id(self) -> int:
        """Id of ``<pad>`` in both vocabularies; the default masks are built from it."""
        return self.config.pad_id

    @property
    def max_len(self) -> int:
        """Longest source or target sequence the positional encoding covers."""
        return self.config.max_len

    @property
    def src_vocab_size(self) -> int:
        return self.config.src_vocab_size

    @property
    def tgt_vocab_size(self) -> int:
        """V, the width of the logits."""
        return self.config.tgt_vocab_size

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define encode()")

    def decode(
        self, tgt: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None
    ) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define decode()")


def check_model(name: str, model: object) -> None:
    """``model`` must state the contract its caller relies on: a :class:`ModelContract`."""
    if not isinstance(model, ModelContract):
        fail(
            name,
            "a ModelContract (transformer_lib.Transformer, reference.TorchTransformer, or a "
            "subclass of transformer_lib.contract.ModelContract)",
            type(model).__name__,
            "Derive your model from ModelContract and give it the config it was built from.",
            error=TypeError,
        )
