"""studies.decoder_only: the variants, the parameter match, the rows and their summary."""

from __future__ import annotations

import copy
import csv
from pathlib import Path

import pytest
import torch

from transformer_lib.data import SEP, make_batches, tokenize
from transformer_lib.data.vocab import EOS_ID
from transformer_lib.inference.decode import greedy_decode
from transformer_lib.model.transformer import Transformer, count_parameters
from transformer_lib.teaching.studies import ablation, compare
from transformer_lib.teaching.studies import decoder_only as study


@pytest.fixture(scope="module")
def corpus() -> study.Corpus:
    return study.Corpus()


@pytest.fixture
def tiny(corpus) -> study.Corpus:
    """The corpus with 64 training pairs and 4 sentences in each evaluation split."""
    small = copy.copy(corpus)
    small.pairs, small.joint_pairs = corpus.pairs[:64], corpus.joint_pairs[:64]
    small.valid, small.longer = corpus.valid[:4], corpus.longer[:4]
    return small


# Each switch and the one config field it sets to GPT-2's choice (or, for "untied", away
# from it: the course's model already ties its output layer to the embedding).
GPT2 = {
    "+ pre-norm": {"norm_first": True},
    "+ GELU": {"activation": "gelu"},
    "+ learned positions": {"learned_positions": True},
    "untied": {"tie_output": False},
}


def test_each_switch_changes_only_the_field_it_names(corpus):
    base = corpus.lm_config().to_dict()
    assert list(study.SWITCHES) == list(GPT2)
    assert all(set(names) <= set(study.VARIANTS) for names in study.STUDIES.values())
    for name, expected in GPT2.items():
        config = study.build_model(name, corpus).config.to_dict()
        changed = {key: config[key] for key in base if config[key] != base[key]}
        assert changed == expected, name
    assert study.build_model(study.ENCODER_DECODER, corpus).config == corpus.config()
    widths = {key: base[key] for key in ("d_model", "n_heads", "d_ff", "dropout")}
    assert widths == {key: ablation.MODEL[key] for key in widths}  # notebook 07's widths
    assert base["n_encoder_layers"] == 0 and base["tie_output"] and not base["norm_first"]


def test_the_decoder_only_layer_count_is_the_closest_parameter_match(corpus):
    counts = study.parameter_counts(corpus, max_layers=8)
    target = counts.pop(study.ENCODER_DECODER)
    assert target == count_parameters(Transformer(corpus.config()))
    distance = {n: abs(count - target) for n, count in counts.items()}
    assert distance[corpus.matched_layers] == min(distance.values())
    assert study.build_model(study.DECODER_ONLY, corpus).config.n_decoder_layers == (
        corpus.matched_layers
    )


def test_the_parameter_counts_follow_from_the_widths(corpus):
    """Counted by hand: per layer, attention's 4 D x D matrices and biases, the FFN's two
    matrices and biases, two LayerNorms; the tied embedding and the output bias once."""
    D, F, V = ablation.MODEL["d_model"], ablation.MODEL["d_ff"], len(corpus.joint)
    N, L = corpus.matched_layers, corpus.lm_max_len
    layer = 4 * (D * D + D) + (D * F + F) + (F * D + D) + 2 * 2 * D
    expected = {
        study.DECODER_ONLY: N * layer + V * D + V,
        "+ pre-norm": N * layer + V * D + V + 2 * D,  # the final LayerNorm
        "+ GELU": N * layer + V * D + V,
        "+ learned positions": N * layer + V * D + V + L * D,
        "untied": N * layer + 2 * V * D + V,
    }
    for name, count in expected.items():
        assert count_parameters(study.build_model(name, corpus)) == count, name


def test_the_decoder_only_model_sees_the_encoder_decoders_batches(corpus):
    joint, pairs = corpus.joint_train_pairs(0.25), corpus.train_pairs(0.25)
    assert [(len(s), len(t)) for s, t in joint] == [(len(s), len(t)) for s, t in pairs]
    for ours, theirs in zip(
        make_batches(joint, max_tokens=1500, shuffle=True, seed=1001),
        make_batches(pairs, max_tokens=1500, shuffle=True, seed=1001),
    ):
        assert ours.index.tolist() == theirs.index.tolist()


def _never_ending(corpus, **changes) -> torch.nn.Module:
    """The decoder-only model with ``<eos>`` made impossible: every search runs its length."""
    model = corpus.lm_model(corpus.lm_config(**changes))
    with torch.no_grad():
        model.language_model.output.bias[EOS_ID] = -1e4
    return model


def test_the_position_table_holds_the_longest_greedy_search(corpus):
    """The longest `longer` sentence's search runs to 2·S + 10 tokens: the table holds it;
    a table one position shorter does not, and refuses that length before searching."""
    longest = max((ex[0] for ex in corpus.longer), key=lambda text: len(tokenize(text)))
    src = torch.tensor([corpus.joint.encode(tokenize(longest))])  # (1, S)
    full_length = 2 * src.size(1) + 10
    tokens, _ = greedy_decode(_never_ending(corpus), src)  # the default max_len
    assert tokens.size(1) == full_length
    short = _never_ending(corpus, max_len=corpus.lm_max_len - 1)
    with pytest.raises(
        ValueError,
        match=r"`max_len` must be at most \d+, the positions the model's table \(max_len=",
    ):
        greedy_decode(short, src, max_len=full_length)
    assert corpus.joint[SEP] == short.sep_id


