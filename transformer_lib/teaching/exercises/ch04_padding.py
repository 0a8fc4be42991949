"""Notebook 04, masking: the padding and target masks (bool, True = may attend).

The expected answers are ``transformer_lib.model.masks``' own; the test batch holds right- and
left-padded rows, so masking padded queries (rows) and padded keys (columns) differ, and
so do a mask from the tokens and one from the sentence lengths.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from transformer_lib.i18n import N_, _
from transformer_lib.model import masks
from transformer_lib.teaching.exercises._compare import _expect
from transformer_lib.teaching.exercises._core import (
    ExerciseFailed,
    Mistake,
    _generator,
    _passed,
    exercise,
)
from transformer_lib.teaching.exercises.ch04_masking import _bool_mask, _reshaped

__all__ = ["check_padding_mask", "check_target_mask"]


def _padded_tokens(seed: int, pad_id: int) -> torch.Tensor:
    """(4, 6) ids: right-padded to length 3, left-padded by 2, full, right-padded to 5.

    Id 0 is a real token when pad_id != 0.
    """
    g = _generator(seed)
    tokens = torch.randint(4, 20, (4, 6), generator=g)  # never 0..3: no accidental pad
    tokens[0, 3:], tokens[1, :2], tokens[3, 5:] = pad_id, pad_id, pad_id
    if pad_id:
        tokens[2, 0] = 0
    return tokens


def _keys(tokens, pad_id):
    return (tokens != pad_id)[:, None, None, :]  # (B, S) -> (B, 1, 1, S)


def _queries(tokens, pad_id):
    return (tokens != pad_id)[:, None, :, None]  # (B, S) -> (B, 1, S, 1)


def _square(tokens):
    return (tokens.size(0), 1, tokens.size(1), tokens.size(1))  # (B, 1, S, S)


def _from_lengths(tokens, pad_id):
    """The tutorials' mask from sentence lengths: position s is real if s < length, which
    holds for right padding only."""
    lengths = (tokens != pad_id).sum(dim=1)  # (B, S) -> (B,)
    return (torch.arange(tokens.size(1)) < lengths[:, None])[:, None, None, :]  # (B, 1, 1, S)


LEFT_PADDING = N_(
    "the mask must also work with left padding: this batch has rows that start with pads. A "
    "mask from the sentence lengths (position < length) assumes the pads come last; compare "
    "each token with pad_id instead: tokens != pad_id."
)


def _validator(what: str, tokens, pad_id: int, expected, letters: str, shape_hints) -> Callable:
    """The diagnosis of a padding or target mask: its shape and dtype, then whether it is
    right on every row but those padded on the left."""

    def validate(got):
        __tracebackhide__ = True
        got = _bool_mask(got, what, expected, letters, shape_hints)
        left = tokens[:, 0] == pad_id  # (B,): rows that start with a pad
        right = (got == expected).flatten(1).all(dim=1)  # (B, 1, T, S) -> (B,)
        if right[~left].all() and not right[left].all():
            raise ExerciseFailed(_("{what}: {hint}").format(what=what, hint=_(LEFT_PADDING)))
        return got

    return validate


PADDING_MASK_MISTAKES = (
    Mistake(
        N_("your mask is inverted: True must mean 'may attend', i.e. tokens != pad_id."),
        lambda t, p: (t == p)[:, None, None, :],
    ),
    Mistake(N_("use the pad_id argument, not a hard-coded 0."), lambda t, p: _keys(t, 0)),
    Mistake(LEFT_PADDING, _from_lengths),
    Mistake(
        N_(
            "that is PyTorch's key_padding_mask, (B, S) and True at the pads (= blocked). Here "
            "True means may attend, shaped (B, 1, 1, S): (tokens != pad_id)[:, None, None, :]."
        ),
        lambda t, p: t == p,
    ),
    Mistake(
        N_(
            "add the head and query axes: mask[:, None, None, :] -> (B, 1, 1, S), so the mask "
            "broadcasts against the scores (B, H, T, S)."
        ),
        lambda t, p: t != p,
    ),
    Mistake(
        N_(
            "(B, 1, S) lines the batch up with the head axis of the scores (B, H, T, S): add "
            "both size-1 axes, mask[:, None, None, :] -> (B, 1, 1, S)."
        ),
        lambda t, p: (t != p)[:, None, :],
    ),
    Mistake(
        N_(
            "that masks padded queries (rows), not padded keys (columns): (B, 1, S, 1). Put the "
            "S axis last, (B, 1, 1, S). "
            "A padded query's output is never used, and masking its row leaves it nothing to "
            "attend to (NaN after a plain softmax, which spreads to the next layer)."
        ),
        _queries,
    ),
    Mistake(
        N_(
            "that masks whole rows (padded queries), not columns (padded keys). Mask keys only, "
            "with the S axis last: (B, 1, 1, S). "
            "A padded query's output is never used, and masking its row leaves it nothing to "
            "attend to (NaN after a plain softmax, which spreads to the next layer)."
        ),
        lambda t, p: _queries(t, p).expand(_square(t)),
    ),
    Mistake(
        N_(
            "you masked padded queries as well as keys, (B, 1, S, S): mask keys only, "
            "(tokens != pad_id)[:, None, None, :] -> (B, 1, 1, S). "
            "A padded query's output is never used, and masking its row leaves it nothing to "
            "attend to (NaN after a plain softmax, which spreads to the next layer)."
        ),
        lambda t, p: _keys(t, p) & _queries(t, p),
    ),
    Mistake(
        N_(
            "(B, S, S) masks padded queries as well as keys and has no head axis: mask keys "
            "only, (tokens != pad_id)[:, None, None, :] -> (B, 1, 1, S). "
            "A padded query's output is never used, and masking its row leaves it nothing to "
            "attend to (NaN after a plain softmax, which spreads to the next layer)."
        ),
        lambda t, p: (t != p)[:, None, :] & (t != p)[:, :, None],
    ),
    Mistake(
        N_(
            "that is the get_attn_pad_mask of many tutorials: True at the pads (blocked), "
            "expanded to (B, S, S). Here True means may attend and the mask keeps size-1 axes: "
            "(tokens != pad_id)[:, None, None, :] -> (B, 1, 1, S)."
        ),
        lambda t, p: (t == p)[:, None, :].expand(t.size(0), t.size(1), t.size(1)),
    ),
    Mistake(
        N_(
            "right values, but keep the query axis of size 1: (B, 1, 1, S) broadcasts against any "
            "number of queries T (cross-attention has T != S); don't expand it to (B, 1, S, S)."
        ),
        lambda t, p: _keys(t, p).expand(_square(t)),
    ),
)


@exercise(masks.padding_mask, PADDING_MASK_MISTAKES)
def check_padding_mask(fn: Callable) -> None:
    """fn(tokens (B, S), pad_id) -> bool (B, 1, 1, S), True at real (non-pad) tokens."""
    __tracebackhide__ = True
    for pad_id in (0, 3):
        tokens = _padded_tokens(6, pad_id)
        what = f"padding_mask(tokens, pad_id={pad_id})"
        _expect(
            what,
            fn,
            (tokens, pad_id),
            masks.padding_mask,
            PADDING_MASK_MISTAKES,
            validate=_validator(
                what,
                tokens,
                pad_id,
                masks.padding_mask(tokens, pad_id),
                "(B, 1, 1, S)",
                {(4, 6, 1, 1): N_("Padding masks keys: the S axis goes last, (B, 1, 1, S).")},
            ),
        )
    _passed(N_("padding mask: real tokens True, <pad> False, shaped (B, 1, 1, S)."))


def _causal(tgt):
    return masks.causal_mask(tgt.size(1))  # (1, 1, T, T)


TARGET_MASK_MISTAKES = (
    Mistake(
        N_(
            "that is the causal mask alone: AND it with the padding mask (B, 1, 1, T) so padded "
            "keys are blocked too."
        ),
        lambda t, p: _causal(t),
    ),
    Mistake(
        N_(
            "that is the padding mask alone: AND it with the causal mask (1, 1, T, T) so the "
            "future is blocked too."
        ),
        lambda t, p: _keys(t, p),
    ),
    Mistake(
        N_(
            "combine with AND (&): a key must be both in the past and not padding; OR lets too "
            "much through."
        ),
        lambda t, p: _causal(t) | _keys(t, p),
    ),
    Mistake(
        N_("your mask is inverted: True must mean 'may attend' (a past, non-pad key)."),
        lambda t, p: ~(_causal(t) & _keys(t, p)),
    ),
    Mistake(
        N_(
            "diagonal excluded: position t may attend to itself; the causal part is "
            "key s <= query t."
        ),
        lambda t, p: _keys(t, p) & torch.tril(torch.ones(t.size(1), t.size(1)), -1).bool(),
    ),
    Mistake(
        N_("use the pad_id argument, not a hard-coded 0."), lambda t, p: masks.target_mask(t, 0)
    ),
    Mistake(
        N_(
            "you masked padded queries (rows) instead of padded keys (columns): the padding part "
            "is (tgt != pad_id)[:, None, None, :], shape (B, 1, 1, T)."
        ),
        lambda t, p: _causal(t) & _queries(t, p),
    ),
    Mistake(
        N_(
            "you masked the padded query rows as well as the keys: mask keys only, padding (B, 1, "
            "1, T) & causal (1, 1, T, T). "
            "A padded query's output is never used, and masking its row leaves it nothing to "
            "attend to (NaN after a plain softmax, which spreads to the next layer)."
        ),
        lambda t, p: _causal(t) & _keys(t, p) & _queries(t, p),
    ),
)


@exercise(masks.target_mask, TARGET_MASK_MISTAKES)
def check_target_mask(fn: Callable) -> None:
    """fn(tgt (B, T), pad_id) -> bool (B, 1, T, T): causal AND not padding (keys)."""
    __tracebackhide__ = True
    for pad_id in (0, 3):
        tgt = _padded_tokens(7, pad_id)
        shape, what = (4, 1, 6, 6), f"target_mask(tgt, pad_id={pad_id})"
        _expect(
            what,
            _reshaped(fn, shape, broadcast=True),
            (tgt, pad_id),
            masks.target_mask,
            [Mistake(m.hint, _reshaped(m.fn, shape, broadcast=True)) for m in TARGET_MASK_MISTAKES],
            validate=_validator(
                what,
                tgt,
                pad_id,
                masks.target_mask(tgt, pad_id),
                "(B, 1, T, T)",
                {(4, 6, 6): N_("Keep the head axis: (B, 1, T, T).")},
            ),
        )
    _passed(N_("target mask: causal AND padding (keys only), shaped (B, 1, T, T)."))
