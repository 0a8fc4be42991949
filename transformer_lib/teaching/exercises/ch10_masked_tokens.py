"""Notebook 10, the encoder-only model: BERT's masked-token objective, the masking of a batch
(15 % chosen, 80/10/10) and the loss on the chosen positions. The padding-only mask and the
sentence vector are in ``ch10_encoder_only``.

The expected answers are the library's: ``masking.mask_tokens`` once its draws are made
(``masking._mask_with_draws``), and the loss ``train`` computes for an ``EncoderOnlyModel``
(``label_smoothed_cross_entropy`` with ε = 0, targets ``<pad>`` ignored).

Shapes:
    B batch, L sequence length, V vocabulary.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch
import torch.nn.functional as F

from transformer_lib.data.masking import MASK_SHARE, RANDOM_SHARE, _mask_with_draws
from transformer_lib.i18n import N_, _
from transformer_lib.teaching.exercises._compare import _diagnose, _expect, _tensor
from transformer_lib.teaching.exercises._core import (
    ExerciseFailed,
    Mistake,
    _generator,
    _name,
    _passed,
    exercise,
)
from transformer_lib.teaching.exercises.ch07_label_smoothing import _scalar_loss
from transformer_lib.teaching.exercises.ch09_language_model import _as_tuple
from transformer_lib.train.loss import label_smoothed_cross_entropy

__all__ = ["check_bert_masking", "check_masked_token_loss"]

MASK_RATE = 0.15  # BERT's share of chosen positions (§3.1)
SPECIAL_ID = 1  # a special token (<unk>) in the check's rows: never chosen
V = 20  # the check's vocabulary: real tokens are ids 6 .. 19 (and 0 when pad_id is not 0)
# Where the check forces a chosen position (row, column) and the `kind` draw it gets, so that
# each batch shows every case, whatever the seed: <mask> (< 0.8; two below 0.2, where 10/10/80
# shares would mask or swap too), a random token ([0.8, 0.9)), the token kept (>= 0.9). Rows
# get 1 to 4 chosen positions.
FORCED = {
    (0, 1): 0.3,
    (0, 4): 0.85,
    (1, 2): 0.95,
    (1, 5): 0.05,
    (1, 6): 0.6,
    (1, 9): 0.15,
    (2, 3): 0.88,
    (3, 0): 0.5,
    (3, 7): 0.97,
}


# -- choosing and corrupting the positions -------------------------------------------------------


def _masking_inputs(seed: int, pad_id: int, mask_id: int) -> tuple:
    """(tokens, maskable, choose, kind, random_ids, mask_id, pad_id, mask_rate), B=4, L=10.

    Row 0 is padded from 6, row 2 from 8; rows 1 and 3 hold a special token. A pad and the
    special token draw ``choose`` below the rate: code that ignores ``maskable`` chooses them.
    """
    g = _generator(seed)
    tokens = torch.randint(6, V, (4, 10), generator=g)  # never 0..5: no accidental pad
    tokens[0, 6:], tokens[2, 8:] = pad_id, pad_id
    tokens[1, 0], tokens[3, 4] = SPECIAL_ID, SPECIAL_ID
    if pad_id:
        tokens[3, 0] = 0  # a real token with id 0, chosen
    maskable = ~torch.isin(tokens, torch.tensor([pad_id, SPECIAL_ID, mask_id]))  # (B, L)
    choose = MASK_RATE + (1 - MASK_RATE) * torch.rand(4, 10, generator=g)  # none chosen...
    kind = torch.rand(4, 10, generator=g)
    for (row, column), draw in FORCED.items():  # ... but these
        choose[row, column], kind[row, column] = MASK_RATE * draw, draw
    choose[0, 8], kind[0, 8] = 0.02, 0.3  # a pad,
    choose[1, 0], kind[1, 0] = 0.1, 0.7  # a special token: not maskable
    random_ids = torch.randint(6, V, (4, 10), generator=g)
    same = random_ids == tokens  # a random token that happens to be the original: move it
    random_ids[same] = 6 + (random_ids[same] - 5) % (V - 6)
    return tokens, maskable, choose, kind, random_ids, mask_id, pad_id, MASK_RATE


def _bert_masked(
    tokens,
    maskable,
    choose,
    kind,
    random_ids,
    mask_id,
    pad_id,
    mask_rate,
    *,
    anywhere: bool = False,
    above: bool = False,
    shares: tuple[float, float] = (MASK_SHARE, MASK_SHARE + RANDOM_SHARE),
    random_low: bool = True,
    random_chosen: bool = True,
    random_last: bool = False,
    shows_pad: bool = False,
    targets: str = "chosen",
    fill: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking written the way tutorial code gets it wrong (the keywords): the
    choice ignores ``maskable`` or keeps ``choose >= mask_rate``; other ``shares`` of
    <mask> and random; the random condition without its lower bound or without ``chosen``;
    random above 0.9 (``random_last``); ``pad_id`` shown instead of ``mask_id``; targets
    at every position ("all"), at every maskable one, or the corrupted inputs ("inputs");
    ``fill`` instead of ``pad_id``."""
    chosen = choose >= mask_rate if above else choose < mask_rate  # (B, L)
    chosen = chosen if anywhere else chosen & maskable
    low, high = shares
    inputs = torch.where(chosen & (kind < low), pad_id if shows_pad else mask_id, tokens)
    if random_last:
        swapped = kind >= high
    else:
        swapped = (kind >= low if random_low else True) & (kind < high)
    swapped = chosen & swapped if random_chosen else swapped  # (B, L)
    inputs = torch.where(swapped, random_ids, inputs)
    gold = inputs if targets == "inputs" else tokens  # (B, L)
    asked = {"maskable": maskable, "all": torch.ones_like(chosen)}.get(targets, chosen)
    return inputs, torch.where(asked, gold, pad_id if fill is None else fill)


