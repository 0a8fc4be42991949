"""benchmarks/ablations.py: its bookkeeping, its stored results, and one of them re-run."""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path

import pytest
import torch

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "ablations.py"
spec = importlib.util.spec_from_file_location("ablations", PATH)
ablations = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ablations)


def _run(variant: str, seed: int, points: list[tuple[int, float, float]]) -> list[dict]:
    """Rows of one run: (step, seconds, valid BLEU); the other metrics follow BLEU."""
    return [
        {"variant": variant, "seed": seed, "step": step, "seconds": seconds, "loss": 1.0,
         "valid_bleu": bleu, "longer_bleu": bleu / 2, "valid_aer": 0.1}
        for step, seconds, bleu in points
    ]  # fmt: skip


def test_at_time_interpolates_between_evaluations_and_clamps_at_the_ends():
    runs = _run("paper", 0, [(100, 10.0, 20.0), (200, 20.0, 60.0)])
    assert ablations.at_time(runs, "valid_bleu", 15.0) == pytest.approx(40.0)
    assert ablations.at_time(runs, "valid_bleu", 5.0) == 20.0
    assert ablations.at_time(runs, "valid_bleu", 25.0) == 60.0


def test_summary_compares_at_equal_steps_and_at_the_fastest_runs_time():
    rows = _run("paper", 0, [(100, 10.0, 20.0), (200, 20.0, 60.0)])
    rows += _run("pre-norm", 0, [(100, 20.0, 30.0), (200, 40.0, 80.0)])  # twice as slow
    header, paper, pre_norm = ablations.summary(rows, "norm")
    assert header == "norm: at step 200 (equal steps) | at 20 s (equal time)"
    assert "valid BLEU 60.0 [60.0-60.0]" in paper and "| valid BLEU 60.0" in paper
    # at 20 s the slower run is at its step 100
    assert "valid BLEU 80.0 [80.0-80.0]" in pre_norm and "| valid BLEU 30.0" in pre_norm


def test_every_study_names_known_variants_and_the_stored_rows_are_complete():
    for names in ablations.STUDIES.values():
        assert set(names) <= set(ablations.VARIANTS)
    rows = ablations.read_rows(ablations.OUT)
    assert rows, f"{ablations.OUT} holds no rows"
    runs = {(row["variant"], row["seed"]) for row in rows}
    for variant in {row["variant"] for row in rows}:
        assert len({seed for name, seed in runs if name == variant}) >= 3, variant
    assert all(row["commit"] and row["machine"] and row["date"] for row in rows)


@pytest.mark.slow
def test_a_stored_row_re_run_lands_inside_the_stored_spread():
    """Train the paper's model with seed 0 again (200 steps, about 75 s on 2 CPU cores):
    its valid BLEU and AER must land within the range over the stored seeds."""
    torch.set_num_threads(min(2, torch.get_num_threads()))
    stored = [
        row
        for row in ablations.read_rows(ablations.OUT)
        if row["variant"] == ablations.BASE and row["step"] == 200
    ]
    (again,) = [
        row
        for row in ablations.train_variant(ablations.BASE, 0, ablations.Corpus(), [200], "cpu")
        if row["step"] == 200
    ]
    for metric in ("valid_bleu", "valid_aer"):
        values = [row[metric] for row in stored]
        low, high = min(values), max(values)
        assert low <= again[metric] <= high, (metric, again[metric], statistics.mean(values))
