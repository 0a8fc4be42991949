"""Notebook 09, the decoder-only model: its attention mask and the next-token targets (the
loss masked on the prompt is in ``ch09_prompt_loss``, one sampling step in
``ch09_sampling``).

The expected answers are the library's: ``masks.target_mask``, and the shift of
``language_model_batches`` (inputs ``<bos> y``, targets ``y <eos>``).

Shapes:
    B batch, L sequence length.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

from transformer_lib.data.vocab import BOS_ID, EOS_ID
from transformer_lib.i18n import N_, _
from transformer_lib.model import masks
from transformer_lib.teaching.exercises._compare import _diagnose, _expect, _tensor
from transformer_lib.teaching.exercises._core import (
    ExerciseFailed,
    Mistake,
    _generator,
    _name,
    _passed,
    exercise,
)
from transformer_lib.teaching.exercises.ch04_masking import _reshaped
from transformer_lib.teaching.exercises.ch04_padding import (
    _keys,
    _padded_tokens,
    _queries,
    _validator,
)

__all__ = ["check_decoder_only_mask", "check_next_token_targets"]

# -- the decoder-only mask ---------------------------------------------------------------------


def _triangle(tokens: torch.Tensor, diagonal: int = 0, upper: bool = False) -> torch.Tensor:
    ones = torch.ones(tokens.size(1), tokens.size(1), dtype=torch.bool)  # (L, L)
    return (torch.triu(ones, diagonal) if upper else torch.tril(ones, diagonal))[None, None]


DECODER_ONLY_MASK_MISTAKES = (
    Mistake(
        N_(
            "that is the causal mask alone: a row that starts with padding (left padding, as "
            "batched generation uses) lets its tokens attend to the pads. AND it with the "
            "padding mask (tokens != pad_id)[:, None, None, :]."
        ),
        lambda t, p: _triangle(t),
    ),
    Mistake(
        N_(
            "that is the padding mask alone: every position sees the whole sequence, the "
            "token it must predict included. AND it with the causal mask (1, 1, L, L)."
        ),
        _keys,
    ),
    Mistake(
        N_(
            "that is the upper triangle (key s >= query t): each position attends to the "
            "future, the very tokens it must predict. Keep key s <= query t: torch.tril."
        ),
        lambda t, p: _keys(t, p) & _triangle(t, upper=True),
    ),
    Mistake(
        N_(
            "diagonal excluded: a position may attend to itself (it predicts the next token "
            "from its own); keep key s <= query t, torch.tril with diagonal=0."
        ),
        lambda t, p: _keys(t, p) & _triangle(t, -1),
    ),
    Mistake(
        N_(
            "you masked padded queries (rows) instead of padded keys (columns): the padding "
            "part is (tokens != pad_id)[:, None, None, :], shape (B, 1, 1, L)."
        ),
        lambda t, p: _triangle(t) & _queries(t, p),
    ),
    Mistake(
        N_(
            "your mask is inverted: True = blocked is nn.MultiheadAttention's convention; "
            "here True means 'may attend' (a key in the past that is not padding)."
        ),
        lambda t, p: ~(_triangle(t) & _keys(t, p)),
    ),
    Mistake(
        N_("use the pad_id argument, not a hard-coded 0."), lambda t, p: _keys(t, 0) & _triangle(t)
    ),
    Mistake(
        N_(
            "the right pattern, but (B, L, L) has no head axis: against the scores (B, H, L, "
            "L) the batch lines up with the heads. Keep a size-1 head axis: (B, 1, L, L)."
        ),
        lambda t, p: masks.target_mask(t, p).squeeze(1),
    ),
)


@exercise(masks.target_mask, DECODER_ONLY_MASK_MISTAKES)
def check_decoder_only_mask(fn: Callable) -> None:
    """fn(tokens (B, L), pad_id) -> bool (B, 1, L, L): causal AND not padding (keys)."""
    __tracebackhide__ = True
    for pad_id in (0, 3):
        tokens = _padded_tokens(9, pad_id)  # right- and left-padded rows
        shape, what = (4, 1, 6, 6), _("the mask (pad_id={pad_id})").format(pad_id=pad_id)
        _expect(
            what,
            _reshaped(fn, shape, broadcast=True),
            (tokens, pad_id),
            masks.target_mask,
            [
                Mistake(m.hint, _reshaped(m.fn, shape, broadcast=True))
                for m in DECODER_ONLY_MASK_MISTAKES
            ],
            validate=_validator(
                what,
                tokens,
                pad_id,
                masks.target_mask(tokens, pad_id),
                "(B, 1, L, L)",
                {(4, 6, 6): N_("Keep the head axis: (B, 1, L, L).")},
            ),
        )
    _passed(
        N_(
            "decoder-only mask: causal AND padding (keys only), shaped (B, 1, L, L): the "
            "decoder's target mask, unchanged."
        )
    )


# -- next-token targets ------------------------------------------------------------------------


def _shifted(sequences: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Position i reads the tokens up to i and predicts token i + 1."""
    return sequences[:, :-1], sequences[:, 1:]  # (B, L) -> (B, L - 1), (B, L - 1)


