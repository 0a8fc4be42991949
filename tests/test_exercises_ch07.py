"""Exercises of notebook 07, the toy translator: other right answers, the conventions the
checks teach (ε/V to <pad> as in PyTorch, LambdaLR counting from 0), the stand-in model of
the greedy check, and the messages for wrong answers outside the catalogues.

The catalogues themselves are run by ``tests/test_exercises.py``."""

import math

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.inference.decode import beam_search, greedy_decode
from transformer_lib.model.masks import padding_mask
from transformer_lib.teaching import exercises as ex
from transformer_lib.teaching.exercises.ch07_decoding import RuleTranslator
from transformer_lib.train import label_smoothed_cross_entropy, make_optimizer, make_scheduler


def smoothed_loss(logits, target, epsilon, pad_id):  # the notebook's solution
    log_probs = torch.log_softmax(logits, dim=-1)  # (N, V)
    nll = -log_probs.gather(1, target[:, None]).squeeze(1)  # (N,)
    per_token = (1 - epsilon) * nll + epsilon * -log_probs.mean(dim=-1)  # (N,)
    return per_token[target != pad_id].mean()


def smoothed_loss_with_a_target_distribution(logits, target, epsilon, pad_id):
    V = logits.size(-1)
    q = torch.full_like(logits, epsilon / V).scatter_add(
        1, target[:, None], torch.full_like(logits[:, :1], 1 - epsilon)
    )  # (N, V), rows sum to 1
    keep = target != pad_id
    return -(q * logits.log_softmax(-1)).sum(-1)[keep].mean()


def greedy(model, src, max_len, bos_id, eos_id):  # the notebook's solution
    src_mask = padding_mask(src, model.pad_id)  # (B, 1, 1, S)
    memory = model.encode(src, src_mask)
    tokens = torch.full((src.size(0), 1), bos_id, dtype=torch.long)  # (B, 1)
    done = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_len):
        best = model.decode(tokens, memory, src_mask)[:, -1].argmax(dim=-1)  # (B,)
        best = best.masked_fill(done, model.pad_id)
        tokens = torch.cat([tokens, best[:, None]], dim=1)  # (B, t + 1)
        done |= best == eos_id
        if done.all():
            break
    return tokens[:, 1:]


def greedy_calling_forward(model, src, max_len, bos_id, eos_id):
    """Re-encodes at every step through model(src, tgt): slower, same tokens."""
    out = torch.full((src.size(0), 1), bos_id)
    finished = torch.zeros(src.size(0), dtype=torch.bool)
    step = 0
    while step < max_len and not finished.all():
        next_id = model(src, out)[:, -1].argmax(-1)
        next_id[finished] = model.pad_id
        finished = finished | (next_id == eos_id)
        out = torch.cat([out, next_id.unsqueeze(1)], 1)
        step += 1
    return out[:, 1:]


def aer(predicted, sure, possible):  # the notebook's solution
    possible = possible | sure
    if not predicted and not sure:
        return 0.0
    return 1 - (len(predicted & sure) + len(predicted & possible)) / (len(predicted) + len(sure))


CORRECT = [
    (ex.check_label_smoothing, smoothed_loss),
    (ex.check_label_smoothing, smoothed_loss_with_a_target_distribution),
    (
        ex.check_label_smoothing,
        lambda logits, target, eps, pad: F.cross_entropy(
            logits, target, ignore_index=pad, label_smoothing=eps
        ),
    ),
    (ex.check_lr_schedule, lambda i, d, w: d**-0.5 * min((i + 1) ** -0.5, (i + 1) * w**-1.5)),
    (ex.check_lr_schedule, lambda i, d, w: min(1 / math.sqrt(i + 1), (i + 1) / w**1.5) / d**0.5),
    (
        ex.check_lr_schedule,  # a tensor result is accepted
        lambda i, d, w: (
            torch.tensor(float(i + 1)).pow(-0.5).minimum(torch.tensor((i + 1) * w**-1.5)) * d**-0.5
        ),
    ),
    (ex.check_greedy_decode, greedy),
    (ex.check_greedy_decode, greedy_calling_forward),
    (ex.check_length_penalty, lambda s, n, a: s / ((5 + n) / 6) ** a),
    (ex.check_length_penalty, lambda s, n, a: s * (6 / (5 + n)) ** a),
    (ex.check_alignment_error_rate, aer),
    (
        ex.check_alignment_error_rate,
        lambda a, s, p: (
            0.0 if not (a or s) else 1 - (2 * len(a & s) + len(a & (p - s))) / (len(a) + len(s))
        ),
    ),
]


@pytest.mark.parametrize(("check", "fn"), CORRECT)
def test_a_right_answer_passes_with_a_tick(check, fn, capsys):
    check(fn)
    assert capsys.readouterr().out.startswith("✓ ")


