"""transformer_lib.train.evaluate: BLEU, exact match, alignment error rate, attention alignments."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
import torch
from torch import nn

from transformer_lib.data import Example
from transformer_lib.data.vocab import Vocab
from transformer_lib.train.evaluate import (
    alignment_error_rate,
    attention_alignment,
    bleu_confidence_interval,
    corpus_bleu,
    evaluate_translations,
    exact_match,
    paired_bootstrap,
    reference_attention,
)

# Tiny models gain nothing from a second thread (see conftest.one_thread).
pytestmark = pytest.mark.usefixtures("one_thread")


def test_corpus_bleu_is_sacrebleus_and_pools_the_corpus():
    hypotheses = ["der Hund sieht die Katze.", "ein Mann wäscht ein Auto."]
    references = ["der Hund sieht eine Katze.", "ein Mann wäscht ein Auto."]
    expected = sacrebleu.corpus_bleu(hypotheses, [references]).score
    assert corpus_bleu(hypotheses, references) == pytest.approx(expected)
    assert corpus_bleu(references, references) == pytest.approx(100.0)
    sentence_mean = sum(corpus_bleu([h], [r]) for h, r in zip(hypotheses, references)) / 2
    assert corpus_bleu(hypotheses, references) != pytest.approx(sentence_mean)


# Two systems on twenty sentences: enough variety that the bootstrap scores have few ties.
REFERENCES = [
    f"der {noun} sieht {n} {obj} am {day}."
    for n in range(1, 5)
    for noun, obj, day in [
        ("Hund", "Katzen", "Montag"),
        ("Mann", "Autos", "Dienstag"),
        ("Arzt", "Kinder", "Freitag"),
        ("Vogel", "Bäume", "Sonntag"),
        ("Lehrer", "Bücher", "Samstag"),
    ]
]
SYSTEM_A = [r.replace(" am ", " an ") if k % 3 == 0 else r for k, r in enumerate(REFERENCES)]
SYSTEM_B = [r.replace("sieht", "hat") if k % 4 == 1 else r for k, r in enumerate(SYSTEM_A)]


def _sacrebleu_cli(tmp_path, references, *systems, options, seed):
    """What sacrebleu's command line prints for these sentences, one file per system."""
    (tmp_path / "ref.txt").write_text("\n".join(references) + "\n", encoding="utf-8")
    names = []
    for k, hypotheses in enumerate(systems):
        names.append(str(tmp_path / f"sys{k}.txt"))
        Path(names[-1]).write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "sacrebleu", str(tmp_path / "ref.txt"), "-i", *names]
    env = {**os.environ, "SACREBLEU_SEED": str(seed)}
    done = subprocess.run([*command, *options], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_bleu_confidence_interval_is_what_sacrebleu_confidence_prints(tmp_path):
    interval = bleu_confidence_interval(SYSTEM_A, REFERENCES, n_samples=500, seed=7)
    options = ["--confidence", "--confidence-n", "500", "-w", "4", "-f", "text"]
    printed = _sacrebleu_cli(tmp_path, REFERENCES, SYSTEM_A, options=options, seed=7)
    ours = f"{interval.bleu:.4f} (μ = {interval.mean:.4f} ± {interval.half_width:.4f})"
    assert f" = {ours} " in printed, (ours, printed)
    assert interval.bleu == pytest.approx(corpus_bleu(SYSTEM_A, REFERENCES))
    # μ is the mean of the resampled scores, not the corpus BLEU; the interval is around μ
    assert interval.mean != pytest.approx(interval.bleu, rel=1e-6)
    assert interval.low == pytest.approx(interval.mean - interval.half_width)
    assert interval.low < interval.bleu < interval.high


def test_paired_bootstrap_is_what_sacrebleu_paired_bs_prints(tmp_path):
    result = paired_bootstrap(SYSTEM_A, SYSTEM_B, REFERENCES, n_samples=500, seed=7)
    observed = corpus_bleu(SYSTEM_B, REFERENCES) - corpus_bleu(SYSTEM_A, REFERENCES)
    assert result.difference == pytest.approx(observed) and observed < 0
    options = ["--paired-bs", "--paired-bs-n", "500", "-f", "json"]
    printed = _sacrebleu_cli(tmp_path, REFERENCES, SYSTEM_A, SYSTEM_B, options=options, seed=7)
    baseline, system = (row["BLEU"] for row in json.loads(printed))
    assert tuple(result.a) == (baseline["score"], baseline["mean"], baseline["ci"])
    assert tuple(result.b) == (system["score"], system["mean"], system["ci"])
    assert result.p_value == system["p_value"]


def test_bleu_confidence_interval_by_hand():
    perfect = bleu_confidence_interval(REFERENCES, REFERENCES, n_samples=100, seed=1)
    assert tuple(perfect) == pytest.approx((100.0, 100.0, 0.0))
    # One sentence: every resampled corpus is that sentence. No 4-gram matches, so the
    # score relies on corpus_bleu's smoothing being used for the resamples too.
    one = bleu_confidence_interval(["der Hund sieht eine Katze."], ["der Hund sieht die Katze."])
    assert one.bleu > 0 and tuple(one) == pytest.approx((one.bleu, one.bleu, 0.0))
    assert one.bleu == pytest.approx(
        corpus_bleu(["der Hund sieht eine Katze."], ["der Hund sieht die Katze."])
    )
    # Two sentences, one perfect: a resampled corpus is AA, AB or BB (1/4, 1/2, 1/4), so
    # with 1000 draws the 2.5% point is BB's score and the 97.5% point AA's, 100.
    hypotheses, references = (
        ["der Hund sieht die Katze.", "ein Mann"],
        ["der Hund sieht die Katze.", "ein Mann wäscht ein Auto."],
    )
    both_b = corpus_bleu([hypotheses[1]] * 2, [references[1]] * 2)
    interval = bleu_confidence_interval(hypotheses, references, n_samples=1000, seed=1)
    assert interval.half_width == pytest.approx((100.0 - both_b) / 2)


def test_bootstrap_is_seeded():
    first = bleu_confidence_interval(SYSTEM_A, REFERENCES, n_samples=200, seed=3)
    assert bleu_confidence_interval(SYSTEM_A, REFERENCES, n_samples=200, seed=3) == first
    assert bleu_confidence_interval(SYSTEM_A, REFERENCES, n_samples=200, seed=4) != first
    pair = paired_bootstrap(SYSTEM_A, SYSTEM_B, REFERENCES, n_samples=200, seed=3)
    assert paired_bootstrap(SYSTEM_A, SYSTEM_B, REFERENCES, n_samples=200, seed=3) == pair
    assert "SACREBLEU_SEED" not in os.environ  # the seed is set for sacrebleu, then removed


def test_paired_bootstrap_of_equal_systems_finds_no_difference():
    same = paired_bootstrap(SYSTEM_A, list(SYSTEM_A), REFERENCES, n_samples=100)
    assert same.difference == 0.0 and same.a == same.b
    assert same.p_value == pytest.approx(1 / 101)  # sacrebleu's +1 rule: never 0 or 1 exactly


# The same error ("hat" for "sieht") in the even sentences, or in the odd ones: every
# sentence has the same shape, so both systems have the same n-gram counts and corpus BLEU.
EVEN_WRONG = [r.replace("sieht", "hat") if k % 2 == 0 else r for k, r in enumerate(REFERENCES)]
ODD_WRONG = [r.replace("sieht", "hat") if k % 2 == 1 else r for k, r in enumerate(REFERENCES)]


def _paired_p_by_hand(a, b, references, n_samples, seed):
    """sacrebleu's paired bootstrap p-value, written out: resample sentences with
    replacement, centre the absolute resampled differences, count those above |Δ|."""
    rows = np.random.default_rng(seed).choice(len(references), (n_samples, len(references)))

    def bleu_of(hypotheses, row):
        return corpus_bleu([hypotheses[i] for i in row], [references[i] for i in row])

    observed = abs(corpus_bleu(b, references) - corpus_bleu(a, references))
    resampled = np.array([abs(bleu_of(b, row) - bleu_of(a, row)) for row in rows])
    count = int(np.sum(resampled - resampled.mean() > observed))
    return (count + 1) / (n_samples + 1)


@pytest.mark.parametrize(
    "a, b",
    [(SYSTEM_A, SYSTEM_B), (EVEN_WRONG, ODD_WRONG), (SYSTEM_A, EVEN_WRONG)],
    ids=["a-b", "same-bleu", "a-even"],
)
def test_paired_bootstrap_centres_the_absolute_differences(a, b):
    result = paired_bootstrap(a, b, REFERENCES, n_samples=200, seed=5)
    assert result.p_value == pytest.approx(_paired_p_by_hand(a, b, REFERENCES, 200, 5))


def test_different_outputs_with_the_same_bleu_get_a_large_p_value():
    # Only identical translations get the smallest p-value, 1 / (n_samples + 1).
    assert EVEN_WRONG != ODD_WRONG
    result = paired_bootstrap(EVEN_WRONG, ODD_WRONG, REFERENCES)  # 1000 samples
    assert result.difference == 0.0 and result.a.bleu == result.b.bleu
    assert result.p_value > 0.3


def test_bootstrap_arguments_are_checked():
    with pytest.raises(ValueError, match="`hypotheses` must be a non-empty list of strings"):
        bleu_confidence_interval([], [])
    with pytest.raises(ValueError, match="`n_samples` must be an int >= 40; got 10"):
        bleu_confidence_interval(SYSTEM_A, REFERENCES, n_samples=10)
    with pytest.raises(TypeError, match="`seed` must be an int; got float 0.5"):
        bleu_confidence_interval(SYSTEM_A, REFERENCES, seed=0.5)
    with pytest.raises(ValueError, match="`seed` must be an int >= 1; got 0"):
        paired_bootstrap(SYSTEM_A, SYSTEM_B, REFERENCES, seed=0)
    with pytest.raises(ValueError, match=r"`references` must be one per hypothesis \(20\)"):
        bleu_confidence_interval(SYSTEM_A, REFERENCES[:3])
    with pytest.raises(ValueError, match=r"`hypotheses_b` must be one per sentence of hyp"):
        paired_bootstrap(SYSTEM_A, SYSTEM_B[:19], REFERENCES)
    with pytest.raises(TypeError, match="`hypotheses_b` must be a list of strings"):
        paired_bootstrap(SYSTEM_A, "der Hund", REFERENCES)


def test_exact_match():
    assert exact_match(["a b.", "c d.", "e"], ["a b.", "c e.", "e "]) == pytest.approx(2 / 3)
    assert exact_match([], []) == 0.0
    with pytest.raises(ValueError, match="`references` must be one per hypothesis"):
        exact_match(["a"], ["a", "b"])
    with pytest.raises(TypeError, match="`hypotheses` must be a list of strings"):
        corpus_bleu("a b c", ["a b c"])


def test_alignment_error_rate_by_hand():
    sure = {(0, 0), (1, 2)}
    possible = {(0, 0), (1, 2), (2, 1)}
    assert alignment_error_rate(sure, sure) == 0.0
    # A = {(0,0), (2,1), (3,3)}: |A∩S| = 1, |A∩P| = 2, |A| + |S| = 5
    predicted = {(0, 0), (2, 1), (3, 3)}
    assert alignment_error_rate(predicted, sure, possible) == pytest.approx(1 - 3 / 5)
    # without possible links AER = 1 - F1
    precision, recall = 1 / 3, 1 / 2
    f1 = 2 * precision * recall / (precision + recall)
    assert alignment_error_rate(predicted, sure) == pytest.approx(1 - f1)
    assert alignment_error_rate(set(), sure) == 1.0
    assert alignment_error_rate(set(), set()) == 0.0


def test_alignment_error_rate_pools_counts_over_a_corpus():
    predicted = [[(0, 0)], [(0, 1), (1, 0)]]
    sure = [[(0, 0)], [(0, 0), (1, 1)]]
    # hits 1 + 0 (sure) and 1 + 0 (possible = sure) over |A| + |S| = 3 + 3
    assert alignment_error_rate(predicted, sure) == pytest.approx(1 - 2 / 6)
    with pytest.raises(ValueError, match="`sure` must be one alignment per predicted sentence"):
        alignment_error_rate(predicted, sure[:1])
    with pytest.raises(TypeError, match=r"`predicted\[1\]` must be a collection of"):
        alignment_error_rate([[(0, 0)], ["0-0"]], sure)
    with pytest.raises(TypeError, match="Parse Pharaoh text with data.parse_alignment"):
        alignment_error_rate("0-0 1-1", sure)


def test_attention_alignment_takes_the_argmax_and_skips_specials():
    weights = torch.tensor(
        [  # rows: target tokens (queries), columns: source tokens (keys)
            [0.7, 0.2, 0.1],
            [0.1, 0.1, 0.8],
            [0.2, 0.6, 0.2],
            [0.3, 0.3, 0.4],  # the <eos> row
        ]
    )
    assert attention_alignment(weights) == {(0, 0), (2, 1), (1, 2), (2, 3)}
    pairs = attention_alignment(weights, ["a", "b", "c"], ["x", "y", "z", "<eos>"])
    assert pairs == {(0, 0), (2, 1), (1, 2)}
    heads = torch.stack([weights, weights.flip(-1)])  # (H, T, S): averaged over heads
    mean = attention_alignment(heads.mean(0), ["a", "b", "c"], ["x", "y", "z", "<eos>"])
    assert attention_alignment(heads, ["a", "b", "c"], ["x", "y", "z", "<eos>"]) == mean
    with pytest.raises(ValueError, match="must be 3 source and 4 target labels"):
        attention_alignment(weights, ["a", "b"], ["x", "y", "z", "<eos>"])


EXAMPLES = [
    Example("the dog sees a cat.", "der Hund sieht eine Katze.", ((0, 0), (1, 1), (2, 2))),
    Example("a cat.", "eine Katze.", ((0, 0), (1, 1), (2, 2))),
]


def test_reference_attention_rows_follow_the_reference(tiny_model, src_vocab, tgt_vocab):
    attention = reference_attention(tiny_model(), EXAMPLES, src_vocab, tgt_vocab)
    assert [tuple(a.shape) for a in attention] == [(2, 2, 7, 6), (2, 2, 4, 3)]
    torch.testing.assert_close(attention[1].sum(-1), torch.ones(2, 2, 4))
    with pytest.raises(
        TypeError, match=r"`model` must be a ModelContract \(transformer_lib.Transformer"
    ):
        reference_attention(nn.Linear(2, 2), EXAMPLES, src_vocab, tgt_vocab)


def test_evaluate_translations_reports_all_scores(tiny_model, src_vocab, tgt_vocab):
    scores = evaluate_translations(tiny_model(), EXAMPLES, src_vocab, tgt_vocab)
    assert set(scores) == {"bleu", "exact_match", "aer", "hypotheses"}
    assert 0.0 <= scores["bleu"] <= 100.0 and 0.0 <= scores["aer"] <= 1.0
    assert len(scores["hypotheses"]) == 2
    no_gold = [Example(ex.src, ex.tgt) for ex in EXAMPLES]
    beam = evaluate_translations(tiny_model(), no_gold, src_vocab, tgt_vocab, method="beam")
    assert beam["aer"] is None


def test_an_empty_corpus_scores_zero():
    assert corpus_bleu([], []) == 0.0  # sacrebleu itself raises IndexError
    assert exact_match([], []) == 0.0


def test_alignment_errors_name_the_bad_pair():
    with pytest.raises(TypeError, match=r"`predicted\[1\]` must be an \(i_src, j_tgt\) pair of "):
        alignment_error_rate([(0, 0), (1, "a"), (2, 2)], [(0, 0)])
    with pytest.raises(TypeError, match=r"`sure\[2\]` must be .* pair of ints; got \(2, 2, 2\)"):
        alignment_error_rate([(0, 0)], [(0, 0), (1, 1), (2, 2, 2)])


def test_vocabularies_of_the_wrong_size_are_named(tiny_model, src_vocab, tgt_vocab):
    larger = Vocab([*tgt_vocab.tokens, "Maus"])
    with pytest.raises(ValueError, match=r"`tgt_vocab` must be a vocabulary of the model's"):
        evaluate_translations(tiny_model(), EXAMPLES, src_vocab, larger)
    with pytest.raises(ValueError, match=r"`src_vocab` must be .*=10 tokens; got 11 tokens"):
        reference_attention(tiny_model(), EXAMPLES, larger, tgt_vocab)
