"""Notebook 10's encoder-only (BERT-style) model, its sentence classifier and accuracy.

``EncoderOnlyModel``: token embeddings and positions, the encoder stack of the
encoder-decoder (``transformer.Encoder``: ``EncoderLayer``s and the final norm) run under the
padding mask alone, so every position reads every other, both directions (Devlin et al.
2019, §3), and an output layer tied to the embeddings that predicts the token at each
position: trained on masked tokens (``data.masking``). ``SentenceClassifier``: the model's
vectors averaged over a sentence's real tokens, then a linear layer to class logits (the
fine-tuning of §4). ``accuracy``: the share of targets whose largest logit is right.

Shapes:
    B batch, L sequence length, D d_model, V vocabulary, C classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from transformer_lib._checks import (
    check_int,
    check_labels,
    check_length,
    check_mask,
    check_token_ids,
    fail,
)
from transformer_lib.model.attention import AttentionWeights
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import (
    CourseModel,
    GenerationStack,
    check_course_model,
    eval_no_grad,
    split_pairs,
)
from transformer_lib.model.embeddings import PositionalEncoding, TokenEmbedding
from transformer_lib.model.masks import padding_mask
from transformer_lib.model.transformer import Encoder, init_parameters

__all__ = ["EncoderOnlyModel", "SentenceClassifier", "mean_over_tokens", "accuracy"]


def _check_config(config: object) -> None:
    if not isinstance(config, TransformerConfig):
        fail("config", "a TransformerConfig", type(config).__name__, error=TypeError)
    hint = "Build it with TransformerConfig.encoder_only(vocab_size, ...)."
    if config.n_decoder_layers != 0:
        fail("config.n_decoder_layers", "0 (an encoder-only model has no decoder)",
             repr(config.n_decoder_layers), hint)  # fmt: skip
    if config.src_vocab_size != config.tgt_vocab_size:
        fail("config.tgt_vocab_size", "src_vocab_size={size} (one vocabulary)",
             repr(config.tgt_vocab_size), hint, size=config.src_vocab_size)  # fmt: skip


class EncoderOnlyModel(CourseModel):
    """Embeddings + positions, N encoder layers under the padding mask, a linear layer to
    logits over the vocabulary at every position.

    ``EncoderOnlyModel(config)`` (``TransformerConfig.encoder_only``) states what training,
    perplexity and checkpoints rely on: ``config``, ``pad_id``, ``max_len``, ``vocab_size``.
    With ``config.tie_output`` (the default) the output layer's matrix is the embedding
    matrix, with a bias of its own, as in BERT's code (which puts one more dense layer and a
    LayerNorm before it). It reads a whole sentence at once, so it has no left-to-right step
    to generate with: ``generation_stack`` is None.

    Shapes: tokens (B, L) ids -> logits (B, L, V).
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        _check_config(config)
        self.config = c = config
        self.embed = TokenEmbedding(c.src_vocab_size, c.d_model)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout, c.learned_positions)
        self.encoder = Encoder(c)  # the encoder-decoder's stack: layers, then the final norm
        self.output = nn.Linear(c.d_model, c.src_vocab_size)
        init_parameters(self, c)
        if c.tie_output:
            self.output.weight = self.embed.embedding.weight

    @property
    def vocab_size(self) -> int:
        """V, the width of the logits and the number of ids the model reads."""
        return self.config.src_vocab_size

    def _inputs(
        self, tokens: torch.Tensor, mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The embedded tokens (B, L, D) and the mask (B, 1, 1, L), checked."""
        check_token_ids("tokens", tokens, None, "(B, L)", min_length=1)  # range: in embed
        check_length("tokens", tokens.size(1), self.max_len)
        if mask is None:
            mask = padding_mask(tokens, self.pad_id)  # (B, 1, 1, L)
        check_mask("mask", mask, (tokens.size(0), 1, 1, tokens.size(1)), "(B, 1, 1, L)")
        return self.positional(self.embed(tokens, "tokens")), mask  # (B, L) -> (B, L, D)

    def encode(
        self,
        tokens: torch.Tensor,
        mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Each token's vector in the context of the whole sentence (contextual embeddings).

        Shapes: tokens (B, L) ids, mask (B, 1, 1, L) -> (B, L, D). ``mask`` defaults to the
        padding mask: no causal mask, position i reads positions after i as well as before.
        With ``attention``, ``attention.encoder`` gets one (B, H, L, L) map per layer."""
        x, mask = self._inputs(tokens, mask)
        return self.encoder(x, mask, attention)

    def layer_outputs(
        self, tokens: torch.Tensor, mask: torch.Tensor | None = None
    ) -> list[torch.Tensor]:
        """The vectors after each layer, first to last, without the final norm that a
        pre-norm stack (or ``final_norm=True``) adds: which layer separates which contexts.

        Shapes: tokens (B, L) -> N tensors (B, L, D)."""
        x, mask = self._inputs(tokens, mask)
        outputs = []
        for layer in self.encoder.layers:
            x = layer(x, mask)
            outputs.append(x)
        return outputs

    def forward(
        self,
        tokens: torch.Tensor,
        mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: tokens (B, L) ids, mask (B, 1, 1, L) -> logits (B, L, V): at every
        position, what token stands there (the masked-token loss reads the chosen ones)."""
        return self.output(self.encode(tokens, mask, attention))  # (B, L, D) -> (B, L, V)

    def split_batch(self, batch: object) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """An (inputs, targets) batch (``data.masked_token_batches``) -> ((inputs,), targets)."""
        return split_pairs(batch, "data.masked_token_batches")

    def generation_stack(
        self, memory: torch.Tensor | None = None, src_mask: torch.Tensor | None = None
    ) -> GenerationStack | None:
        """None: each position reads the whole sentence, later tokens included, so there is
        no step that extends a sentence by one token from the tokens before it."""
        return None


def mean_over_tokens(hidden: torch.Tensor, tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """The mean of each sentence's vectors over its real tokens: padding counts for nothing,
    so a sentence gets the same vector however much its batch pads it.

    Shapes: hidden (B, L, D), tokens (B, L) ids -> (B, D).
    """
    real = (tokens != pad_id).unsqueeze(-1).to(hidden.dtype)  # (B, L) -> (B, L, 1)
    total = (hidden * real).sum(dim=1)  # (B, L, D) -> (B, D)
    return total / real.sum(dim=1).clamp(min=1)  # (B, D) / (B, 1)


class SentenceClassifier(CourseModel):
    """An encoder-only model, the mean of its vectors over each sentence's real tokens, and a
    linear layer to logits for ``n_classes`` classes (fine-tuning, Devlin et al. §4).

    Why the mean and not a first-position ``<cls>`` token: BERT reads its classification
    vector at ``[CLS]``, a vector that its pretraining fits for sentence-level use through
    the next-sentence task. Our pretraining is masked tokens only, where ``<cls>`` would be
    a position that is never predicted and that nothing asks to sum up the sentence; with
    few labels, its vector would have to learn that from them alone. Every real token's
    vector is pretrained, and their mean uses them all (padding left out, see
    :func:`mean_over_tokens`); the masked-token inputs need no extra token either.

    ``SentenceClassifier(backbone, n_classes)`` shares ``backbone`` (pretrained or not; its
    parameters are fine-tuned with the head), and states the contract of every model of the
    course (``config`` is the backbone's), so ``train``, ``accuracy`` and checkpoints take
    it. Its targets are class ids, all of them real: ``ignore_index`` is -100.

    Shapes: tokens (B, L) ids -> logits (B, C).
    """

    def __init__(self, backbone: EncoderOnlyModel, n_classes: int) -> None:
        super().__init__()
        if not isinstance(backbone, EncoderOnlyModel):
            fail("backbone", "a transformer_lib.EncoderOnlyModel", type(backbone).__name__,
                 error=TypeError)  # fmt: skip
        check_int("n_classes", n_classes, minimum=2)
        self.config = backbone.config
        self.n_classes = n_classes
        self.backbone = backbone
        self.dropout = nn.Dropout(backbone.config.dropout)
        self.head = nn.Linear(backbone.config.d_model, n_classes)

    @property
    def ignore_index(self) -> int:
        """-100, an id no class has: every label counts (``F.cross_entropy``'s default)."""
        return -100

    def sentence_vectors(self, tokens: torch.Tensor) -> torch.Tensor:
        """Shapes: tokens (B, L) ids -> (B, D), the mean over each sentence's real tokens."""
        return mean_over_tokens(self.backbone.encode(tokens), tokens, self.pad_id)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Shapes: tokens (B, L) ids -> logits (B, C)."""
        return self.head(self.dropout(self.sentence_vectors(tokens)))  # (B, D) -> (B, C)

    def split_batch(self, batch: object) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """A (tokens, labels) batch (``data.classification_batches``) -> ((tokens,), labels),
        the labels checked to be class ids (on the CPU: see ``check_labels``)."""
        inputs, labels = split_pairs(batch, "data.classification_batches")
        check_labels("labels", labels, self.n_classes)
        return inputs, labels

    def extra_repr(self) -> str:
        return f"n_classes={self.n_classes}"


def accuracy(model: CourseModel, batches: Sequence[object]) -> float:
    """The share of targets whose largest logit is the right one, ``model.ignore_index``
    left out, in eval mode without gradients: masked-token accuracy for an
    ``EncoderOnlyModel`` on masked-token batches, sentence accuracy for a classifier."""
    check_course_model("model", model)
    device = next(model.parameters()).device
    right, count = 0, 0
    with eval_no_grad(model):
        for batch in batches:
            inputs, targets = model.split_batch(batch)
            targets = targets.to(device)
            predicted = model(*(x.to(device) for x in inputs)).argmax(dim=-1)  # (B, L, V) -> (B, L)
            asked = targets != model.ignore_index
            right += int((predicted == targets)[asked].sum())
            count += int(asked.sum())
    if count == 0:
        fail("batches", "at least one target that is not left out (ignore_index)", "none")
    return right / count