BERT_MASKING_MISTAKES = (
    Mistake(
        N_(
            "padding and special tokens were chosen: a position may be chosen only where "
            "maskable is True. chosen = maskable & (choose < mask_rate)."
        ),
        partial(_bert_masked, anywhere=True),
    ),
    Mistake(
        N_(
            "you chose the positions whose draw is at or above mask_rate, 85 % of them: "
            "chosen = maskable & (choose < mask_rate), 15 %."
        ),
        partial(_bert_masked, above=True),
    ),
    Mistake(
        N_(
            "every chosen position shows mask_id: BERT's 80/10/10 hides only 80 % of them "
            "(kind < 0.8); 10 % show random_ids (0.8 <= kind < 0.9) and 10 % keep their "
            "token, because <mask> never occurs once the model is fine-tuned."
        ),
        partial(_bert_masked, shares=(1.0, 1.0)),
    ),
    Mistake(
        N_(
            "the random token and the kept token are swapped: a chosen position shows "
            "random_ids where 0.8 <= kind < 0.9 and keeps its token where kind >= 0.9."
        ),
        partial(_bert_masked, random_last=True),
    ),
    Mistake(
        N_(
            "those are 10/10/80 shares: 80 % of the chosen positions show mask_id, so "
            "kind < 0.8 masks, 0.8 <= kind < 0.9 takes a random token, the rest keep theirs."
        ),
        partial(_bert_masked, shares=(0.1, 0.2)),
    ),
    Mistake(
        N_(
            "your second torch.where overwrote the masks: with kind < 0.9 alone it replaces "
            "the <mask> positions too. The random token goes where 0.8 <= kind < 0.9."
        ),
        partial(_bert_masked, random_low=False),
    ),
    Mistake(
        N_(
            "random tokens appeared at positions that were not chosen: the random swap, "
            "like the mask, applies to chosen positions only (chosen & (0.8 <= kind < 0.9))."
        ),
        partial(_bert_masked, random_chosen=False),
    ),
    Mistake(
        N_(
            "the masked positions show pad_id: they must show mask_id. A position that "
            "looks like padding is hidden by the padding mask, and the model reads nothing "
            "there to predict from."
        ),
        partial(_bert_masked, shows_pad=True),
    ),
    Mistake(
        N_(
            "your targets are the whole sentence: the loss must read the chosen positions "
            "only (the others are visible, nothing to predict). targets = the original "
            "token where chosen, pad_id elsewhere."
        ),
        partial(_bert_masked, targets="all"),
    ),
    Mistake(
        N_(
            "your targets keep every maskable token: only the chosen positions are asked "
            "for. targets = torch.where(chosen, tokens, pad_id)."
        ),
        partial(_bert_masked, targets="maskable"),
    ),
    Mistake(
        N_(
            "your targets are the corrupted inputs (<mask> and random ids): the model must "
            "predict the original tokens. If you edited tokens in place, clone them first "
            "(inputs = tokens.clone())."
        ),
        partial(_bert_masked, targets="inputs"),
    ),
    Mistake(
        N_(
            "fill the targets that are not chosen with pad_id, not 0: the loss ignores "
            "pad_id (ignore_index=pad_id), and here 0 is an ordinary token."
        ),
        partial(_bert_masked, fill=0),
    ),
    Mistake(
        N_(
            "fill the targets that are not chosen with pad_id: -100 is F.cross_entropy's "
            "default ignore_index, but the course's loss ignores pad_id, and -100 is no token "
            "id."
        ),
        partial(_bert_masked, fill=-100),
    ),
)


