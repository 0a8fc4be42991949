"""What training, decoding, translation and checkpoints rely on in a model, stated once.

A model of the course derives from :class:`ModelContract`: ``model.Transformer``,
``reference.TorchTransformer`` (``nn.Transformer``'s stacks), or a model of your own.
Every entry point checks its model with :func:`check_model`.

Shapes:
    B batch, S source length, T target length, D d_model, V target vocabulary.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from transformer_lib._checks import check_tensor, fail
from transformer_lib.model.attention import AttentionWeights
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.masks import padding_mask


class ModelContract(nn.Module):
    """An encoder-decoder built from a :class:`TransformerConfig`, which it keeps as
    ``config`` (checkpoints store it), with

    - ``encode(src, src_mask) -> memory``: src (B, S) ids, src_mask (B, 1, 1, S) -> (B, S, D);
    - ``decode(tgt, memory, src_mask) -> logits``: tgt (B, T) ids -> (B, T, V), causal;
    - ``forward(src, tgt) -> logits`` (B, T, V), with the padding and causal masks built
      from ``pad_id``: written once, below, for every model of the course;
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

    def forward(
        self,
        src: torch.Tensor,
        tgt: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        tgt_mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: src (B, S), tgt (B, T) -> logits (B, T, V): the padding mask of ``src``
        (unless given), ``encode``, then ``decode`` with the same mask. With ``attention``,
        its ``encoder``, ``decoder_self`` and ``cross`` lists get one map per layer.
        ``tgt_mask`` and ``attention`` reach ``encode``/``decode`` only when given, so a
        model whose methods take neither still has this forward."""
        check_tensor("src", src, ndim=2, integer=True, shape_hint="(B, S)")
        check_tensor("tgt", tgt, ndim=2, integer=True, shape_hint="(B, T)")
        if tgt.size(0) != src.size(0):
            fail("tgt", f"the same batch size B={src.size(0)} as src", f"shape {tuple(tgt.shape)}")
        if src_mask is None:
            src_mask = padding_mask(src, self.pad_id)
        weights = {} if attention is None else {"attention": attention}
        memory = self.encode(src, src_mask, **weights)
        mask = {} if tgt_mask is None else {"tgt_mask": tgt_mask}
        return self.decode(tgt, memory, src_mask, **mask, **weights)


def check_model(name: str, model: object) -> None:
    """``model`` must state the contract its caller relies on: a :class:`ModelContract`."""
    if not isinstance(model, ModelContract):
        fail(
            name,
            "a ModelContract (transformer_lib.Transformer, reference.TorchTransformer, or a "
            "subclass of transformer_lib.model.contract.ModelContract)",
            type(model).__name__,
            "Derive your model from ModelContract and give it the config it was built from.",
            error=TypeError,
        )


@contextmanager
def eval_no_grad(model: nn.Module) -> Iterator[None]:
    """``model.eval()`` and ``torch.no_grad()`` inside the block; the model's mode is restored
    after. (Not ``torch.inference_mode``, whose tensors autograd refuses to save later.)"""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            yield
    finally:
        model.train(was_training)
