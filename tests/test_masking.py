"""transformer_lib.data.masking: BERT's masked-token batches (notebook 10): the rates, what is
never chosen, the seed, the loss on chosen positions only, and the errors."""

import math

import pytest
import torch

from transformer_lib import EncoderOnlyModel, TransformerConfig
from transformer_lib.data import (
    MASK,
    Vocab,
    encoder_vocab,
    mask_tokens,
    maskable,
    masked_token_batches,
    special_ids,
)
from transformer_lib.data.vocab import BOS_ID, EOS_ID, PAD_ID, SPECIALS, UNK_ID
from transformer_lib.train.loop import _loss

pytestmark = pytest.mark.usefixtures("one_thread")

WORDS = [f"w{k}" for k in range(20)]
VOCAB = encoder_vocab([WORDS])  # 4 specials, <mask> (id 4), then the 20 words (ids 5-24)
MASK_ID = VOCAB[MASK]


def batch(seed: int = 0) -> torch.Tensor:
    """(32, 12) ids: words, padding at the ends of rows, a <bos>/<eos>/<unk> here and there."""
    generator = torch.Generator().manual_seed(seed)
    tokens = torch.randint(5, len(VOCAB), (32, 12), generator=generator)
    for row in range(32):
        tokens[row, 12 - row % 6 :] = PAD_ID  # 0 to 5 pads
    tokens[::4, 0], tokens[1::4, 3], tokens[2::8, 1] = BOS_ID, UNK_ID, EOS_ID
    return tokens


def within_four_sigma(count: int, n: int, p: float) -> bool:
    return abs(count - n * p) <= 4 * math.sqrt(n * p * (1 - p))


def test_the_vocabulary_adds_mask_after_the_four_specials_and_keeps_the_others_order():
    assert VOCAB.tokens[:5] == [*SPECIALS, MASK]
    built = Vocab.build([WORDS, WORDS[:3]])
    assert encoder_vocab([WORDS, WORDS[:3]]).tokens[5:] == built.tokens[4:]
    assert special_ids(VOCAB) == [0, 1, 2, 3, 4]
    assert MASK not in built  # the other vocabularies do not change


def test_the_rates_over_many_draws_are_15_percent_and_80_10_10():
    tokens = batch()
    can = maskable(tokens, VOCAB)
    generator = torch.Generator().manual_seed(0)
    chosen = masked = random = kept = 0
    draws = 200
    for _ in range(draws):
        inputs, targets = mask_tokens(tokens, VOCAB, 0.15, generator)
        picked = targets != PAD_ID
        chosen += int(picked.sum())
        masked += int((inputs[picked] == MASK_ID).sum())
        kept += int((inputs[picked] == tokens[picked]).sum())
        random += int(((inputs[picked] != MASK_ID) & (inputs[picked] != tokens[picked])).sum())
    n = draws * int(can.sum())
    words = len(VOCAB) - 5  # a random token is one of these; it equals the original 1 in 20
    assert within_four_sigma(chosen, n, 0.15), chosen / n
    assert within_four_sigma(masked, chosen, 0.8), masked / chosen
    assert within_four_sigma(random, chosen, 0.1 * (1 - 1 / words)), random / chosen
    assert within_four_sigma(kept, chosen, 0.1 + 0.1 / words), kept / chosen
    assert not within_four_sigma(chosen, n, 0.16)  # the bounds are tight enough to fail


def test_padding_and_special_tokens_are_never_chosen_nor_changed():
    tokens = batch()
    fixed = ~maskable(tokens, VOCAB)
    assert fixed.sum() > 32 and (tokens[fixed] != PAD_ID).any()  # specials as well as pads
    generator = torch.Generator().manual_seed(1)
    for _ in range(50):
        inputs, targets = mask_tokens(tokens, VOCAB, 0.5, generator)
        assert (targets[fixed] == PAD_ID).all()
        assert torch.equal(inputs[fixed], tokens[fixed])
        replaced = inputs[~fixed]
        assert not torch.isin(replaced, torch.tensor([0, 1, 2, 3])).any()  # never a special
        picked = targets != PAD_ID
        assert torch.equal(targets[picked], tokens[picked])  # the originals
        assert torch.equal(inputs[~picked], tokens[~picked])  # unchosen positions stay


