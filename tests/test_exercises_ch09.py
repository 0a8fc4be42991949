"""Exercises of notebook 09, the decoder-only model: the right answers students write pass,
each catalogued mistake gets its own hint, a stub is "not implemented yet", and each check's
answer is the library's (the mask, the shift of ``language_model_batches``, the targets the
``LanguageModelTranslator`` scores, the distribution ``sample_next`` draws from).

Once the chapter is registered in ``exercises.CHAPTERS``, ``test_exercises.py`` runs these
catalogues too."""

import pytest
import torch
import torch.nn.functional as F

from transformer_lib.data import collate, language_model_batches
from transformer_lib.data.vocab import BOS_ID, EOS_ID, PAD_ID
from transformer_lib.inference.generation import sample_next
from transformer_lib.model import masks
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.language_model import LanguageModel
from transformer_lib.model.lm_translation import LanguageModelTranslator
from transformer_lib.teaching.exercises import ch09_language_model as ch09
from transformer_lib.teaching.exercises import ch09_prompt_loss as ch09_prompt
from transformer_lib.teaching.exercises import ch09_sampling
from transformer_lib.teaching.exercises._core import ExerciseFailed

CHECKS = [
    getattr(module, name)
    for module in (ch09, ch09_prompt, ch09_sampling)
    for name in module.__all__
]
CATALOGUE = [(check, index, m) for check in CHECKS for index, m in enumerate(check.mistakes)]


def decoder_mask(tokens, pad_id):  # the notebook's solution
    L = tokens.size(1)
    causal = torch.tril(torch.ones(L, L, dtype=torch.bool))  # (L, L)
    return (tokens != pad_id)[:, None, None, :] & causal  # (B, 1, 1, L) & (L, L)


def prompt_masked_in_a_loop(targets, prompt_lengths, pad_id):
    targets = targets.clone()
    for b, n in enumerate(prompt_lengths.tolist()):
        targets[b, :n] = pad_id
    return targets


def distribution_by_scatter(logits, temperature, top_k):
    scaled = logits / temperature
    if top_k is not None:
        values, indices = scaled.topk(top_k, dim=-1)
        scaled = torch.full_like(scaled, float("-inf")).scatter(-1, indices, values)
    return scaled.softmax(dim=-1)


CORRECT = [
    (ch09.check_decoder_only_mask, decoder_mask),
    (
        ch09.check_decoder_only_mask,
        lambda t, p: masks.padding_mask(t, p) & masks.causal_mask(t.size(1)),
    ),
    (ch09.check_next_token_targets, lambda s: (s[:, :-1].clone(), s[:, 1:].clone())),
    (
        ch09.check_next_token_targets,
        lambda s: [s.narrow(1, 0, s.size(1) - 1), s.narrow(1, 1, s.size(1) - 1)],
    ),
    (ch09_prompt.check_prompt_loss_mask, prompt_masked_in_a_loop),
    (
        ch09_prompt.check_prompt_loss_mask,
        lambda t, n, p: torch.where(torch.arange(t.size(1)) < n[:, None], p, t),
    ),
    (ch09_sampling.check_next_token_distribution, distribution_by_scatter),
    (
        ch09_sampling.check_next_token_distribution,
        lambda z, t, k: F.softmax(
            z / t
            if k is None
            else (z / t).masked_fill(z / t < (z / t).topk(k).values[:, [-1]], -torch.inf),
            dim=-1,
        ),
    ),
]


# tests/test_exercises.py tries the library's answer and every catalogued mistake of these
# checks (the hint, its Jupyter rendering), as for every chapter; here, the other right answers.
@pytest.mark.parametrize(("check", "fn"), CORRECT)
def test_another_right_answer_passes_with_a_tick(check, fn, capsys):
    check(fn)
    assert capsys.readouterr().out.startswith("✓ ")


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_every_check_has_a_catalogue_of_distinct_hints(check):
    hints = [m.hint for m in check.mistakes]
    assert len(hints) >= 5 and len(set(hints)) == len(hints)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__)
def test_a_stub_is_not_implemented_yet_and_other_errors_are_short(check):
    def stub(*args):
        raise NotImplementedError("Exercise: write your solution here")

    def broken(*args):
        raise KeyError("oops")

    with pytest.raises(ExerciseFailed, match="`stub` is not implemented yet"):
        check(stub)
    with pytest.raises(ExerciseFailed, match=r"`broken` raised KeyError: 'oops'"):
        check(broken)


def test_the_mask_is_the_decoders_target_mask_the_language_model_uses():
    """LanguageModel's default mask is the answer: passing it explicitly changes nothing."""
    model = LanguageModel(TransformerConfig.decoder_only(12, d_model=16, d_ff=32, n_heads=2))
    tokens = torch.tensor([[2, 5, 6, 3, 0], [2, 7, 8, 9, 3]])
    mask = ch09.check_decoder_only_mask.reference(tokens, 0)
    torch.testing.assert_close(model.eval()(tokens, mask), model(tokens))


