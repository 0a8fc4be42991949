"""Translate text with a trained model: tokenize, encode, search, decode, detokenize.

Unknown words are read as ``<unk>`` and reported, never an error. With
``return_attention`` each result carries the cross-attention of every layer, read in one
more teacher-forced pass over the output.

Shapes:
    B batch, S source length, L output length, H heads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, overload

import torch
from torch import nn

from transformer_lib._checks import (
    check_alpha,
    check_int,
    check_length,
    check_model,
    check_output_length,
    fail,
)
from transformer_lib.attention import AttentionWeights
from transformer_lib.data import detokenize, tokenize
from transformer_lib.decode import beam_search, greedy_decode, inference_mode
from transformer_lib.vocab import BOS_ID, EOS_ID, Vocab, check_vocabularies

__all__ = ["Translation", "cross_attention", "translate"]


@dataclass
class Translation:
    """One translated sentence, with what the model saw and where it looked.

    Shapes: cross_attention (n_layers, H, T, S): row t is the decoder step that produced
    ``tgt_tokens[t]``, column s the source token ``src_tokens[s]``.
    """

    source: str
    text: str
    src_tokens: list[str]  # as the model saw them: unknown words become <unk>
    tgt_tokens: list[str]  # the output, ending with <eos> when one was produced
    unknown: list[str]  # source words missing from the vocabulary
    score: float | None = None  # log-probability (length-normalised for beam search)
    cross_attention: torch.Tensor | None = None


# One static return type per call. A str is also a Sequence[str]; overloads are tried in
# order, so a str matches the first one (mypy still reports the overlap; it is harmless).
@overload
def translate(
    model: nn.Module,
    sentences: str,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    method: str = "greedy",
    beam_size: int = 4,
    alpha: float = 0.6,
    max_len: int | None = None,
    batch_size: int = 64,
    return_attention: Literal[False] = False,
) -> str: ...


@overload
def translate(
    model: nn.Module,
    sentences: Sequence[str],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    method: str = "greedy",
    beam_size: int = 4,
    alpha: float = 0.6,
    max_len: int | None = None,
    batch_size: int = 64,
    return_attention: Literal[False] = False,
) -> list[str]: ...


@overload
def translate(
    model: nn.Module,
    sentences: str,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    method: str = "greedy",
    beam_size: int = 4,
    alpha: float = 0.6,
    max_len: int | None = None,
    batch_size: int = 64,
    *,
    return_attention: Literal[True],
) -> Translation: ...


@overload
def translate(
    model: nn.Module,
    sentences: Sequence[str],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    method: str = "greedy",
    beam_size: int = 4,
    alpha: float = 0.6,
    max_len: int | None = None,
    batch_size: int = 64,
    *,
    return_attention: Literal[True],
) -> list[Translation]: ...


def translate(
    model: nn.Module,
    sentences: str | Sequence[str],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    method: str = "greedy",
    beam_size: int = 4,
    alpha: float = 0.6,
    max_len: int | None = None,
    batch_size: int = 64,
    return_attention: bool = False,
) -> str | list[str] | Translation | list[Translation]:
    """Translate text: tokenize, encode, search, decode the ids, detokenize.

    Unknown words are encoded as ``<unk>`` (listed in ``Translation.unknown``), never an
    error. ``method`` is "greedy" or "beam" (``beam_size``, ``alpha``: see
    :func:`decode.beam_search`). Text with no token (``""``, spaces) translates to ``""``
    without calling the model. Returns a string per sentence, or with
    ``return_attention`` a :class:`Translation` holding the cross-attention of every layer
    (from one more teacher-forced pass over the output). A single string in gives a single
    result out.
    """
    _check_arguments(model, src_vocab, tgt_vocab, method, beam_size, alpha, max_len, batch_size)
    single = isinstance(sentences, str)
    items = [sentences] if single else list(sentences)
    for i, sentence in enumerate(items):
        if not isinstance(sentence, str):
            fail(f"sentences[{i}]", "a str", type(sentence).__name__, error=TypeError)
    words = [tokenize(sentence) for sentence in items]
    for i, tokens in enumerate(words):
        check_length(f"sentences[{i}]", len(tokens), model.max_len)  # in tokens
    results: list[Translation | None] = [None] * len(items)
    order = sorted((i for i, tokens in enumerate(words) if tokens), key=lambda i: len(words[i]))
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        for i, result in zip(
            chunk,
            _translate_batch(
                model,
                [words[i] for i in chunk],
                src_vocab,
                tgt_vocab,
                method,
                beam_size,
                alpha,
                max_len,
                return_attention,
            ),
        ):
            result.source = items[i]
            results[i] = result
    for i, tokens in enumerate(words):
        if not tokens:  # nothing to translate
            results[i] = Translation(items[i], "", [], [], [])
    out = results if return_attention else [r.text for r in results]
    return out[0] if single else out


def _check_arguments(model, src_vocab, tgt_vocab, method, beam_size, alpha, max_len, batch_size):
    """Everything ``translate`` is given, checked before any text is read."""
    if method not in ("greedy", "beam"):
        fail("method", "'greedy' or 'beam'", repr(method))
    check_int("beam_size", beam_size, minimum=1)
    check_alpha(alpha)
    check_int("batch_size", batch_size, minimum=1)
    check_model("model", model, "pad_id", "max_len", "src_vocab_size", "tgt_vocab_size")
    check_vocabularies(model, src_vocab, tgt_vocab)
    if max_len is not None:
        check_output_length("max_len", max_len, model.max_len)


def _translate_batch(
    model, words, src_vocab, tgt_vocab, method, beam_size, alpha, max_len, return_attention
) -> list[Translation]:
    device, pad_id = next(model.parameters()).device, model.pad_id
    ids = [src_vocab.encode(tokens) for tokens in words]
    src = torch.full((len(ids), max(map(len, ids))), pad_id, dtype=torch.long)
    for b, row in enumerate(ids):
        src[b, : len(row)] = torch.tensor(row)
    src = src.to(device)  # (B, S)
    if method == "greedy":
        out, scores = greedy_decode(model, src, max_len=max_len)
    else:
        out, scores = beam_search(model, src, beam_size=beam_size, max_len=max_len, alpha=alpha)
    results = []
    for b, tokens in enumerate(words):
        row = [i for i in out[b].tolist() if i != pad_id]
        text_tokens = tgt_vocab.decode(row)  # stops at <eos>, drops specials
        results.append(
            Translation(
                source="",
                text=detokenize(text_tokens),
                src_tokens=[t if t in src_vocab else src_vocab.UNK for t in tokens],
                tgt_tokens=[tgt_vocab.id_to_token(i) for i in row],
                unknown=[t for t in tokens if t not in src_vocab],
                score=float(scores[b]),
            )
        )
    if return_attention:
        _attach_attention(model, src, out, results, pad_id)
    return results


def cross_attention(model: nn.Module, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
    """Every decoder layer's cross-attention while the model reads ``tgt_in`` (teacher
    forcing, eval mode, no gradients): row t is the step that predicts token t + 1.

    Shapes: src (B, S), tgt_in (B, T) -> (B, n_layers, H, T, S), on the CPU.
    """
    weights = AttentionWeights()
    with inference_mode(model):
        model(src, tgt_in, attention=weights)
    return torch.stack(weights.cross, dim=1).cpu()  # n_layers x (B, H, T, S) -> (B, n_layers, ...)


def _attach_attention(model, src, out, results, pad_id) -> None:
    """Teacher-force the outputs once more to read each layer's cross-attention."""
    B = out.size(0)
    bos = torch.full((B, 1), BOS_ID, dtype=torch.long, device=out.device)
    tgt_in = torch.cat([bos, out[:, :-1]], dim=1)  # (B, L): row t predicts out[:, t]
    tgt_in = tgt_in.masked_fill(tgt_in == EOS_ID, pad_id)
    cross = cross_attention(model, src, tgt_in)  # (B, n_layers, H, L, S)
    for b, result in enumerate(results):
        T, S = len(result.tgt_tokens), len(result.src_tokens)
        result.cross_attention = cross[b, :, :, :T, :S]  # (n_layers, H, T, S)
