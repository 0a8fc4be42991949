"""Notebook 09, the decoder-only model: its attention mask, the next-token targets, the
loss masked on the prompt (translation as language modelling), and the distribution one
sampling step draws from.

The expected answers are the library's: ``masks.target_mask``; the shift of
``language_model_batches`` (inputs ``<bos> y``, targets ``y <eos>``); the targets
``lm_translation.LanguageModelTranslator`` scores (its logits start at ``<sep>``); and the
distribution ``language_model.sample_next`` draws from.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from transformer_lib import masks
from transformer_lib.exercises._compare import _diagnose, _expect, _tensor
from transformer_lib.exercises._core import (
    ExerciseFailed,
    Mistake,
    _generator,
    _name,
    _passed,
    exercise,
)
from transformer_lib.exercises.ch04_masking import _reshaped
from transformer_lib.exercises.ch04_padding import _keys, _padded_tokens, _queries, _validator
from transformer_lib.i18n import N_, _
from transformer_lib.language_model import next_token_distribution
from transformer_lib.vocab import BOS_ID, EOS_ID

__all__ = [
    "check_decoder_only_mask",
    "check_next_token_targets",
    "check_prompt_loss_mask",
    "check_next_token_distribution",
]

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


# -- the loss masked on the prompt -------------------------------------------------------------

SEP_ID = 4  # <sep>'s id in the check's rows


def _prompt_masked(
    targets: torch.Tensor,
    prompt_lengths: torch.Tensor,
    pad_id: int,
    *,
    off: int = 0,
    fill: int | None = None,
    answer: bool = False,
    one_length: bool = False,
) -> torch.Tensor:
    """Targets whose first ``prompt_lengths[b]`` positions in row b are ``pad_id``.

    Row b is ``x_1 .. x_n <sep> y_1 .. y_m <eos>`` with n = prompt_lengths[b]; its targets
    ``x_2 .. x_n <sep> y_1 .. <eos>`` are given up to ``<sep>`` (positions 0 .. n - 1) and
    predicted from y_1 (position n), where ``LanguageModelTranslator.decode`` starts. The
    keywords write it the way tutorial code gets it wrong.
    """
    lengths = prompt_lengths[:1].expand_as(prompt_lengths) if one_length else prompt_lengths
    positions = torch.arange(targets.size(1), device=targets.device)  # (L,)
    prompt = positions[None, :] < lengths[:, None] + off  # (B, L)
    return targets.masked_fill(~prompt if answer else prompt, pad_id if fill is None else fill)


def _prompted(seed: int, pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Targets (B, L) of rows ``x_1..x_n <sep> y_1..y_m <eos>`` + padding, and n per row."""
    g = _generator(seed)
    sizes, rows = ((3, 2), (5, 4), (2, 3), (4, 1)), []
    for n, m in sizes:
        words = torch.randint(6, 30, (n + m,), generator=g).tolist()  # never pad_id 0 or 5
        rows.append([*words[:n], SEP_ID, *words[n:], EOS_ID])
    L = max(map(len, rows))
    sequences = torch.tensor([row + [pad_id] * (L - len(row)) for row in rows])
    return sequences[:, 1:], torch.tensor([n for n, _m in sizes])


PROMPT_LOSS_MASK_MISTAKES = (
    Mistake(
        N_(
            "one position too few: the target at position n - 1 is <sep>, part of the prompt "
            "(given, never asked for). Mask positions 0 .. n - 1: positions < "
            "prompt_lengths[:, None]."
        ),
        partial(_prompt_masked, off=-1),
    ),
    Mistake(
        N_(
            "one position too many: the target at position n is the first German token, the "
            "first one the model must learn (from <sep>). Mask positions < n, not <= n."
        ),
        partial(_prompt_masked, off=1),
    ),
    Mistake(
        N_(
            "the prompt's targets still count: set them to pad_id in the targets, which the "
            "loss ignores. Masking the inputs instead would hide the prompt from the model "
            "and keep its loss."
        ),
        lambda targets, lengths, pad_id: targets,
    ),
    Mistake(
        N_(
            "fill with pad_id, not 0: the loss ignores pad_id (ignore_index=pad_id), and here "
            "0 is an ordinary token."
        ),
        partial(_prompt_masked, fill=0),
    ),
    Mistake(
        N_(
            "fill with pad_id: -100 is F.cross_entropy's default ignore_index, but the "
            "course's loss ignores pad_id, and -100 is no token id."
        ),
        partial(_prompt_masked, fill=-100),
    ),
    Mistake(
        N_(
            "you masked the answer and kept the prompt: set the first prompt_lengths[b] "
            "targets of row b to pad_id and keep the rest."
        ),
        partial(_prompt_masked, answer=True),
    ),
    Mistake(
        N_(
            "each row has its own prompt length: compare the positions with "
            "prompt_lengths[:, None], not with one length for the whole batch."
        ),
        partial(_prompt_masked, one_length=True),
    ),
)


