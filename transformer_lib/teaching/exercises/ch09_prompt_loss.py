"""Notebook 09, the decoder-only model: the loss masked on the prompt (translation as
language modelling).

The expected answer is the library's: the targets ``lm_translation.LanguageModelTranslator``
scores (its logits start at ``<sep>``).

Shapes:
    B batch, L target length (a sequence's length less one).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import torch

from transformer_lib.data.vocab import EOS_ID
from transformer_lib.i18n import N_, _
from transformer_lib.teaching.exercises._compare import _expect, _tensor
from transformer_lib.teaching.exercises._core import Mistake, _generator, _passed, exercise

__all__ = ["check_prompt_loss_mask"]

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
            "one position too few: with n = prompt_lengths[b], the target at position n - 1 of "
            "row b is <sep>, part of the prompt (given, never asked for). Mask positions "
            "0 .. n - 1: positions < prompt_lengths[:, None]."
        ),
        partial(_prompt_masked, off=-1),
    ),
    Mistake(
        N_(
            "one position too many: with n = prompt_lengths[b], the target at position n of "
            "row b is the first German token, the first one the model must learn (from <sep>). "
            "Mask positions < n, not <= n."
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
            "loss mask: the prompt's targets (the English after its first token, and <sep>) are "
            "pad_id, so the loss counts the German alone, from its first token to <eos>."
        )
    )