def test_the_shift_scores_like_language_model_batches():
    """The exercise's inputs keep <eos> where the library's have <pad>: only at positions
    whose target is <pad>, so the loss is the same."""
    model = LanguageModel(TransformerConfig.decoder_only(20, d_model=16, d_ff=32, n_heads=2)).eval()
    ys = [[13], [5, 9, 4], [7, 6, 8, 11, 12]]  # by length, as the batches sort them
    (inputs, targets), *_ = language_model_batches(ys, max_tokens=100)
    sequences = torch.tensor([[BOS_ID, *y, EOS_ID] + [PAD_ID] * (5 - len(y)) for y in ys])
    ours_in, ours_out = ch09.check_next_token_targets.reference(sequences)
    assert torch.equal(ours_out, targets)
    assert torch.equal(ours_in.masked_fill(ours_in == EOS_ID, PAD_ID), inputs)

    def loss(x, y):
        return F.cross_entropy(model(x).flatten(0, 1), y.flatten(), ignore_index=PAD_ID)

    torch.testing.assert_close(loss(ours_in, ours_out), loss(inputs, targets))


def test_the_prompt_mask_scores_what_the_translator_scores():
    """x_1..x_n <sep> y <eos>, masked on its first n targets, gives the loss of
    LanguageModelTranslator (whose logits start at <sep>); one position more or less does not."""
    sep, V = 4, 20
    config = TransformerConfig.decoder_only(V, d_model=16, d_ff=32, n_heads=2, dropout=0.0)
    torch.manual_seed(0)
    translator = LanguageModelTranslator(config, sep_id=sep).eval()
    pairs = [([5, 6, 7], [8, 9]), ([10, 11], [12, 13, 14, 15]), ([16, 17, 18, 19], [5])]
    batch = collate(pairs)
    rows = [[*x, sep, *y, EOS_ID] for x, y in pairs]
    L = max(map(len, rows))
    sequences = torch.tensor([row + [PAD_ID] * (L - len(row)) for row in rows])
    inputs, targets = sequences[:, :-1], sequences[:, 1:]
    lengths = torch.tensor([len(x) for x, _ in pairs])
    logits = translator.language_model(inputs).flatten(0, 1)

    def lm_loss(masked):
        return F.cross_entropy(logits, masked.flatten(), ignore_index=PAD_ID)

    expected = F.cross_entropy(
        translator(batch.src, batch.tgt_in).flatten(0, 1),
        batch.tgt_out.flatten(),
        ignore_index=PAD_ID,
    )
    torch.testing.assert_close(
        lm_loss(ch09_prompt.check_prompt_loss_mask.reference(targets, lengths, PAD_ID)), expected
    )
    for off in (-1, 1):
        masked = ch09_prompt._prompt_masked(targets, lengths, PAD_ID, off=off)
        assert not torch.allclose(lm_loss(masked), expected)


def test_the_distribution_is_what_sample_next_draws_from():
    """sample_next's frequencies over many draws approach the reference's probabilities, and
    it never draws a token outside the top k."""
    logits = torch.randn(2, 6, generator=torch.Generator().manual_seed(3)) * 2
    probs = ch09_sampling.check_next_token_distribution.reference(logits, 0.7, 3)
    draws = torch.stack(
        [
            sample_next(logits, 0.7, 3, generator=torch.Generator().manual_seed(i))
            for i in range(4000)
        ]
    )  # (n, N)
    frequencies = (
        torch.stack([torch.bincount(draws[:, row], minlength=6) for row in range(2)]) / 4000
    )
    assert (frequencies[probs == 0] == 0).all()
    assert (frequencies - probs).abs().max() < 0.03


def test_a_wrong_answer_outside_the_catalogue_gets_a_sensible_message():
    with pytest.raises(
        ExerciseFailed, match=r"the target tensor differs from the reference: at index"
    ):
        ch09.check_next_token_targets(lambda s: (s[:, :-1], s[:, 1:] + 1))
    with pytest.raises(ExerciseFailed, match=r"must return a tuple \(inputs, targets\)"):
        ch09.check_next_token_targets(lambda s: s[:, 1:])
    with pytest.raises(ExerciseFailed, match=r"Keep the head axis: \(B, 1, L, L\)"):
        ch09.check_decoder_only_mask(
            lambda t, p: masks.target_mask(t, p).squeeze(1).transpose(1, 2)
        )
    with pytest.raises(
        ExerciseFailed, match=r"differs from the reference: .*softmax\(logits / temperature\)"
    ):
        ch09_sampling.check_next_token_distribution(
            lambda z, t, k: ch09_sampling._distribution(z, t, k) * 0.9
        )


def _mistake(check, words):
    (found,) = [m for m in check.mistakes if words in m.hint]
    return found.fn


def test_the_top_k_mistakes_keep_the_number_of_tokens_their_hints_name():
    logits = torch.randn(3, 10, generator=torch.Generator().manual_seed(5))
    check = ch09_sampling.check_next_token_distribution
    for words, kept in (("keep k + 1", 5), ("keep k - 1", 3)):
        assert (_mistake(check, words)(logits, 0.8, 4) > 0).sum(dim=-1).tolist() == [kept] * 3
    assert (check.reference(logits, 0.8, 4) > 0).sum(dim=-1).tolist() == [4] * 3


def test_the_off_by_one_prompt_mistakes_mask_what_their_hints_say():
    targets, lengths = ch09_prompt._prompted(0, PAD_ID)
    check = ch09_prompt.check_prompt_loss_mask
    for words, extra in (("one position too few", -1), ("one position too many", 1)):
        masked = _mistake(check, words)(targets, lengths, PAD_ID)
        prompt_pads = (masked[:, :6] == PAD_ID).sum(dim=1)  # every prompt is shorter than 6
        assert prompt_pads.tolist() == (lengths + extra).tolist()
