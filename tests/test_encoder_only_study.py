"""Notebook 10's study (transformer_lib.teaching.studies.encoder_only): what it scores on is
kept out of what it trains on, the two encoders of a seed start alike, and the stored table
reads back with the verdicts its benchmark printed."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from transformer_lib.data.masking import MASK
from transformer_lib.model.families import FAMILIES, families_table
from transformer_lib.teaching.studies import encoder_only
from transformer_lib.teaching.studies.compare import compare
from transformer_lib.teaching.widgets.fill_mask import draw_fill_mask, fill_mask, fill_mask_widget

STORED = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "encoder_only.csv"


@pytest.fixture(scope="module")
def corpus():
    return encoder_only.Corpus()


def test_the_held_out_sentences_are_neither_pretrained_on_nor_labelled(corpus):
    held = {tuple(ids) for ids in corpus.held_out[0]}
    assert len(corpus.held_out[0]) == encoder_only.HELD_OUT
    assert not held & {tuple(ids) for ids in corpus.text}
    assert not held & {tuple(ids) for ids in corpus.pool[0]}
    assert len(corpus.sentences) == len(corpus.text)
    assert 0.4 < sum(corpus.held_out[1]) / encoder_only.HELD_OUT < 0.6


def test_a_seeds_smaller_label_sets_are_part_of_its_larger_ones(corpus):
    small, large = corpus.labelled(32, seed=1), corpus.labelled(64, seed=1)
    assert small[0] == large[0][:32] and small[1] == large[1][:32]
    assert corpus.labelled(32, seed=2)[0] != small[0]
    with pytest.raises(ValueError, match="n"):
        corpus.labelled(len(corpus.pool[0]) + 1, seed=0)


def test_the_random_start_is_the_start_pretraining_left(corpus, monkeypatch):
    starts, build = [], encoder_only.start_model

    def recorded(corpus, seed):
        model = build(corpus, seed)
        starts.append({name: value.clone() for name, value in model.state_dict().items()})
        return model

    monkeypatch.setattr(encoder_only, "start_model", recorded)
    pretrained, _ = encoder_only.pretrain(corpus, seed=3, steps=1)
    encoder_only.fine_tune(corpus, 4, seed=3, pretrained=None, steps=1)
    assert len(starts) == 2 and starts[0].keys() == starts[1].keys()
    for name, value in starts[0].items():
        torch.testing.assert_close(starts[1][name], value)
    assert any(not torch.equal(starts[0][name], value)
               for name, value in pretrained.state_dict().items())  # fmt: skip


def test_the_unigram_yardstick_reads_no_context(corpus):
    scores = encoder_only.unigram_scores(corpus)
    assert 0 < scores["accuracy"] < 0.3 and 20 < scores["perplexity"] < len(corpus.vocab)


def test_the_stored_table_has_three_seeds_of_every_variant_and_label_count():
    rows = encoder_only.read_rows(STORED)
    table = encoder_only.accuracies(rows)
    assert list(table) == list(encoder_only.LABEL_COUNTS)
    for by_variant in table.values():
        assert list(by_variant) == list(encoder_only.VARIANTS)
        assert all(len(values) == 3 for values in by_variant.values())
    assert len({row["commit"] for row in rows}) == 1 and "+" not in rows[0]["commit"]
    # the verdicts notebook 10 states (cell 10-058): none at 32 labels, better from 64 on
    verdicts = {
        n: str(compare(table[n][encoder_only.PRETRAINED], table[n][encoder_only.RANDOM_START]))
        for n in table
    }
    assert verdicts == {32: "no difference shown", 64: "better", 128: "better", 256: "better",
                        512: "better"}  # fmt: skip


def test_fill_mask_ranks_real_tokens_for_each_blank_and_names_a_bad_sentence(corpus):
    torch.manual_seed(0)
    model = encoder_only.EncoderOnlyModel(corpus.config())
    blanks = fill_mask(model, corpus.vocab, f"the {MASK} sees the {MASK}.", k=3)
    assert len(blanks) == 2 and all(len(top) == 3 for top in blanks)
    for top in blanks:
        assert all(not token.startswith("<") for token, _ in top)
        assert [p for _, p in top] == sorted((p for _, p in top), reverse=True)
    with pytest.raises(ValueError, match=r"sentence.*<mask>"):
        fill_mask(model, corpus.vocab, "the dog sees the cat.")
    from matplotlib.figure import Figure

    assert draw_fill_mask(Figure(), model, corpus.vocab, f"the {MASK} sleeps.") == fill_mask(
        model, corpus.vocab, f"the {MASK} sleeps."
    )
    widget = fill_mask_widget(model, corpus.vocab, f"the {MASK} sleeps.")
    widget.controls["sentence"].value = f"a {MASK} sleeps."
    assert len(widget.figure.axes) == 1


def test_the_families_table_names_each_family_its_model_and_mask():
    table = families_table()
    for family in FAMILIES:
        assert family.name in table and family.model in table and family.mask in table
    assert [f.name for f in FAMILIES] == ["encoder-decoder", "decoder-only", "encoder-only"]
