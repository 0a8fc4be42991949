"""Does translation need the encoder? Notebook 07's translator against a decoder-only one.

The variants are ``transformer_lib.teaching.studies.decoder_only.VARIANTS``: notebook 07's
encoder-decoder, trained as ``benchmarks/ablations.py`` trains its base; a decoder-only
``LanguageModelTranslator`` ("English <sep> German") with notebook 07's widths and the
layer count closest to its parameter count; and that model with one of GPT-2's choices
switched at a time. Each trains from scratch with several seeds (the seed sets the initial
weights and the batch order; every variant sees the same pairs in the same batches for a
seed). At the steps of ``--eval-at`` each is scored on ``valid`` and ``longer`` (greedy
BLEU) and, for the encoder-decoder only, the AER of its last cross-attention layer on
``valid`` (a decoder-only model has no cross-attention: the cell stays empty). ``test`` is
never used here.

    python benchmarks/decoder_only.py [--variants ...] [--seeds 0 1 2] [--eval-at 200 400 600]

Writes one CSV row per (variant, seed, evaluation step) to
benchmarks/results/decoder_only.csv, with the command, commit, machine and date; a run
that stops keeps its rows, and a second call trains only the (variant, seed) pairs the file
does not hold yet. Prints each run's scores and time per step, the summary (mean [min-max]
over seeds at equal steps and at equal training time), the course's verdicts
(``studies.compare``: decoder-only against encoder-decoder, each switch against
decoder-only) and the call's run time. BLEU does not depend on the machine's speed; the
seconds do, so time the runs on a quiet machine. ``--summary`` trains nothing: it prints
the stored rows' tables.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch

from transformer_lib import get_device
from transformer_lib.model.transformer import count_parameters
from transformer_lib.teaching.studies import ablation, compare
from transformer_lib.teaching.studies.decoder_only import (
    FIELDS,
    STUDIES,
    VARIANTS,
    Corpus,
    build_model,
    equal_time,
    read_rows,
    scores_at_time,
    summarize,
    train_run,
)

from _common import ABOUT, provenance, write_rows  # benchmarks/ is not a package

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks/results/decoder_only.csv"
# (ours, theirs): in each study, every variant against the study's first
PAIRS = [(name, names[0]) for names in STUDIES.values() for name in names[1:]]
BLEUS = {"valid_bleu": "valid BLEU", "longer_bleu": "longer BLEU"}


def runs_table(rows: list[dict], parameters: dict[str, int]) -> list[str]:
    """One line per (variant, seed): parameters, BLEU at its last step, ms per step."""
    out = [f"{'variant':22s} {'params':>8s} seed  step  valid BLEU  longer BLEU  ms/step"]
    last = {}
    for row in rows:  # each run's last evaluation
        key = (row["variant"], row["seed"])
        if key not in last or row["step"] > last[key]["step"]:
            last[key] = row
    for name in VARIANTS:
        for (variant, seed), row in sorted(last.items()):
            if variant == name:
                out.append(
                    f"{name:22s} {parameters.get(name, 0):8d} {seed:4d} {row['step']:5d} "
                    f"{row['valid_bleu']:11.1f} {row['longer_bleu']:12.1f} "
                    f"{1e3 * row['seconds'] / row['step']:8.1f}"
                )
    return out


def summary_table(rows: list[dict], title: str, names: list[str]) -> list[str]:
    """``summarize`` as text lines (the layout of ``benchmarks/ablations.py``)."""
    step, seconds, lines = summarize(rows, names)
    out = [f"{title}: at step {step} (equal steps) | at {seconds:.0f} s (equal time)"]
    for line in lines:
        out.append(
            f"  {line['variant']:22s} seeds {line['seeds']}  {line['seconds']:5.1f} s  "
            f"valid BLEU {line['valid_bleu']}  longer BLEU {line['longer_bleu']}  "
            f"AER {line['valid_aer'] or '-':20s} | valid BLEU {line['valid_bleu at time']}  "
            f"longer BLEU {line['longer_bleu at time']}"
        )
    return out


def verdicts(rows: list[dict]) -> list[str]:
    """The course's rule on each pair of :data:`PAIRS` and each BLEU, at equal steps and at
    equal time; a pair with fewer than ``compare.MIN_SEEDS`` seeds gets no verdict."""
    out = []
    stored = {row["variant"] for row in rows}
    for ours, theirs in PAIRS:
        if not {ours, theirs} <= stored:
            continue
        seeds = [{row["seed"] for row in rows if row["variant"] == name} for name in (ours, theirs)]
        if min(map(len, seeds)) < compare.MIN_SEEDS:
            out.append(f"{ours} against {theirs}: no verdict, fewer than {compare.MIN_SEEDS} seeds")
            continue
        step, seconds = equal_time(rows, [ours, theirs])
        for metric, label in BLEUS.items():
            for when, scores in (
                (f"step {step}", ablation.final_scores(rows, [ours, theirs], metric)),
                (f"{seconds:.0f} s", scores_at_time(rows, [ours, theirs], metric)),
            ):
                verdict = compare.compare(scores[ours], scores[theirs])
                out.append(f"At {when}: " + verdict.sentence(ours, theirs, label))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--eval-at", type=int, nargs="+", default=[200, 400, 600])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (at most 2)")
    parser.add_argument("--device", default=None, help="default: COURSE_DEVICE, else GPU, else CPU")
    parser.add_argument(
        "--summary", action="store_true", help="train nothing: summarise the stored rows"
    )
    args = parser.parse_args(argv)

    start = time.perf_counter()
    torch.set_num_threads(max(1, min(args.threads, 2, os.cpu_count() or 1)))
    device = get_device(args.device)
    rows = read_rows(args.out)
    corpus = Corpus()
    print(f"decoder-only layers: {corpus.matched_layers} (parameter count closest to notebook "
          f"07's), max_len {corpus.lm_max_len}, joint vocabulary {len(corpus.joint)}")  # fmt: skip
    with torch.random.fork_rng(devices=[]):
        parameters = {name: count_parameters(build_model(name, corpus)) for name in VARIANTS}
    if not args.summary:
        about = provenance(device)
        done = {(row["variant"], row["seed"]) for row in rows}
        for seed in args.seeds:  # seeds outermost: an early stop leaves every variant a seed
            for name in args.variants:
                if (name, seed) in done:
                    continue
                print(f"{name}, seed {seed}", flush=True)
                new = train_run(name, seed, corpus, sorted(args.eval_at), device)
                for row in new:
                    print(f"    {row}", flush=True)
                rows += [{**row, **about} for row in new]
                write_rows(args.out, rows, FIELDS + ABOUT)
    if not rows:
        sys.exit(f"no rows in {args.out}")
    stored = {row["variant"] for row in rows}
    print("\n".join(runs_table(rows, parameters)))
    for study, names in STUDIES.items():
        if stored >= set(names):
            print("\n".join(summary_table(rows, study, names)))
    print("\n".join(verdicts(rows)))
    print(f"run time of this call: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    sys.exit(main())
