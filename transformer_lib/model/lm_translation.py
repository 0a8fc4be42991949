"""Translation as language modelling: a ``LanguageModel`` reads "English ``<sep>`` German"
(notebook 09, section 3).

One sequence per pair: the source's tokens, ``<sep>``, the target's tokens, ``<eos>``, all in
one vocabulary (``data.joint_vocab``). The model predicts the next token everywhere, but the
loss counts only the German part: the source is the prompt, given, never predicted.

:class:`LanguageModelTranslator` wraps the language model in the encoder-decoder's
contract (``contract.ModelContract``), so that ``train``, ``greedy_decode``,
``beam_search``, ``translate`` and the BLEU of ``evaluate`` take it unchanged, on the
same batches (``data.make_batches``) as notebook 07's translator:

- ``encode(src)`` has nothing to compute: the "memory" is the source ids themselves;
- ``forward(src, tgt)`` is the contract's (teacher forcing), and
  ``decode(tgt, src, src_mask)`` runs the language model over each row's source tokens
  followed by ``tgt``, whose first token, ``<bos>``, is read as ``<sep>``, and returns the
  logits at ``tgt``'s positions: exactly the German part, so the loss is masked on the
  prompt by construction (notebook 09's exercise masks it by hand instead).

Rows are packed without padding between source and target (a padded source would move the
target's positions by the amount of padding, so a sentence would be translated differently
in different batches): row b is ``src[b, :n_b]``, then ``tgt[b]``, then padding.

Shapes:
    B batch, S source length, T target length, L = S + T, V joint vocabulary.
"""

from __future__ import annotations

import torch

from transformer_lib._checks import check_int, check_length, check_token_ids, fail
from transformer_lib.model.attention import AttentionWeights
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import GenerationStack, ModelContract
from transformer_lib.model.language_model import LanguageModel

__all__ = ["LanguageModelTranslator"]


class LanguageModelTranslator(ModelContract):
    """A ``LanguageModel`` with the encoder-decoder's contract (see the module's text).

    ``config`` is the language model's (one vocabulary: ``src_vocab_size ==
    tgt_vocab_size``); ``sep_id`` is ``<sep>``'s id in it.

    Shapes: src (B, S), tgt (B, T) -> logits (B, T, V).
    """

    def __init__(self, config: TransformerConfig, sep_id: int) -> None:
        super().__init__()
        self.language_model = LanguageModel(config)
        self.config = config
        check_int("sep_id", sep_id, minimum=0)
        if sep_id >= config.tgt_vocab_size:
            expected = "an id below the vocabulary size {size}"
            fail("sep_id", expected, repr(sep_id), size=config.tgt_vocab_size)
        self.sep_id = sep_id

    def encode(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: src (B, S) -> (B, S): the source ids are what ``decode`` reads."""
        if attention is not None:
            fail("attention", "None: a decoder-only model has no cross-attention to record",
                 "an AttentionWeights", "translate_detailed(..., attention=False)")  # fmt: skip
        check_token_ids("src", src, self.src_vocab_size, "(B, S)")
        return src

    def output_room(self, src_len: int) -> int:
        """Source and output share one sequence: S + T <= max_len."""
        return self.max_len - src_len

    def generation_stack(
        self, memory: torch.Tensor | None = None, src_mask: torch.Tensor | None = None
    ) -> GenerationStack:
        """The language model's stack, reading the source ids (``memory``, padded at the
        end) before the output: the output's first token (``<bos>``) is read as ``<sep>``
        at position n_b, right after row b's n_b real source tokens."""
        stack = self.language_model.generation_stack()
        stack.prefix = memory  # (N, S) ids; its padding is never attended to
        stack.start = (memory != self.pad_id).sum(dim=1, keepdim=True)  # (N, 1)
        stack.first_token = self.sep_id
        return stack

    def decode(
        self, tgt: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None
    ) -> torch.Tensor:
        """Shapes: tgt (B, T) ids starting with ``<bos>``, memory = src (B, S) ids padded
        at the end -> logits (B, T, V) at the target's positions. The source's padding is
        read from its ids; ``src_mask`` is not needed."""
        src = memory
        check_token_ids("tgt", tgt, self.tgt_vocab_size, "(B, T)", min_length=1)
        if src.dim() != 2 or src.size(0) != tgt.size(0):
            fail("memory", "the source ids (B, S) with B={B}", f"shape {tuple(src.shape)}",
                 "Pass what encode() returned.", B=tgt.size(0))  # fmt: skip
        real = src != self.pad_id  # (B, S)
        if not torch.equal(real, real.cummin(dim=1).values):
            fail("src", "padding only at the end of each row", "padding between tokens")
        B, S = src.shape
        T = tgt.size(1)
        check_length("source + target", S + T, self.max_len)
        n = real.sum(dim=1)  # (B,) real source tokens per row
        where = n[:, None] + torch.arange(T, device=tgt.device)  # (B, T): tgt's positions
        sequence = torch.full((B, S + T), self.pad_id, dtype=tgt.dtype, device=tgt.device)
        sequence[:, :S] = src
        read = tgt.clone()
        read[:, 0] = self.sep_id  # <bos> y -> <sep> y
        sequence.scatter_(1, where, read)
        logits = self.language_model(sequence)  # (B, L, V)
        V = logits.size(-1)
        return logits.gather(1, where[..., None].expand(B, T, V))  # (B, L, V) -> (B, T, V)
