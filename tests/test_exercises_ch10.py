"""Exercises of notebook 10, the encoder-only model: the right answers students write pass,
each catalogued mistake gets its own hint, a stub is "not implemented yet", and each check's
answer is the library's (``mask_tokens`` fed its own draws, the loss ``train`` computes, the
mask ``EncoderOnlyModel`` builds, the vector ``SentenceClassifier`` reads).

``test_exercises.py`` runs the catalogues too, as for every chapter in ``exercises.CHAPTERS``."""

import pytest
import torch
import torch.nn.functional as F

from transformer_lib import EncoderOnlyModel, SentenceClassifier, TransformerConfig
from transformer_lib.data import MASK, encoder_vocab, mask_tokens, maskable, special_ids
from transformer_lib.data.vocab import PAD_ID
from transformer_lib.teaching.exercises import ch10_encoder_only as ch10
from transformer_lib.teaching.exercises import ch10_masked_tokens as ch10_masking
from transformer_lib.teaching.exercises._core import ExerciseFailed
from transformer_lib.train.loop import _loss

CHECKS = [getattr(module, name) for module in (ch10_masking, ch10) for name in module.__all__]


def bert_masking(tokens, maskable, choose, kind, random_ids, mask_id, pad_id, mask_rate):
    # the notebook's solution
    chosen = maskable & (choose < mask_rate)  # (B, L)
    inputs = tokens.clone()
    inputs[chosen & (kind < 0.8)] = mask_id
    swap = chosen & (kind >= 0.8) & (kind < 0.9)
    inputs[swap] = random_ids[swap]
    targets = torch.where(chosen, tokens, pad_id)  # (B, L)
    return inputs, targets


def bert_masking_in_a_loop(tokens, maskable, choose, kind, random_ids, mask_id, pad_id, rate):
    inputs, targets = tokens.clone(), torch.full_like(tokens, pad_id)
    for b in range(tokens.size(0)):
        for i in range(tokens.size(1)):
            if not (maskable[b, i] and choose[b, i] < rate):
                continue
            targets[b, i] = tokens[b, i]
            if kind[b, i] < 0.8:
                inputs[b, i] = mask_id
            elif kind[b, i] < 0.9:
                inputs[b, i] = random_ids[b, i]
    return inputs, targets


def bert_masking_like_hugging_face(
    tokens, maskable, choose, kind, random_ids, mask_id, pad_id, rate
):
    """The transformers collator's order: the targets first, then <mask>, then random ids
    where not already masked."""
    targets = tokens.clone()
    chosen = (choose < rate) & maskable
    targets[~chosen] = pad_id
    inputs = tokens.clone()
    replaced = (kind < 0.8) & chosen
    inputs[replaced] = mask_id
    random = (kind < 0.9) & chosen & ~replaced
    inputs[random] = random_ids[random]
    return [inputs, targets]


def masked_token_loss(logits, targets, pad_id):  # the notebook's solution
    V = logits.size(-1)
    return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=pad_id)


def masked_token_loss_written_out(logits, targets, pad_id):
    chosen = targets != pad_id  # (B, L)
    log_probs = logits[chosen].log_softmax(dim=-1)  # (N, V)
    return -log_probs.gather(1, targets[chosen][:, None]).mean()


def sentence_vector(hidden, tokens, pad_id):  # the notebook's solution
    real = (tokens != pad_id).unsqueeze(-1).float()  # (B, L, 1)
    return (hidden * real).sum(dim=1) / real.sum(dim=1)  # (B, D)


def sentence_vector_in_a_loop(hidden, tokens, pad_id):
    return torch.stack([h[t != pad_id].mean(dim=0) for h, t in zip(hidden, tokens)])


