"""Notebook 07, the toy translator: the greedy decoding loop (the length penalty of beam
search is in ``ch07_length_penalty``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
from torch import nn

from transformer_lib.data.vocab import BOS_ID, EOS_ID, PAD_ID
from transformer_lib.i18n import N_, _
from transformer_lib.inference.decode import greedy_decode
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import ModelContract
from transformer_lib.model.masks import padding_mask
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import Mistake, _passed, exercise

__all__ = ["check_greedy_decode"]


class RuleTranslator(ModelContract):
    """A stand-in for ``Transformer`` whose next token is a known rule, so a check is instant.

    After the prefix ``y_0 … y_j`` (``y_0`` = ``<bos>``) it predicts ``<eos>`` once j has
    reached the source length n (counted with the source mask), else the word
    4 + (y_j + src[j] + j) mod 5: the choice depends on the token fed back, its position,
    the source and its mask. Like a real decoder it is causal (position j reads only y_0 … y_j).

    Shapes: src (B, S) -> memory (B, S, V); tgt (B, T) -> logits (B, T, V).
    """

    vocab_size = 9  # <pad> <unk> <bos> <eos> and five words

    def __init__(self) -> None:
        super().__init__()
        # the contract reads vocabulary, padding and length from it; no layer is built from it
        self.config = TransformerConfig.small(self.vocab_size, max_len=32, pad_id=PAD_ID)

    def encode(self, src: torch.Tensor, src_mask: torch.Tensor | None = None) -> torch.Tensor:
        return nn.functional.one_hot(src, self.vocab_size).float()  # (B, S) -> (B, S, V)

    def decode(
        self, tgt: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor | None
    ) -> torch.Tensor:
        B, T = tgt.shape
        src = memory.argmax(dim=-1)  # (B, S, V) -> (B, S)
        real = torch.ones_like(src, dtype=torch.bool) if src_mask is None else src_mask
        n = real.reshape(B, -1).sum(dim=1, keepdim=True)  # real source tokens (B, 1)
        j = torch.arange(T, device=tgt.device).expand(B, T)  # (B, T)
        at_j = src.gather(1, j.clamp(max=src.size(1) - 1))  # (B, T)
        word = 4 + (tgt % self.vocab_size + at_j + j) % 5
        best = torch.where(j >= n, EOS_ID, word)  # (B, T)
        logits = torch.full((B, T, self.vocab_size), -2.0, device=tgt.device)
        return logits.scatter(-1, best[..., None], 3.0)  # (B, T, V)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        src_mask = padding_mask(src, self.pad_id)
        return self.decode(tgt, self.encode(src, src_mask), src_mask)


def _library_greedy(
    model: nn.Module, src: torch.Tensor, max_len: int, bos_id: int, eos_id: int
) -> torch.Tensor:
    """The library's ``greedy_decode``, tokens only."""
    return greedy_decode(model, src, max_len=max_len, bos_id=bos_id, eos_id=eos_id)[0]


def _greedy(
    model: nn.Module,
    src: torch.Tensor,
    max_len: int,
    bos_id: int,
    eos_id: int,
    *,
    start: int | None = None,
    mask: bool = True,
    position: int = -1,
    last_only: bool = False,
    flat_argmax: bool = False,
    pad: bool = True,
    pad_eos_too: bool = False,
    stop: str | None = "all",
    extra_steps: int = 0,
    keep_bos: bool = False,
) -> torch.Tensor:
    """A greedy loop the way tutorial code writes it, with one of the usual slips switched on."""
    src_mask = padding_mask(src, model.pad_id) if mask else None  # (B, 1, 1, S)
    memory = model.encode(src, src_mask)
    B = src.size(0)
    tokens = torch.full((B, 1), bos_id if start is None else start, dtype=torch.long)
    done = torch.zeros(B, dtype=torch.bool)
    for _step in range(max_len + extra_steps):
        fed = tokens[:, -1:] if last_only else tokens  # (B, t)
        logits = model.decode(fed, memory, src_mask)[:, position]  # (B, V)
        best = logits.argmax().repeat(B) if flat_argmax else logits.argmax(dim=-1)  # (B,)
        if pad_eos_too:
            done |= best == eos_id
        if pad:
            best = best.masked_fill(done, model.pad_id)
        tokens = torch.cat([tokens, best[:, None]], dim=1)  # (B, t) -> (B, t + 1)
        done |= best == eos_id
        if stop is not None and bool(getattr(done, stop)()):
            break
    return tokens if keep_bos else tokens[:, 1:]


