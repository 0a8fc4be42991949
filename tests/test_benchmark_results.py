"""The benchmarks' shared CSV writer keeps the committed results' format, byte for byte."""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

import pytest

from transformer_lib.teaching.studies.ablation import FIELDS as ABLATION_FIELDS
from transformer_lib.teaching.studies.encoder_only import FIELDS as ENCODER_ONLY_FIELDS

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import cross_machine  # noqa: E402
import translator_seeds  # noqa: E402

import _common  # noqa: E402  (benchmarks/ is not a package)

COLUMNS = {  # each committed CSV and the columns its benchmark writes
    "ablations.csv": ABLATION_FIELDS + _common.ABOUT,  # benchmarks/ablations.py
    "stack_study_d128.csv": ABLATION_FIELDS + _common.ABOUT,
    "decoder_only.csv": ABLATION_FIELDS + _common.ABOUT,  # benchmarks/decoder_only.py
    "cross_machine.csv": cross_machine.FIELDS,
    "cross_machine_lm.csv": cross_machine.LM_FIELDS,
    "translator_seeds.csv": translator_seeds.FIELDS,
    "encoder_only.csv": ENCODER_ONLY_FIELDS + _common.ABOUT,  # benchmarks/encoder_only.py
}


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_write_rows_rewrites_a_committed_csv_unchanged(name, tmp_path):
    committed = BENCHMARKS / "results" / name
    with open(committed, newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    _common.write_rows(tmp_path / name, rows, COLUMNS[name])
    assert (tmp_path / name).read_bytes() == committed.read_bytes()


def test_provenance_fills_the_about_columns():
    import torch

    about = _common.provenance(torch.device("cpu"))
    assert list(about) == _common.ABOUT
    assert about["machine"].endswith(f"threads, torch {torch.__version__}, cpu")


def test_the_cross_machine_rows_come_from_one_clean_commit_and_every_setting():
    """One commit with nothing uncommitted, every kernel set asked for (PyTorch's own pick
    included, recorded by the name of what ran) at 1 and 2 threads, every run complete."""
    with open(BENCHMARKS / "results" / "cross_machine.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert len({row["commit"] for row in rows}) == 1 and "+" not in rows[0]["commit"]
    settings = {(row["asked"], row["kernels"], row["threads"]) for row in rows}
    assert {(asked, threads) for asked, _, threads in settings} == {
        (asked, threads) for asked in ("default", "avx2", "native") for threads in ("1", "2")
    }
    assert all(kernels == asked for asked, kernels, _ in settings if asked != "native")
    steps = sum(len(steps) for steps in cross_machine.RUNS.values())
    assert len(rows) == len(settings) * len(cross_machine.SEEDS) * steps


def test_the_language_models_cross_machine_rows_cover_every_setting_from_one_clean_commit():
    with open(
        BENCHMARKS / "results" / "cross_machine_lm.csv", newline="", encoding="utf-8"
    ) as file:
        rows = list(csv.DictReader(file))
    assert len({row["commit"] for row in rows}) == 1 and "+" not in rows[0]["commit"]
    assert sorted((r["asked"], r["threads"], r["seed"]) for r in rows) == sorted(
        (asked, threads, str(seed))
        for asked in ("default", "avx2", "native")
        for threads in ("1", "2")
        for seed in cross_machine.SEEDS
    )


@pytest.mark.parametrize("name", sorted(COLUMNS))
def test_every_stored_study_names_the_committed_tree_that_made_it(name):
    """A commit with "+uncommitted" names a tree that no one can rebuild."""
    with open(BENCHMARKS / "results" / name, newline="", encoding="utf-8") as file:
        commits = {row["commit"] for row in csv.DictReader(file)}
    dirty = sorted(commit for commit in commits if not re.fullmatch(r"[0-9a-f]{7,40}", commit))
    assert not dirty, f"{name} names {dirty}: rerun it from a committed tree"
