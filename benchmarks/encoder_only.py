"""Does masked-token pretraining help with few labels? Notebook 10's study.

For each seed: an encoder-only model is pretrained on the corpus's English side (masked
tokens, ``transformer_lib.teaching.studies.encoder_only.RECIPE``), then, for each label count
of ``--labels``, fine-tuned on the subject-number task with that many labels; the same
classifier from the seed's untrained weights gets the same labels, batches and steps, and a
bag of words the same labels. All are scored by accuracy on 500 held-out task sentences of
``train`` that neither pretraining nor fine-tuning sees (``test`` is never used).

    python benchmarks/encoder_only.py [--seeds 0 1 2] [--labels 32 64 128 256 512]

Writes one CSV row per (variant, seed, label count) to benchmarks/results/encoder_only.csv,
and one per seed for its pretraining (variant "pretraining": masked-token accuracy on
``valid``), with the command, commit, machine and date; a run that stops keeps the seeds it
finished, and a second call runs only the seeds the file does not hold yet. Prints, per
label count, each variant's mean [min-max] over seeds and the course's verdict
(``studies.compare``) of the pretrained classifier against the random start and against
the bag of words. Accuracy does not depend on the machine's speed; the seconds do.
``--summary`` trains nothing: it prints the stored rows' table.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch

from transformer_lib import get_device
from transformer_lib.teaching.studies.compare import compare
from transformer_lib.teaching.studies.encoder_only import (
    BAG_OF_WORDS,
    FIELDS,
    LABEL_COUNTS,
    PRETRAINED,
    RANDOM_START,
    Corpus,
    accuracies,
    read_rows,
    run_seed,
    spread,
)

from _common import ABOUT, provenance, write_rows  # benchmarks/ is not a package

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks/results/encoder_only.csv"


def report(rows: list[dict]) -> list[str]:
    """Per label count: each variant's mean [min-max] over seeds, then the verdicts."""
    lines = []
    for n, scores in accuracies(rows).items():
        lines.append(f"{n} labels: " + "   ".join(
            f"{variant} {spread(values)}" for variant, values in scores.items()
        ))  # fmt: skip
        for theirs in (RANDOM_START, BAG_OF_WORDS):
            if len(scores.get(PRETRAINED, [])) >= 3 and len(scores.get(theirs, [])) >= 3:
                verdict = compare(scores[PRETRAINED], scores[theirs])
                lines.append("    " + verdict.sentence(PRETRAINED, theirs, "accuracy"))
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--labels", type=int, nargs="+", default=list(LABEL_COUNTS))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (at most 2)")
    parser.add_argument("--device", default=None, help="default: COURSE_DEVICE, else GPU, else CPU")
    parser.add_argument(
        "--summary", action="store_true", help="train nothing: summarise the stored rows"
    )
    args = parser.parse_args(argv)

    torch.set_num_threads(max(1, min(args.threads, 2, os.cpu_count() or 1)))
    rows = read_rows(args.out)
    if not args.summary:
        begin = time.perf_counter()
        device = get_device(args.device)
        corpus, about = Corpus(), provenance(device)
        done = {row["seed"] for row in rows}
        for seed in args.seeds:
            if seed in done:
                continue
            new = run_seed(corpus, seed, sorted(args.labels), device)
            rows += [{**row, **about} for row in new]
            write_rows(args.out, rows, FIELDS + ABOUT)  # a finished seed is kept
        print(f"run time {time.perf_counter() - begin:.0f} s")
    print("\n".join(report(rows)))


if __name__ == "__main__":
    sys.exit(main())
