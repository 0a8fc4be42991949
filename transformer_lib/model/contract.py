"""What training, checkpoints, perplexity and decoding rely on in a model, stated once.

Every model of the course derives from :class:`CourseModel`: its ``config``, ``pad_id``,
``max_len``, ``split_batch`` (a batch -> the model's inputs and the targets: what training
and perplexity call), ``ignore_index`` (the target id they leave out: ``<pad>`` unless the
model's targets are class ids), and, for a model that generates, ``generation_stack`` (what one
cached step runs: ``inference.cache``). Training and checkpoints take any
``CourseModel`` (:func:`check_course_model`); no code outside a model asks which family it
is.

Encoder-decoders (``model.Transformer``, ``reference.TorchTransformer``, the language model
read as a translator, or a model of your own) also state :class:`ModelContract`:
``encode`` and ``decode``, which greedy and beam search, translation and evaluation call
(:func:`check_model`).

Shapes:
    B batch, S source length, T target length, D d_model, V target vocabulary,
    N rows, n new positions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from torch import nn

from transformer_lib._checks import check_tensor, fail
from transformer_lib.model.attention import AttentionWeights
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.masks import padding_mask


@dataclass
class GenerationStack:
    """What a cached step (``inference.cache``) runs of a model that generates: the token
    embedding and positions, the layers (each an ``EncoderLayer`` or a ``DecoderLayer``),
    the final norm and the output layer; for cross-attention the encoder's ``memory``
    (N, S, D) and ``src_mask`` (N, 1, 1, S); and what is read before the first generated
    token: ``prefix`` ids (N, P) at positions 0 .. P-1 (``<pad>`` never attended to), the
    generated tokens starting at position ``start`` (N, 1), the first of them read as
    ``first_token`` when given."""

    embed: Callable[[torch.Tensor], torch.Tensor]  # ids (N, n) -> (N, n, D)
    positional: nn.Module  # PositionalEncoding: (N, n, D), positions (N, n) -> (N, n, D)
    layers: nn.ModuleList
    norm: nn.Module
    output: nn.Module  # (N, D) -> (N, V)
    memory: torch.Tensor | None = None
    src_mask: torch.Tensor | None = None
    prefix: torch.Tensor | None = None
    start: torch.Tensor | int = 0
    first_token: int | None = None


class CourseModel(nn.Module, ABC):
    """What every model of the course states: the ``config`` it was built from (checkpoints
    store it), ``pad_id``, ``max_len``, :meth:`split_batch`, ``ignore_index`` and, when it
    generates, :meth:`generation_stack`. ``model(*inputs)`` returns logits (B, L, V), or
    (B, C) for a sentence classifier."""

    config: TransformerConfig

    @property
    def pad_id(self) -> int:
        """Id of ``<pad>``: the default masks are built from it, the loss ignores it."""
        return self.config.pad_id

    @property
    def max_len(self) -> int:
        """Longest sequence the positional encoding covers."""
        return self.config.max_len

    @property
    def ignore_index(self) -> int:
        """The target id that the loss, perplexity and accuracy leave out: ``<pad>``
        (padding, and the positions a masked-token batch does not ask about). A model whose
        targets are class ids, all of them real, returns an id no target has."""
        return self.pad_id

    @abstractmethod
    def split_batch(self, batch: object) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """A training batch -> (the inputs of ``forward``, the targets of its logits: (B, L)
        for logits (B, L, V), (B,) for logits (B, C))."""

    def generation_stack(
        self, memory: torch.Tensor | None = None, src_mask: torch.Tensor | None = None
    ) -> GenerationStack | None:
        """What a cached step runs (see :class:`GenerationStack`); None: this model has no
        cached step, and searches run the plain loop."""
        return None


class ModelContract(CourseModel):
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
            got = f"shape {tuple(tgt.shape)}"
            fail("tgt", "the same batch size B={B} as src", got, B=src.size(0))
        if src_mask is None:
            src_mask = padding_mask(src, self.pad_id)
        weights = {} if attention is None else {"attention": attention}
        memory = self.encode(src, src_mask, **weights)
        mask = {} if tgt_mask is None else {"tgt_mask": tgt_mask}
        return self.decode(tgt, memory, src_mask, **mask, **weights)

    def output_room(self, src_len: int) -> int:
        """How many tokens a search may generate for sources of ``src_len`` tokens: the
        decoder reads ``<bos>`` and all but the last generated token, ``max_len`` at most."""
        return self.max_len

    def split_batch(self, batch: object) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """A ``data.Batch`` or a (src, tgt_in, tgt_out) tuple -> ((src, tgt_in), tgt_out)."""
        if all(hasattr(batch, name) for name in ("src", "tgt_in", "tgt_out")):
            return (batch.src, batch.tgt_in), batch.tgt_out
        return _split(batch, 3, "data.Batch objects or (src, tgt_in, tgt_out) tuples",
                      "Build them with data.make_batches().")  # fmt: skip


def _split(
    batch: object, n_parts: int, expected: str, hint: str, **values: object
) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """(inputs, targets) of a tuple of ``n_parts`` tensors, the targets last; ``expected``
    and ``hint`` are templates, as ``fail``'s."""
    if not (isinstance(batch, (tuple, list)) and len(batch) == n_parts):
        fail("batches", expected, type(batch).__name__, hint, TypeError, **values)
    *inputs, targets = batch
    return tuple(inputs), targets


def split_pairs(
    batch: object, builder: str = "data.language_model_batches"
) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """An (inputs, targets) batch -> ((inputs,), targets); ``builder`` names, in the error,
    the function that makes such batches."""
    return _split(batch, 2, "(inputs, targets) tuples", "Build them with {builder}().",
                  builder=builder)  # fmt: skip


def check_course_model(name: str, model: object) -> None:
    """``model`` must state what training and checkpoints rely on: a :class:`CourseModel`."""
    _require(name, model, CourseModel, "transformer_lib.Transformer, LanguageModel, "
             "EncoderOnlyModel, reference.TorchTransformer")  # fmt: skip


def _require(name: str, model: object, contract: type, examples: str) -> None:
    """The house error unless ``model`` derives from ``contract`` (``examples`` do)."""
    if not isinstance(model, contract):
        kind = contract.__name__
        fail(
            name,
            "a {kind} ({examples}, or a subclass of transformer_lib.contract.{kind})",
            type(model).__name__,
            "Derive your model from {kind} and give it the config it was built from.",
            error=TypeError,
            kind=kind,
            examples=examples,
        )


def check_model(name: str, model: object) -> None:
    """``model`` must state the contract its caller relies on: a :class:`ModelContract`."""
    _require(name, model, ModelContract, "transformer_lib.Transformer, reference.TorchTransformer")


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
