"""Notebook 10, the encoder-only model: its padding-only (bidirectional) mask and the sentence
vector its classifier reads. The masking of a batch and the masked-token loss are in
``ch10_masked_tokens``.

The expected answers are the library's: ``masks.padding_mask`` (the mask
``EncoderOnlyModel`` builds by default) and ``encoder_only.mean_over_tokens`` (what
``SentenceClassifier`` averages). The batches hold right- and left-padded rows.

Shapes:
    B batch, L sequence length, D d_model.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.i18n import N_, _
from transformer_lib.model import masks
from transformer_lib.model.encoder_only import mean_over_tokens
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import Mistake, _generator, _passed, exercise
from transformer_lib.teaching.exercises.ch04_padding import (
    LEFT_PADDING,
    _from_lengths,
    _keys,
    _padded_tokens,
    _queries,
    _validator,
)

__all__ = ["check_bidirectional_mask", "check_sentence_vector"]

# -- the padding-only mask -----------------------------------------------------------------------


def _causal(tokens: torch.Tensor) -> torch.Tensor:
    return masks.causal_mask(tokens.size(1))  # (1, 1, L, L)


BIDIRECTIONAL_MASK_MISTAKES = (
    Mistake(
        N_(
            "that is notebook 09's mask, causal AND padding: an encoder-only model reads the "
            "whole sentence, the words after a position as well as before (that is how it "
            "fills a blank from both sides). Drop the causal part: (tokens != "
            "pad_id)[:, None, None, :]."
        ),
        masks.target_mask,
    ),
    Mistake(
        N_(
            "that is the causal mask: it hides the words after each position, which an "
            "encoder-only model must read, and lets every token attend to the pads. Mask "
            "the padded keys only: (tokens != pad_id)[:, None, None, :]."
        ),
        lambda t, p: _causal(t),
    ),
    Mistake(
        N_("your mask is inverted: True must mean 'may attend', i.e. tokens != pad_id."),
        lambda t, p: (t == p)[:, None, None, :],
    ),
    Mistake(
        N_(
            "that masks padded queries (rows), not padded keys (columns): (B, 1, L, 1). Put "
            "the L axis last, (B, 1, 1, L), so that no real token attends to a pad."
        ),
        _queries,
    ),
    Mistake(
        N_(
            "you masked padded queries as well as keys, (B, 1, L, L): mask keys only, "
            "(tokens != pad_id)[:, None, None, :] -> (B, 1, 1, L). A padded query's output is "
            "never used, and a row with nothing to attend to gives NaN after a plain softmax."
        ),
        lambda t, p: _keys(t, p) & _queries(t, p),
    ),
    Mistake(
        N_(
            "add the head and query axes: mask[:, None, None, :] -> (B, 1, 1, L), so the mask "
            "broadcasts against the scores (B, H, L, L)."
        ),
        lambda t, p: t != p,
    ),
    Mistake(
        N_(
            "the pattern is right but the mask is float 0./1.: masks are torch.bool (True = "
            "may attend); ~mask, which masked_fill needs, is not defined for floats."
        ),
        lambda t, p: _keys(t, p).float(),
    ),
    Mistake(
        N_(
            "the pattern is right but the mask is an integer 0/1 tensor: on integers ~ flips "
            "the bits (~1 == -2), not True and False. Keep torch.bool: tokens != pad_id is "
            "already bool."
        ),
        lambda t, p: _keys(t, p).long(),
    ),
    Mistake(
        N_(
            "that is an additive float mask (0 / -inf, the nn.Transformer convention); here "
            "masks are torch.bool, True = may attend: (tokens != pad_id)[:, None, None, :]."
        ),
        lambda t, p: torch.zeros(_keys(t, p).shape).masked_fill(~_keys(t, p), float("-inf")),
    ),
    Mistake(N_("use the pad_id argument, not a hard-coded 0."), lambda t, p: _keys(t, 0)),
    Mistake(LEFT_PADDING, _from_lengths),
)


@exercise(masks.padding_mask, BIDIRECTIONAL_MASK_MISTAKES)
def check_bidirectional_mask(fn: Callable) -> None:
    """fn(tokens (B, L), pad_id) -> bool (B, 1, 1, L), True at real tokens: no causal part."""
    __tracebackhide__ = True
    for pad_id in (0, 3):
        tokens = _padded_tokens(104, pad_id)  # right- and left-padded rows
        what = _("the mask (pad_id={pad_id})").format(pad_id=pad_id)
        _expect(
            what,
            fn,
            (tokens, pad_id),
            masks.padding_mask,
            BIDIRECTIONAL_MASK_MISTAKES,
            validate=_validator(
                what,
                tokens,
                pad_id,
                masks.padding_mask(tokens, pad_id),
                "(B, 1, 1, L)",
                {
                    (4, 1, 6, 6): N_(
                        "Every query reads the same keys, so the mask needs no (L, L) part: "
                        "(B, 1, 1, L)."
                    )
                },
            ),
        )
    _passed(
        N_(
            "bidirectional mask: the padding mask alone, (B, 1, 1, L); every real token "
            "reads every other, before and after it."
        )
    )


# -- the sentence vector -------------------------------------------------------------------------


def _real(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    return (tokens != pad_id).unsqueeze(-1).float()  # (B, L) -> (B, L, 1)


def _masked_max(hidden, tokens, pad_id):
    """Max pooling over the real tokens."""
    padded = (tokens == pad_id).unsqueeze(-1)  # (B, L, 1)
    return hidden.masked_fill(padded, float("-inf")).max(dim=1).values  # (B, D)


SENTENCE_VECTOR_MISTAKES = (
    Mistake(
        N_(
            "that is the mean over all L positions: the padded ones count, so a sentence's "
            "vector changes with the padding its batch needs. Average over the real tokens "
            "only: sum hidden * (tokens != pad_id)[..., None] over L, then divide by the count."
        ),
        lambda h, t, p: h.mean(dim=1),
    ),
    Mistake(
        N_(
            "that is the first position's vector, as BERT reads [CLS]: BERT trains that "
            "vector on its next-sentence task, our masked-token pretraining trains nothing to "
            "sum up the sentence there, and with left padding it is a pad's. Average the real "
            "tokens' vectors."
        ),
        lambda h, t, p: h[:, 0],
    ),
    Mistake(
        N_(
            "that is the last position's vector: in a padded row it is a pad's, and a single "
            "token's vector is not the sentence's. Average the real tokens' vectors."
        ),
        lambda h, t, p: h[:, -1],
    ),
    Mistake(
        N_(
            "that is the sum over the real tokens: divide it by the number of real tokens of "
            "each row, so that long sentences do not get longer vectors."
        ),
        lambda h, t, p: (h * _real(t, p)).sum(dim=1),
    ),
    Mistake(
        N_(
            "you divided every row by L: a row with padding has fewer real tokens. Divide "
            "by each row's count, (tokens != pad_id).sum(dim=1, keepdim=True)."
        ),
        lambda h, t, p: (h * _real(t, p)).sum(dim=1) / t.size(1),
    ),
    Mistake(
        N_(
            "you divided by the number of real tokens in the whole batch: count each row's, "
            "(tokens != pad_id).sum(dim=1, keepdim=True) -> (B, 1)."
        ),
        lambda h, t, p: (h * _real(t, p)).sum(dim=1) / _real(t, p).sum(),
    ),
    Mistake(
        N_(
            "hidden[tokens != pad_id] flattens the batch: its mean is one vector for all "
            "sentences together. Keep the rows apart: multiply by the mask and sum over L."
        ),
        lambda h, t, p: h[t != p].mean(dim=0),
    ),
    Mistake(
        N_(
            "that is max pooling over the real tokens, another pooling; the course's "
            "classifier averages them (mean_over_tokens): sum the real tokens' vectors, "
            "divide by their count."
        ),
        _masked_max,
    ),
    Mistake(
        N_(
            "that is the maximum over all L positions, the pads included: average the real "
            "tokens' vectors instead."
        ),
        lambda h, t, p: h.max(dim=1).values,
    ),
    Mistake(
        N_(
            "the mask (B, L) does not broadcast against hidden (B, L, D): give it a last "
            "axis, (tokens != pad_id).unsqueeze(-1) -> (B, L, 1)."
        ),
        lambda h, t, p: (h * (t != p)).sum(dim=1) / (t != p).sum(dim=1, keepdim=True),
    ),
    Mistake(
        N_("use the pad_id argument, not a hard-coded 0."),
        lambda h, t, p: mean_over_tokens(h, t, 0),
    ),
)


@exercise(mean_over_tokens, SENTENCE_VECTOR_MISTAKES)
def check_sentence_vector(fn: Callable) -> None:
    """fn(hidden (B, L, D), tokens (B, L), pad_id) -> (B, D): the mean over each sentence's
    real tokens."""
    __tracebackhide__ = True
    for seed, pad_id in ((105, 0), (106, 3)):
        tokens = _padded_tokens(seed, pad_id)  # (4, 6): right- and left-padded rows
        hidden = torch.randn(4, 6, 8, generator=_generator(seed + 10))  # (B, L, D)
        what = _("the sentence vectors (pad_id={pad_id})").format(pad_id=pad_id)
        _expect(
            what,
            fn,
            (hidden, tokens, pad_id),
            mean_over_tokens,
            SENTENCE_VECTOR_MISTAKES,
            validate=partial(_tensor, what=what, shape=(4, 8), letters="(B, D)"),
            fallback=N_(
                "Row b: the sum of hidden[b, l] over its real tokens (tokens[b, l] != "
                "pad_id), divided by their number."
            ),
        )
    _passed(
        N_(
            "sentence vector: the mean over each sentence's real tokens, (B, D); padding "
            "counts for nothing, so a sentence gets the same vector in any batch."
        )
    )