def test_the_same_seed_masks_the_same_way_and_another_seed_does_not():
    tokens = batch()

    def masked(seed):
        return mask_tokens(tokens, VOCAB, generator=torch.Generator().manual_seed(seed))

    first, again, other = masked(3), masked(3), masked(4)
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
    assert not torch.equal(first[1], other[1])
    batches = masked_token_batches(tokens.tolist(), VOCAB, max_tokens=96, shuffle=True, seed=5)
    repeat = masked_token_batches(tokens.tolist(), VOCAB, max_tokens=96, shuffle=True, seed=5)
    assert len(batches) > 1
    for (x, y), (x2, y2) in zip(batches, repeat, strict=True):
        assert torch.equal(x, x2) and torch.equal(y, y2)


def test_a_small_batch_always_gets_one_chosen_position():
    tokens = torch.tensor([[5, 6, 0, 0]])
    for seed in range(30):
        _, targets = mask_tokens(tokens, VOCAB, 0.01, torch.Generator().manual_seed(seed))
        assert int((targets != PAD_ID).sum()) >= 1


def test_masked_token_batches_hold_every_sequence_once_without_bos_or_eos():
    sequences = [[5 + (i + k) % 20 for k in range(2 + i % 7)] for i in range(40)]
    batches = masked_token_batches(sequences, VOCAB, max_tokens=64)
    originals = []
    for inputs, targets in batches:
        restored = torch.where(targets != PAD_ID, targets, inputs)  # undo the masking
        originals += [row[row != PAD_ID].tolist() for row in restored]
    assert sorted(originals) == sorted(sequences)


def test_the_loss_reads_the_chosen_positions_only():
    torch.manual_seed(0)
    sizes = dict(d_model=16, n_heads=2, d_ff=32, n_encoder_layers=1, max_len=16, dropout=0.0)
    config = TransformerConfig.encoder_only(len(VOCAB), **sizes)
    model = EncoderOnlyModel(config)
    inputs, targets = mask_tokens(batch(), VOCAB, generator=torch.Generator().manual_seed(2))
    loss_sum, n_tokens = _loss(model, [inputs], targets, label_smoothing=0.0)
    picked = targets != PAD_ID
    log_probs = model(inputs).log_softmax(dim=-1)  # (B, L, V)
    expected = -log_probs[picked].gather(-1, targets[picked][:, None]).sum()
    assert int(n_tokens) == int(picked.sum()) < int(maskable(inputs, VOCAB).sum())
    torch.testing.assert_close(loss_sum, expected)


@pytest.mark.parametrize("rate", [0.0, 1.0, 1.5, -0.1])
def test_a_mask_rate_outside_0_1_is_named(rate):
    with pytest.raises(
        ValueError,
        match=r"^`mask_rate` must be a float in \(0, 1\), the share of positions chosen; "
        rf"got {rate}\. BERT chooses 0\.15\.$",
    ):
        mask_tokens(batch(), VOCAB, rate)


def test_a_batch_with_nothing_to_mask_is_named():
    only_specials = torch.tensor([[BOS_ID, UNK_ID, EOS_ID, PAD_ID], [MASK_ID, PAD_ID, 0, 0]])
    with pytest.raises(
        ValueError,
        match=r"^`tokens` must be a batch with at least one position that can be masked \(a "
        r"token that is neither padding nor special\); got none\.",
    ):
        mask_tokens(only_specials, VOCAB)


def test_a_vocabulary_without_mask_and_ids_outside_it_are_named():
    with pytest.raises(
        ValueError, match=r"`vocab` must be a vocabulary with <mask>.*encoder_vocab"
    ):
        mask_tokens(batch(), Vocab.build([WORDS]))
    with pytest.raises(ValueError, match=r"`tokens` must be token ids in \[0, 25\)"):
        mask_tokens(torch.tensor([[5, 25]]), VOCAB)
    with pytest.raises(ValueError, match=r"`sequences\[1\]` must be a non-empty list of ids"):
        masked_token_batches([[5], []], VOCAB, max_tokens=8)
