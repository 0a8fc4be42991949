"""Translate text with a trained model: tokenize, encode, search, decode, detokenize.

Unknown words are read as ``<unk>`` and reported, never an error. ``translate`` returns
the texts, ``translate_detailed`` a :class:`Translation` each; with ``attention`` it
carries the cross-attention of every layer, read in one more teacher-forced pass.

Shapes:
    B batch, S source length, L output length, H heads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from transformer_lib._checks import (
    check_alpha,
    check_int,
    check_length,
    check_output_length,
    fail,
)
from transformer_lib.data import detokenize, tokenize
from transformer_lib.data.vocab import BOS_ID, EOS_ID, Vocab, check_vocabularies
from transformer_lib.inference.decode import beam_search, eval_no_grad, greedy_decode
from transformer_lib.model.attention import AttentionWeights
from transformer_lib.model.contract import check_model

__all__ = ["Translation", "cross_attention", "translate", "translate_detailed"]


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
) -> list[str]:
    """Translate a list of sentences: tokenize, encode, search, decode the ids, detokenize.

    Unknown words are encoded as ``<unk>``, never an error (:func:`translate_detailed`
    lists them). ``method`` is "greedy" or "beam" (``beam_size``, ``alpha``: see
    :func:`decode.beam_search`). Text with no token (``""``, spaces) translates to ``""``
    without calling the model. Returns one string per sentence, in order.
    """
    results = translate_detailed(
        model, sentences, src_vocab, tgt_vocab, method, beam_size, alpha, max_len, batch_size
    )
    return [result.text for result in results]


def translate_detailed(
    model: nn.Module,
    sentences: Sequence[str],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    method: str = "greedy",
    beam_size: int = 4,
    alpha: float = 0.6,
    max_len: int | None = None,
    batch_size: int = 64,
    attention: bool = False,
) -> list[Translation]:
    """:func:`translate`, returning a :class:`Translation` per sentence: the text, the
    tokens on both sides, the unknown words, the score and, with ``attention``, the
    cross-attention of every layer (from one more teacher-forced pass over the output).
    """
    _check_arguments(model, src_vocab, tgt_vocab, method, beam_size, alpha, max_len, batch_size)
    if isinstance(sentences, str) or not isinstance(sentences, Sequence):
        fail(
            "sentences",
            "a list of str",
            f"{type(sentences).__name__} {sentences!r:.40}",
            "Wrap a single sentence in a list: translate(model, [sentence], ...).",
            error=TypeError,
        )
    for i, sentence in enumerate(sentences):
        if not isinstance(sentence, str):
            fail(f"sentences[{i}]", "a str", type(sentence).__name__, error=TypeError)
    words = [tokenize(sentence) for sentence in sentences]
    for i, tokens in enumerate(words):
        check_length(f"sentences[{i}]", len(tokens), model.max_len)  # in tokens
    results = [Translation(sentence, "", [], [], []) for sentence in sentences]  # empty: ""
    order = sorted((i for i, tokens in enumerate(words) if tokens), key=lambda i: len(words[i]))
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        batch = _translate_batch(
            model,
            [words[i] for i in chunk],
            src_vocab,
            tgt_vocab,
            method,
            beam_size,
            alpha,
            max_len,
            attention,
        )
        for i, result in zip(chunk, batch):
            result.source = sentences[i]
            results[i] = result
    return results


def _check_arguments(model, src_vocab, tgt_vocab, method, beam_size, alpha, max_len, batch_size):
    """Everything ``translate`` is given, checked before any text is read."""
    if method not in ("greedy", "beam"):
        fail("method", "'greedy' or 'beam'", repr(method))
    check_int("beam_size", beam_size, minimum=1)
    check_alpha(alpha)
    check_int("batch_size", batch_size, minimum=1)
    check_model("model", model)
    check_vocabularies(model, src_vocab, tgt_vocab)
    if max_len is not None:
        check_output_length("max_len", max_len, model.max_len, model.max_len)


def _translate_batch(
    model, words, src_vocab, tgt_vocab, method, beam_size, alpha, max_len, attention
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
    if attention:
        _attach_attention(model, src, out, results, pad_id)
    return results


def cross_attention(model: nn.Module, src: torch.Tensor, tgt_in: torch.Tensor) -> torch.Tensor:
    """Every decoder layer's cross-attention while the model reads ``tgt_in`` (teacher
    forcing, eval mode, no gradients): row t is the step that predicts token t + 1.

    Shapes: src (B, S), tgt_in (B, T) -> (B, n_layers, H, T, S), on the CPU.
    """
    weights = AttentionWeights()
    with eval_no_grad(model):
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