def _sequences(seed: int, lengths: tuple[int, ...], pad_id: int = 0) -> torch.Tensor:
    """(B, L) rows ``<bos> y <eos>`` padded with ``pad_id``; ``lengths`` are y's."""
    g = _generator(seed)
    rows = [[BOS_ID, *torch.randint(4, 20, (n,), generator=g).tolist(), EOS_ID] for n in lengths]
    L = max(map(len, rows))
    return torch.tensor([row + [pad_id] * (L - len(row)) for row in rows])


def _as_tuple(fn: Callable) -> Callable:
    """``fn`` with a list result turned into a tuple (both are right)."""

    @functools.wraps(fn)
    def pair(*args):
        result = fn(*args)
        return tuple(result) if isinstance(result, list) else result

    return pair if callable(fn) else fn


NEXT_TOKEN_TARGETS_MISTAKES = (
    Mistake(
        N_(
            "the targets equal the inputs: a model asked for the token it reads learns to "
            "copy. Shift by one: targets = sequences[:, 1:], position i predicts token i + 1."
        ),
        lambda s: (s[:, :-1], s[:, :-1]),
    ),
    Mistake(
        N_(
            "no shift at all: inputs and targets are the whole sequence. Inputs are all but "
            "the last token, sequences[:, :-1]; targets all but the first, sequences[:, 1:]."
        ),
        lambda s: (s, s),
    ),
    Mistake(
        N_(
            "shifted the wrong way: your targets are the previous tokens. Inputs = "
            "sequences[:, :-1], targets = sequences[:, 1:] (the next tokens)."
        ),
        lambda s: (s[:, 1:], s[:, :-1]),
    ),
    Mistake(
        N_(
            "torch.roll wraps around: the last position's target becomes the row's first "
            "token (<bos>), and the inputs keep the last token, which has nothing to predict. "
            "Slice instead: sequences[:, :-1], sequences[:, 1:]."
        ),
        lambda s: (s, s.roll(-1, dims=1)),
    ),
    Mistake(
        N_(
            "you dropped the first column of both: the inputs lose <bos> (which predicts the "
            "first word) and the targets equal the inputs. Drop the inputs' last column and "
            "the targets' first."
        ),
        lambda s: (s[:, 1:], s[:, 1:]),
    ),
    Mistake(
        N_(
            "the inputs keep their last column: drop it, sequences[:, :-1], so that inputs "
            "and targets both have L - 1 columns and line up position by position."
        ),
        lambda s: (s, s[:, 1:]),
    ),
)


def _targets_validator(fn: Callable, sequences: torch.Tensor) -> Callable:
    """Both tensors' type, shape and dtype, then which of the two differs and where."""

    def validate(got) -> None:
        __tracebackhide__ = True
        if not isinstance(got, tuple) or len(got) != 2:
            raise ExerciseFailed(
                _("{name} must return a tuple (inputs, targets); got {kind}.").format(
                    name=_name(fn), kind=type(got).__name__
                )
            )
        shape = (sequences.size(0), sequences.size(1) - 1)
        names = (_("the input tensor"), _("the target tensor"))
        for what, value, expected in zip(names, got, _shifted(sequences)):
            value = _tensor(value, what, shape, "(B, L - 1)", dtype=torch.long)
            _diagnose(
                what, value, expected, N_("inputs = sequences[:, :-1], targets = sequences[:, 1:].")
            )

    return validate


@exercise(_shifted, NEXT_TOKEN_TARGETS_MISTAKES)
def check_next_token_targets(fn: Callable) -> None:
    """fn(sequences (B, L) ids, rows ``<bos> y <eos>`` then padding) -> (inputs (B, L - 1),
    targets (B, L - 1)): the inputs and the next tokens."""
    __tracebackhide__ = True
    for seed, lengths in ((90, (3, 5, 1, 4)), (91, (2, 6))):
        sequences = _sequences(seed, lengths)
        _expect(
            _("the pair (inputs, targets) for {count} sequences").format(count=len(lengths)),
            _as_tuple(fn),
            (sequences,),
            _shifted,
            NEXT_TOKEN_TARGETS_MISTAKES,
            validate=_targets_validator(fn, sequences),
        )
    _passed(
        N_(
            "next-token targets: inputs = sequences[:, :-1], targets = sequences[:, 1:]; "
            "position i predicts token i + 1."
        )
    )