GREEDY_MISTAKES = (
    Mistake(
        N_("start every row with <bos> (bos_id), not zeros: 0 is <pad>."),
        partial(_greedy, start=PAD_ID),
    ),
    Mistake(
        N_("return the generated tokens without the leading <bos>: tokens[:, 1:]."),
        partial(_greedy, keep_bos=True),
    ),
    Mistake(
        N_(
            "pass the source padding mask, padding_mask(src, model.pad_id), to encode and decode: "
            "without it the model reads the padding as words."
        ),
        partial(_greedy, mask=False),
    ),
    Mistake(
        N_(
            "take the logits of the last position, logits[:, -1], and append the chosen token to "
            "the decoder input: you keep reading position 0, the prediction after <bos> alone."
        ),
        partial(_greedy, position=0),
    ),
    Mistake(
        N_(
            "feed the decoder the whole prefix (<bos> and every token so far), not only the last "
            "token: torch.cat([tokens, best[:, None]], dim=1) and decode all of it."
        ),
        partial(_greedy, last_only=True),
    ),
    Mistake(
        N_(
            "argmax(dim=-1): without dim, argmax flattens the whole (B, V) batch and returns one "
            "index for all rows (code written for one sentence breaks on a batch)."
        ),
        partial(_greedy, flat_argmax=True),
    ),
    Mistake(
        N_(
            "a row must stop at its <eos>: afterwards append model.pad_id (best.masked_fill(done, "
            "pad_id)), and leave the loop once every row is done."
        ),
        partial(_greedy, pad=False, stop=None),
    ),
    Mistake(
        N_(
            "after a row's <eos>, append model.pad_id, not the model's next guess: "
            "best.masked_fill(done, pad_id) before appending."
        ),
        partial(_greedy, pad=False),
    ),
    Mistake(
        N_(
            "leave the loop as soon as every row has produced <eos> (if done.all(): break): your "
            "output has extra columns of padding."
        ),
        partial(_greedy, stop=None),
    ),
    Mistake(
        N_("stop only when every row is done (done.all()), not when the first one is (.any())."),
        partial(_greedy, stop="any"),
    ),
    Mistake(
        N_(
            "keep the <eos> itself: pad with the `done` of the previous steps, then mark the rows "
            "that just produced <eos> (done |= best == eos_id after appending)."
        ),
        partial(_greedy, pad_eos_too=True),
    ),
    Mistake(
        N_("generate at most max_len tokens, not max_len - 1: for _ in range(max_len)."),
        partial(_greedy, extra_steps=-1),
    ),
    Mistake(
        N_("generate at most max_len tokens, not max_len + 1: for _ in range(max_len)."),
        partial(_greedy, extra_steps=1),
    ),
)


def _greedy_sources() -> list[tuple[torch.Tensor, int]]:
    """(src, max_len) cases: rows that all end well before max_len (so a loop that never
    stops shows), then rows of 3, 6, 1 and 4 words with max_len 5 (one row is cut off, one
    ends exactly at max_len: a loop off by one shows)."""
    cut = torch.tensor(
        [[5, 7, 4, 0, 0, 0], [8, 6, 4, 5, 7, 8], [6, 0, 0, 0, 0, 0], [4, 4, 8, 6, 0, 0]]
    )
    early = torch.tensor([[7, 5, 0], [6, 8, 4], [5, 0, 0]])
    return [(early, 10), (cut, 5)]


@exercise(_library_greedy, GREEDY_MISTAKES)
def check_greedy_decode(fn: Callable) -> None:
    """fn(model, src (B, S), max_len, bos_id, eos_id) -> tokens (B, L) like greedy_decode."""
    __tracebackhide__ = True
    model = RuleTranslator()
    for src, max_len in _greedy_sources():
        expected = _library_greedy(model, src, max_len, BOS_ID, EOS_ID)
        _expect(
            _("the output for a batch of {count} sentences with max_len={max_len}").format(
                count=src.size(0), max_len=max_len
            ),
            fn,
            (model, src, max_len, BOS_ID, EOS_ID),
            _library_greedy,
            GREEDY_MISTAKES,
            validate=partial(
                _tensor,
                what=_("the tokens"),
                shape=tuple(expected.shape),
                letters="(B, L)",
                dtype=torch.long,
            ),
            fallback=_(
                "Start from <bos>, append the argmax of the last position each step, "
                "pad after <eos>, stop when every row has ended or after max_len tokens."
            ),
        )
    _passed(
        _(
            "greedy decoding: equals greedy_decode (from <bos>, argmax of the last position fed "
            "back, <pad> after <eos>, stop when every row has ended)."
        )
    )