def test_pad_gets_its_share_of_epsilon_as_in_pytorch():
    """The course's convention (the check teaches it): ε/V on every class, <pad> included."""
    g = torch.Generator().manual_seed(0)
    logits, target = torch.randn(12, 9, generator=g), torch.randint(1, 9, (12,), generator=g)
    target[[3, 8]] = 0
    ours = ex.check_label_smoothing.reference(logits, target, 0.1, 0)
    torch.testing.assert_close(
        ours, F.cross_entropy(logits, target, ignore_index=0, label_smoothing=0.1)
    )
    annotated = ex.check_label_smoothing.mistakes[1].fn(logits, target, 0.1, 0)
    assert not torch.allclose(ours, annotated)  # the Annotated Transformer's V - 2 differs


def test_the_schedule_reference_is_what_lambda_lr_sets_before_each_update():
    model = torch.nn.Linear(2, 2)
    optimizer = make_optimizer(model)
    scheduler = make_scheduler(optimizer, d_model=16, warmup=4)
    for index in range(8):
        expected = ex.check_lr_schedule.reference(index, 16, 4)
        assert math.isclose(optimizer.param_groups[0]["lr"], expected)
        optimizer.step()
        scheduler.step()


def test_the_rule_translator_is_causal_and_honours_the_source_mask():
    model = RuleTranslator()
    src = torch.tensor([[5, 7, 4, 0], [8, 6, 4, 5]])
    mask = padding_mask(src, model.pad_id)
    memory = model.encode(src, mask)
    tgt = torch.tensor([[2, 6, 7, 8], [2, 5, 5, 4]])
    full = model.decode(tgt, memory, mask)
    assert torch.equal(model.decode(tgt[:, :2], memory, mask), full[:, :2])  # causal
    assert full[0, 3].argmax() == 3  # row 0 has 3 words: <eos> after them
    assert model.decode(tgt, memory, None)[0, 3].argmax() != 3  # unmasked: pads read as words
    assert torch.equal(model(src, tgt), full)


def test_the_rule_translator_works_with_the_library_searches():
    model, src = RuleTranslator(), torch.tensor([[5, 7, 4, 0], [8, 6, 0, 0]])
    tokens, _ = greedy_decode(model, src, max_len=8)
    assert tokens.tolist() == [[6, 8, 8, 3], [4, 5, 3, 0]]  # 4 + (y_j + src_j + j) mod 5
    assert torch.equal(beam_search(model, src, beam_size=1, max_len=8, alpha=0.0)[0], tokens)


@pytest.mark.parametrize(
    ("check", "fn", "message"),
    [
        (
            ex.check_label_smoothing,
            lambda logits, target, eps, pad: (
                label_smoothed_cross_entropy(logits, target, eps, pad) * 1.1
            ),
            r"differs from the reference: at index \(\) you have .*Per token \(1 - ε\)",
        ),
        (
            ex.check_label_smoothing,
            lambda logits, target, eps, pad: label_smoothed_cross_entropy(
                logits, target, eps, pad, reduction="none"
            ),
            r"must be one number, shape \(\); got shape \(10,\)",
        ),
        (
            ex.check_label_smoothing,
            lambda logits, target, eps, pad: smoothed_loss(logits, target, eps, pad).item(),
            r"0-dim torch.Tensor .*no .item\(\)",
        ),
        (ex.check_lr_schedule, lambda i, d, w: 0.001, r"you returned 0.001, expected 0.25"),
        (
            ex.check_lr_schedule,
            lambda i, d, w: math.pow(i, -0.5),
            r"raised ValueError: math domain error\. Hint: LambdaLR calls the multiplier with 0",
        ),
        (
            ex.check_greedy_decode,
            lambda model, src, max_len, bos, eos: greedy(model, src, max_len, bos, eos) + 1,
            r"differs from the reference: at index \(0, 0\)",
        ),
        (
            ex.check_greedy_decode,
            lambda model, src, max_len, bos, eos: greedy(model, src, max_len, bos, eos).float(),
            r"wrong dtype: the tokens must be torch.int64",
        ),
        (ex.check_length_penalty, lambda s, n, a: s / 2, r"you returned -0.6, expected -0.94"),
        (ex.check_length_penalty, lambda s, n, a: "short", r"must be a number \(float\); got str"),
        (
            ex.check_alignment_error_rate,
            lambda a, s, p: 1 - (len(a & s) + len(a & (p | s))) / float(len(a) + len(s)),
            r"float division by zero\. Hint: with no predicted and no sure links",
        ),
    ],
)
def test_a_wrong_answer_outside_the_catalogue_gets_a_sensible_message(check, fn, message):
    with pytest.raises(ex.ExerciseFailed, match=message):
        check(fn)