@exercise(_prompt_masked, PROMPT_LOSS_MASK_MISTAKES)
def check_prompt_loss_mask(fn: Callable) -> None:
    """fn(targets (B, L), prompt_lengths (B,), pad_id) -> targets (B, L) with row b's first
    prompt_lengths[b] positions set to pad_id (see :func:`_prompt_masked`)."""
    __tracebackhide__ = True
    for seed, pad_id in ((92, 0), (93, 5)):
        targets, lengths = _prompted(seed, pad_id)
        what = _("the target tensor (pad_id={pad_id})").format(pad_id=pad_id)
        _expect(
            what,
            fn,
            (targets, lengths, pad_id),
            _prompt_masked,
            PROMPT_LOSS_MASK_MISTAKES,
            validate=partial(
                _tensor, what=what, shape=tuple(targets.shape), letters="(B, L)", dtype=torch.long
            ),
            fallback=N_(
                "Row b's first prompt_lengths[b] targets become pad_id; the others stay as they "
                "are."
            ),
        )
    _passed(
        N_(
            "loss mask: the prompt's targets (x_2 … x_n and <sep>) are pad_id, so the loss "
            "counts the answer alone, from its first word to <eos>."
        )
    )


# -- one sampling step -------------------------------------------------------------------------


def _top_k(scaled: torch.Tensor, top_k: int | None, fill: float = float("-inf"), index: int = -1):
    """``scaled`` with every logit below the k-th largest of its row set to ``fill``."""
    if top_k is None:
        return scaled
    kth = scaled.sort(dim=-1, descending=True).values[:, top_k + index, None]  # (N, 1)
    return scaled.masked_fill(scaled < kth, fill)


def _distribution(logits: torch.Tensor, temperature: float, top_k: int | None) -> torch.Tensor:
    """What ``sample_next`` draws from, in the student's signature.

    Shapes: logits (N, V) -> probabilities (N, V).
    """
    return next_token_distribution(logits, temperature, top_k)


def _zeroed_after_softmax(logits, temperature, top_k):
    probs = torch.softmax(logits / temperature, dim=-1)  # (N, V)
    return _top_k(probs, top_k, fill=0.0)  # not renormalised


def _one_fewer(logits, temperature, top_k):
    scaled = logits / temperature
    if top_k is None:
        return torch.softmax(scaled, dim=-1)
    kth = scaled.topk(top_k, dim=-1).values[:, -1:]
    return torch.softmax(scaled.masked_fill(scaled <= kth, float("-inf")), dim=-1)


NEXT_TOKEN_DISTRIBUTION_MISTAKES = (
    Mistake(
        N_(
            "divide the logits by the temperature, don't multiply: a temperature below 1 must "
            "sharpen the distribution (logits / 0.5 doubles the gaps), above 1 flatten it."
        ),
        lambda z, t, k: torch.softmax(_top_k(z * t, k), dim=-1),
    ),
    Mistake(
        N_(
            "the temperature divides the logits before the softmax: probabilities divided by "
            "it no longer sum to 1. Use softmax(logits / temperature)."
        ),
        lambda z, t, k: torch.softmax(_top_k(z, k), dim=-1) / t,
    ),
    Mistake(
        N_(
            "after zeroing all but the top k probabilities, the kept ones no longer sum to 1: "
            "set the other logits to -inf before the softmax (or renormalise)."
        ),
        _zeroed_after_softmax,
    ),
    Mistake(
        N_(
            "you keep k + 1 tokens: the threshold is the k-th largest logit, "
            "topk(k).values[:, -1:] (index k - 1 when counting from 0)."
        ),
        lambda z, t, k: torch.softmax(_top_k(z / t, k, index=0), dim=-1),
    ),
    Mistake(
        N_(
            "you keep k - 1 tokens: drop only the logits strictly below the k-th largest "
            "(scaled < kth); with <= the k-th goes too."
        ),
        _one_fewer,
    ),
    Mistake(
        N_(
            "a logit of 0 is not a probability of 0 (exp(0) = 1): fill the logits outside the "
            "top k with float('-inf'), so that the softmax gives them exactly 0."
        ),
        lambda z, t, k: torch.softmax(_top_k(z / t, k, fill=0.0), dim=-1),
    ),
    Mistake(
        N_(
            "that is greedy decoding, all the probability on the largest logit: sampling "
            "draws from softmax(logits / temperature), so other tokens keep their chances."
        ),
        lambda z, t, k: F.one_hot(z.argmax(dim=-1), z.size(-1)).float(),
    ),
    Mistake(
        N_(
            "top_k is ignored: keep the k largest logits of each row and set the others to "
            "-inf before the softmax (when top_k is not None)."
        ),
        lambda z, t, k: torch.softmax(z / t, dim=-1),
    ),
    Mistake(
        N_("temperature is ignored: divide the logits by it before the softmax."),
        lambda z, t, k: torch.softmax(_top_k(z, k), dim=-1),
    ),
)


@exercise(_distribution, NEXT_TOKEN_DISTRIBUTION_MISTAKES)
def check_next_token_distribution(fn: Callable) -> None:
    """fn(logits (N, V), temperature, top_k) -> probabilities (N, V), sample_next's."""
    __tracebackhide__ = True
    logits = torch.randn(3, 10, generator=_generator(94)) * 2  # no ties: exactly k kept
    for temperature, top_k in ((0.8, 4), (1.7, None), (1.0, 1)):
        what = _("the distribution (temperature={temperature}, top_k={top_k})").format(
            temperature=temperature, top_k=top_k
        )
        _expect(
            what,
            fn,
            (logits, temperature, top_k),
            _distribution,
            NEXT_TOKEN_DISTRIBUTION_MISTAKES,
            validate=partial(_tensor, what=what, shape=(3, 10), letters="(N, V)"),
            fallback=N_(
                "softmax(logits / temperature), after setting every logit below the k-th "
                "largest of its row to -inf (when top_k is not None)."
            ),
        )
    _passed(
        N_(
            "sampling distribution: softmax(logits / temperature) over the top k logits of "
            "each row (the others exactly 0), the distribution sample_next draws from."
        )
    )