def _masking_validator(fn: Callable, args: tuple) -> Callable:
    """Both tensors' type, shape and dtype, then which of the two differs and where."""

    def validate(got) -> None:
        __tracebackhide__ = True
        if not isinstance(got, tuple) or len(got) != 2:
            raise ExerciseFailed(
                _("{name} must return a tuple (inputs, targets); got {kind}.").format(
                    name=_name(fn), kind=type(got).__name__
                )
            )
        shape = tuple(args[0].shape)
        names = (_("the input tensor"), _("the target tensor"))
        fallbacks = (
            N_(
                "A chosen position shows mask_id where kind < 0.8, random_ids where "
                "0.8 <= kind < 0.9, its own token otherwise; the others are unchanged."
            ),
            N_("targets = the original token where chosen, pad_id elsewhere."),
        )
        for what, value, expected, fallback in zip(names, got, _mask_with_draws(*args), fallbacks):
            value = _tensor(value, what, shape, "(B, L)", dtype=torch.long)
            _diagnose(what, value, expected, fallback)

    return validate


@exercise(_mask_with_draws, BERT_MASKING_MISTAKES)
def check_bert_masking(fn: Callable) -> None:
    """fn(tokens (B, L), maskable (B, L) bool, choose (B, L), kind (B, L), random_ids (B, L),
    mask_id, pad_id, mask_rate) -> (inputs (B, L), targets (B, L)): BERT's masking."""
    __tracebackhide__ = True
    for seed, pad_id, mask_id in ((100, 0, 4), (101, 5, 2)):
        args = _masking_inputs(seed, pad_id, mask_id)
        _expect(
            _("the pair (inputs, targets) (pad_id={pad_id})").format(pad_id=pad_id),
            _as_tuple(fn),
            args,
            _mask_with_draws,
            BERT_MASKING_MISTAKES,
            validate=_masking_validator(fn, args),
        )
    _passed(
        N_(
            "BERT's masking: 15 % of the real tokens chosen; of those, 80 % <mask>, 10 % a "
            "random token, 10 % unchanged; targets are the originals there, pad_id elsewhere."
        )
    )


# -- the loss on the chosen positions ------------------------------------------------------------


def _library_loss(logits: torch.Tensor, targets: torch.Tensor, pad_id: int) -> torch.Tensor:
    """The loss ``train`` gives an ``EncoderOnlyModel``: cross-entropy without smoothing,
    averaged over the targets that are not ``pad_id`` (the chosen positions)."""
    return label_smoothed_cross_entropy(logits, targets, 0.0, pad_id)


def _per_sentence(logits, targets, pad_id):
    """The mean over the batch of each sentence's mean loss."""
    per_token = F.cross_entropy(
        logits.transpose(1, 2), targets, ignore_index=pad_id, reduction="none"
    )  # (B, V, L) -> (B, L), 0 where ignored
    counts = (targets != pad_id).sum(dim=1)  # (B,)
    return (per_token.sum(dim=1) / counts).mean()


def _flat(logits, targets, pad_id, **options):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), **options)