CORRECT = [
    (ch10_masking.check_bert_masking, bert_masking),
    (ch10_masking.check_bert_masking, bert_masking_in_a_loop),
    (ch10_masking.check_bert_masking, bert_masking_like_hugging_face),
    (ch10_masking.check_masked_token_loss, masked_token_loss),
    (ch10_masking.check_masked_token_loss, masked_token_loss_written_out),
    (
        ch10_masking.check_masked_token_loss,
        lambda z, y, p: F.cross_entropy(z.transpose(1, 2), y, ignore_index=p),
    ),
    (ch10.check_bidirectional_mask, lambda t, p: (t != p)[:, None, None, :]),
    (ch10.check_bidirectional_mask, lambda t, p: t.ne(p).unsqueeze(1).unsqueeze(2)),
    (ch10.check_bidirectional_mask, lambda t, p: (t != p).view(t.size(0), 1, 1, t.size(1))),
    (ch10.check_sentence_vector, sentence_vector),
    (ch10.check_sentence_vector, sentence_vector_in_a_loop),
    (
        ch10.check_sentence_vector,
        lambda h, t, p: (
            torch.einsum("bl,bld->bd", (t != p).float(), h) / (t != p).sum(dim=1, keepdim=True)
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


VOCAB = encoder_vocab([[f"w{k}" for k in range(20)]])  # 4 specials, <mask>, 20 words


def test_the_masking_is_mask_tokens_fed_its_own_draws():
    """The same generator's draws, in mask_tokens' order, give mask_tokens' batch."""
    tokens = torch.randint(5, len(VOCAB), (16, 9), generator=torch.Generator().manual_seed(4))
    tokens[::3, 6:], tokens[1::4, 0] = PAD_ID, 1  # padding and <unk>
    for seed in range(3):
        g = torch.Generator().manual_seed(seed)
        choose, kind = torch.rand(tokens.shape, generator=g), torch.rand(tokens.shape, generator=g)
        words = torch.tensor([i for i in range(len(VOCAB)) if i not in special_ids(VOCAB)])
        random_ids = words[torch.randint(len(words), tokens.shape, generator=g)]
        draws = (maskable(tokens, VOCAB), choose, kind, random_ids, VOCAB[MASK], PAD_ID, 0.15)
        ours = ch10_masking.check_bert_masking.reference(tokens, *draws)
        library = mask_tokens(tokens, VOCAB, 0.15, torch.Generator().manual_seed(seed))
        assert all(torch.equal(a, b) for a, b in zip(ours, library))


@pytest.mark.parametrize(("seed", "pad_id", "mask_id"), [(100, 0, 4), (101, 5, 2)])
def test_the_checks_batches_show_every_case_the_mistakes_change(seed, pad_id, mask_id):
    """Each batch has <mask>, random and kept tokens among the chosen, rows with different
    numbers of chosen positions, and a pad and a special token drawn below the rate."""
    args = ch10_masking._masking_inputs(seed, pad_id, mask_id)
    tokens, can, choose, _kind, _random_ids, *_ = args
    inputs, targets = ch10_masking.check_bert_masking.reference(*args)
    chosen = targets != pad_id
    shown = inputs[chosen]
    assert (shown == mask_id).sum() >= 3 and (shown == tokens[chosen]).sum() >= 2
    assert ((shown != mask_id) & (shown != tokens[chosen])).sum() >= 2  # random ids
    assert len(set(chosen.sum(dim=1).tolist())) >= 3 and chosen.sum(dim=1).min() >= 1
    below = choose < 0.15
    assert (below & (tokens == pad_id)).any() and (below & ~can & (tokens != pad_id)).any()


def test_the_loss_is_what_train_computes_for_an_encoder_only_model():
    torch.manual_seed(0)
    model = EncoderOnlyModel(TransformerConfig.encoder_only(len(VOCAB), d_model=16, d_ff=32,
                                                            n_heads=2, n_encoder_layers=1))  # fmt: skip
    model.eval()
    tokens = torch.randint(5, len(VOCAB), (6, 8), generator=torch.Generator().manual_seed(1))
    tokens[::2, 5:] = PAD_ID
    inputs, targets = mask_tokens(tokens, VOCAB, 0.3, torch.Generator().manual_seed(2))
    with torch.no_grad():
        loss_sum, count = _loss(model, [inputs], targets, 0.0)
        ours = ch10_masking.check_masked_token_loss.reference(model(inputs), targets, PAD_ID)
    torch.testing.assert_close(ours, loss_sum / count)
    torch.testing.assert_close(ours, masked_token_loss(model(inputs).detach(), targets, PAD_ID))


def test_the_mask_is_the_one_the_encoder_only_model_builds():
    """EncoderOnlyModel's default mask is the answer: passing it explicitly changes nothing."""
    torch.manual_seed(0)
    config = TransformerConfig.encoder_only(12, d_model=16, d_ff=32, n_heads=2, dropout=0.0)
    model = EncoderOnlyModel(config).eval()
    tokens = torch.tensor([[5, 6, 7, 0, 0], [8, 9, 10, 11, 5]])
    mask = ch10.check_bidirectional_mask.reference(tokens, 0)
    torch.testing.assert_close(model(tokens, mask), model(tokens))


def test_the_sentence_vector_is_the_one_the_classifier_reads():
    torch.manual_seed(0)
    config = TransformerConfig.encoder_only(12, d_model=16, d_ff=32, n_heads=2, dropout=0.0)
    classifier = SentenceClassifier(EncoderOnlyModel(config), 2).eval()
    tokens = torch.tensor([[5, 6, 7, 0, 0], [8, 9, 10, 11, 5]])
    hidden = classifier.backbone.encode(tokens)
    ours = ch10.check_sentence_vector.reference(hidden, tokens, 0)
    torch.testing.assert_close(ours, classifier.sentence_vectors(tokens))


def test_a_wrong_answer_outside_the_catalogue_gets_a_sensible_message():
    check = ch10_masking.check_bert_masking
    with pytest.raises(
        ExerciseFailed, match=r"the target tensor differs from the reference: at index .*pad_id"
    ):
        check(lambda *args: (check.reference(*args)[0], check.reference(*args)[1] + 1))
    with pytest.raises(ExerciseFailed, match=r"must return a tuple \(inputs, targets\)"):
        check(lambda *args: check.reference(*args)[0])
    with pytest.raises(ExerciseFailed, match=r"the loss must be one number, shape \(\)"):
        ch10_masking.check_masked_token_loss(
            lambda z, y, p: F.cross_entropy(z.transpose(1, 2), y, ignore_index=p, reduction="none")
        )
    with pytest.raises(ExerciseFailed, match=r"needs no \(L, L\) part: \(B, 1, 1, L\)"):
        ch10.check_bidirectional_mask(lambda t, p: (t != p)[:, None, :, None].expand(-1, 1, -1, 6))
    with pytest.raises(ExerciseFailed, match=r"differs from the reference: .*Row b: the sum"):
        ch10.check_sentence_vector(lambda h, t, p: sentence_vector(h, t, p) * 0.9)
