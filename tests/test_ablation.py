"""ablation: the study's bookkeeping, its stored results, and one of them re-run."""

from __future__ import annotations

from pathlib import Path

import pytest

from transformer_lib.teaching.studies import ablation

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
STORED = {"ablations.csv": ablation.STUDIES, "stack_study_d128.csv": ablation.OTHER_STUDIES}


def _run(variant: str, seed: int, points: list[tuple[int, float, float]]) -> list[dict]:
    """Rows of one run: (step, seconds, valid BLEU); the other metrics follow BLEU."""
    return [
        {"variant": variant, "seed": seed, "step": step, "seconds": seconds, "loss": 1.0,
         "valid_bleu": bleu, "longer_bleu": bleu / 2, "valid_aer": 0.1}
        for step, seconds, bleu in points
    ]  # fmt: skip


def test_at_time_interpolates_between_evaluations_and_clamps_at_the_ends():
    runs = _run("notebook 07", 0, [(100, 10.0, 20.0), (200, 20.0, 60.0)])
    assert ablation.at_time(runs, "valid_bleu", 15.0) == pytest.approx(40.0)
    assert ablation.at_time(runs, "valid_bleu", 5.0) == 20.0
    assert ablation.at_time(runs, "valid_bleu", 25.0) == 60.0


def test_summarize_compares_at_equal_steps_and_at_the_fastest_runs_time():
    rows = _run("notebook 07", 0, [(100, 10.0, 20.0), (200, 20.0, 60.0)])
    rows += _run("notebook 07", 1, [(100, 10.0, 30.0), (200, 20.0, 70.0)])
    rows += _run("pre-norm", 0, [(100, 20.0, 30.0), (200, 40.0, 80.0)])  # twice as slow
    step, seconds, (base, pre_norm) = ablation.summarize(rows, ["notebook 07", "pre-norm"])
    assert (step, seconds) == (200, 20.0)
    assert base["seeds"] == 2 and base["valid_bleu"] == "65.0 [60.0-70.0]"
    assert base["valid_aer"] == "0.100 [0.100-0.100]"
    # at 20 s the slower run is at its step 100
    assert pre_norm["valid_bleu"] == "80.0 [80.0-80.0]"
    assert pre_norm["valid_bleu at time"] == "30.0 [30.0-30.0]"
    assert pre_norm["longer_bleu at time"] == "15.0 [15.0-15.0]"


def test_summarize_names_the_stored_variants_when_none_is_asked_for():
    with pytest.raises(ValueError, match=r"`names` must be variants with stored rows, among"):
        ablation.summarize(_run("notebook 07", 0, [(100, 1.0, 1.0)]), ["8 heads"])


def test_train_variant_names_the_variants_it_knows_and_wants_steps():
    with pytest.raises(ValueError, match=r"`name` must be one of \['notebook 07', "):
        ablation.train_variant("16 heads", 0, None, [10])
    with pytest.raises(ValueError, match=r"`eval_at` must be a non-empty list of steps"):
        ablation.train_variant("8 heads", 0, None, [])


def test_train_variant_scores_at_every_step_asked_for(one_thread):
    """Steps that are not multiples of the first still get their row (tiny corpus)."""
    corpus = ablation.Corpus()
    corpus.pairs, corpus.valid, corpus.longer = (
        corpus.pairs[:64],
        corpus.valid[:4],
        corpus.longer[:4],
    )
    rows = ablation.train_variant("1 head", 0, corpus, [3, 5, 6])
    assert [row["step"] for row in rows] == [3, 5, 6]
    assert all(row["variant"] == "1 head" and 0 <= row["valid_aer"] <= 1 for row in rows)


def test_every_study_names_known_variants_and_each_changes_one_thing():
    for names in [*ablation.STUDIES.values(), *ablation.OTHER_STUDIES.values()]:
        assert set(names) <= set(ablation.VARIANTS)
    for name, variant in ablation.VARIANTS.items():
        for field in variant.get("train", {}):
            assert hasattr(ablation.RECIPE, field), (name, field)
        ablation.recipe_config(200, 300, **variant.get("config", {}))  # validates


@pytest.mark.parametrize("name", sorted(STORED))
def test_the_stored_rows_are_complete(name):
    rows = ablation.read_rows(RESULTS / name)
    assert rows, f"{name} holds no rows"
    variants = {row["variant"] for row in rows}
    # every variant of every study is there, and nothing else
    assert variants == {v for names in STORED[name].values() for v in names}
    for variant in variants:
        runs = {(row["seed"]) for row in rows if row["variant"] == variant}
        assert len(runs) >= 3, variant
        steps = {row["step"] for row in rows if row["variant"] == variant}
        assert len(steps) >= 3, variant
    assert all(row["command"] and row["commit"] and row["machine"] and row["date"] for row in rows)


def test_the_former_recipe_changes_the_model_and_the_batches_alone():
    """'former: paper' is notebook 07's translator on its former recipe, and each former
    variant differs from it in the stack alone (as today's variants differ from today's)."""
    paper = ablation.VARIANTS["former: paper"]
    assert paper["train"] == {"max_tokens": 3000}
    config = ablation.recipe_config(200, 300, **paper["config"])
    assert (config.d_model, config.d_ff, config.dropout) == (128, 512, 0.1)
    assert config.attention_init == "separate"
    for name in ablation.OTHER_STUDIES["former stack"]:
        assert ablation.VARIANTS[name]["train"] == paper["train"], name