MASKED_TOKEN_LOSS_MISTAKES = (
    Mistake(
        N_(
            "every position counts, the unchosen ones as the class pad_id: F.cross_entropy "
            "ignores -100 by default. Pass ignore_index=pad_id."
        ),
        _flat,
    ),
    Mistake(
        N_(
            "you left the unchosen positions out of the sum but divided by all B·L "
            "positions: divide by the number of chosen ones, (targets != pad_id).sum()."
        ),
        lambda z, y, p: _flat(z, y, p, ignore_index=p, reduction="sum") / y.numel(),
    ),
    Mistake(
        N_("return the mean over the chosen positions, not their sum."),
        lambda z, y, p: _flat(z, y, p, ignore_index=p, reduction="sum"),
    ),
    Mistake(
        N_(
            "that is the mean over the sentences of each sentence's mean: a sentence with "
            "one chosen token weighs as much as one with four. Average over all chosen "
            "positions of the batch at once."
        ),
        _per_sentence,
    ),
    Mistake(
        N_("use the pad_id argument, not a hard-coded 0, as ignore_index."),
        lambda z, y, p: _flat(z, y, p, ignore_index=0),
    ),
    Mistake(
        N_(
            "F.cross_entropy reads the classes on dim 1, so (B, L, V) logits do not fit "
            "(B, L) targets: flatten both, logits.reshape(-1, V) and targets.reshape(-1) "
            "(or pass logits.transpose(1, 2))."
        ),
        lambda z, y, p: F.cross_entropy(z, y, ignore_index=p),
    ),
    Mistake(
        N_(
            "logits and targets were flattened in different orders: position (b, l) of the "
            "logits must meet position (b, l) of the targets. Flatten both the same way, "
            "logits.reshape(-1, V) and targets.reshape(-1), with no transpose in between."
        ),
        lambda z, y, p: F.cross_entropy(
            z.transpose(0, 1).reshape(-1, z.size(-1)), y.reshape(-1), ignore_index=p
        ),
    ),
    Mistake(
        N_(
            "F.cross_entropy takes the logits and applies log_softmax itself: a softmax "
            "before it squashes the loss. Pass the raw logits."
        ),
        lambda z, y, p: _flat(z.softmax(dim=-1), y, p, ignore_index=p),
    ),
    Mistake(
        N_(
            "F.nll_loss expects log-probabilities: take log_softmax(logits, dim=-1) first, "
            "or use F.cross_entropy on the logits."
        ),
        lambda z, y, p: F.nll_loss(z.reshape(-1, z.size(-1)), y.reshape(-1), ignore_index=p),
    ),
    Mistake(
        N_(
            "no label smoothing in the masked-token loss: BERT's pretraining uses plain "
            "cross-entropy (label_smoothing=0, the default)."
        ),
        lambda z, y, p: _flat(z, y, p, ignore_index=p, label_smoothing=0.1),
    ),
)


def _loss_inputs(seed: int, pad_id: int, mask_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits (B, L, V) and the targets of :func:`_masking_inputs`' batch (1 to 4 chosen
    positions per row: the sentences' means differ from the batch's)."""
    _inputs, targets = _mask_with_draws(*_masking_inputs(seed, pad_id, mask_id))  # (B, L)
    logits = torch.randn(*targets.shape, V, generator=_generator(seed + 10)) * 2  # (B, L, V)
    return logits, targets


@exercise(_library_loss, MASKED_TOKEN_LOSS_MISTAKES)
def check_masked_token_loss(fn: Callable) -> None:
    """fn(logits (B, L, V), targets (B, L), pad_id) -> scalar: the mean cross-entropy over
    the chosen positions (targets != pad_id)."""
    __tracebackhide__ = True
    for seed, pad_id, mask_id in ((102, 0, 4), (103, 5, 2)):
        logits, targets = _loss_inputs(seed, pad_id, mask_id)
        _expect(
            _("the loss (pad_id={pad_id})").format(pad_id=pad_id),
            fn,
            (logits, targets, pad_id),
            _library_loss,
            MASKED_TOKEN_LOSS_MISTAKES,
            validate=_scalar_loss,
            fallback=N_(
                "The mean of -log p(target) over the positions whose target is not pad_id: "
                "F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), "
                "ignore_index=pad_id)."
            ),
        )
    _passed(
        N_(
            "masked-token loss: cross-entropy averaged over the chosen positions alone; the "
            "model is asked only about the tokens it could not simply read."
        )
    )