def test_rows_have_the_fields_and_the_summary_reads_them(tiny, one_thread, tmp_path):
    rows = []
    for name in (study.ENCODER_DECODER, study.DECODER_ONLY):
        for seed in (0, 1, 2):
            rows += study.train_run(name, seed, tiny, [2, 3])
    assert all(list(row) == study.FIELDS for row in rows)
    assert {row["step"] for row in rows} == {2, 3}
    assert all((row["valid_aer"] is None) == (row["variant"] == study.DECODER_ONLY) for row in rows)
    path = tmp_path / "rows.csv"
    with open(path, "w", newline="", encoding="utf-8") as file:  # as write_rows writes them
        writer = csv.DictWriter(file, fieldnames=study.FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    stored = study.read_rows(path)
    assert [row["loss"] for row in stored] == [row["loss"] for row in rows]
    step, _, (encoder_decoder, decoder_only) = study.summarize(stored, list(study.VARIANTS)[:2])
    assert step == 3 and decoder_only["valid_aer"] == "" and encoder_decoder["valid_aer"]
    assert encoder_decoder["seeds"] == decoder_only["seeds"] == 3
    names = [study.DECODER_ONLY, study.ENCODER_DECODER]
    for scores in (
        ablation.final_scores(stored, names, "valid_bleu"),
        study.scores_at_time(stored, names, "longer_bleu"),
    ):
        verdict = compare.compare(scores[study.DECODER_ONLY], scores[study.ENCODER_DECODER])
        assert verdict.verdict in (compare.BETTER, compare.WORSE, compare.NO_DIFFERENCE)


def test_the_encoder_decoder_is_ablations_base_and_a_seed_repeats(tiny, one_thread):
    ours = study.train_run(study.ENCODER_DECODER, 0, tiny, [2])
    base = ablation.train_variant(ablation.BASE, 0, tiny, [2])
    assert ours[0]["loss"] == base[0]["loss"] and ours[0]["variant"] == study.ENCODER_DECODER
    first, again, other = (study.train_run("+ GELU", seed, tiny, [2]) for seed in (0, 0, 1))
    assert first[0]["loss"] == again[0]["loss"] != other[0]["loss"]


def test_summarize_reads_equal_time_off_each_curve_and_leaves_a_missing_aer_empty():
    rows = [
        {"variant": name, "seed": 0, "step": step, "seconds": seconds, "loss": 1.0,
         "valid_bleu": bleu, "longer_bleu": bleu, "valid_aer": aer}
        for name, aer, points in (
            (study.ENCODER_DECODER, 0.2, [(100, 10.0, 20.0), (200, 20.0, 60.0)]),
            (study.DECODER_ONLY, None, [(100, 20.0, 30.0), (200, 40.0, 80.0)]),
        )
        for step, seconds, bleu in points
    ]  # fmt: skip
    step, seconds, (ours, theirs) = study.summarize(rows, list(study.VARIANTS)[:2])
    assert (step, seconds) == (200, 20.0)
    assert ours["valid_aer"] == "0.200 [0.200-0.200]" and theirs["valid_aer"] == ""
    assert theirs["valid_bleu"] == "80.0 [80.0-80.0]"
    assert theirs["valid_bleu at time"] == "30.0 [30.0-30.0]"  # at 20 s: its step 100


def test_train_run_names_the_variants_and_wants_steps(corpus):
    with pytest.raises(ValueError, match=r"`name` must be one of \['encoder-decoder', "):
        study.train_run("+ RMSNorm", 0, corpus, [10])
    with pytest.raises(ValueError, match=r"`eval_at` must be a non-empty list of steps"):
        study.train_run("+ GELU", 0, corpus, [])


STORED = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "decoder_only.csv"


@pytest.mark.skipif(not STORED.exists(), reason="benchmarks/decoder_only.py has not stored it yet")
def test_the_stored_rows_are_complete():
    """Every variant, 3 seeds or more, 3 evaluation steps or more, the provenance, and an
    AER exactly where there is cross-attention."""
    rows = study.read_rows(STORED)
    assert {row["variant"] for row in rows} == set(study.VARIANTS)
    for variant in study.VARIANTS:
        assert len({row["seed"] for row in rows if row["variant"] == variant}) >= 3, variant
        assert len({row["step"] for row in rows if row["variant"] == variant}) >= 3, variant
    assert all(
        (row["valid_aer"] is None) == (row["variant"] != study.ENCODER_DECODER) for row in rows
    )
    assert all(row["command"] and row["commit"] and row["machine"] and row["date"] for row in rows)
