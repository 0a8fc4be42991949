"""What matters in the toy translator: the paper's Table 3, asked again at toy scale.

Every variant is notebook 07's translator with one thing changed (see
``transformer_lib.teaching.studies.ablation``: ``RECIPE``, ``VARIANTS``, ``STUDIES``); each trains from
scratch with several seeds (the seed sets the initial weights, dropout and the batch
order; all variants see the same batches for a seed). At the steps of ``--eval-at`` each
is scored on ``valid`` (greedy BLEU, and the AER of its last layer's cross-attention on
the reference translations) and on ``longer`` (greedy BLEU on sentences longer than any
seen in training). ``test`` is never used here.

    python benchmarks/ablations.py [--studies stack heads ...] [--seeds 0 1 2]

Writes one CSV row per (variant, seed, evaluation step) to
benchmarks/results/ablations.csv, with the command, commit, machine and date, and the
figure benchmarks/results/ablations.png (every study, a dot per seed); a run
that stops keeps its rows, and a second call trains only the (variant, seed) pairs the
file does not hold yet. Prints, per study, mean [min-max] over seeds at the last
evaluation step (equal steps) and at the time the fastest run needed for it (equal time,
read off each run's curve). BLEU and AER do not depend on the machine's speed; the
seconds do, so time the runs on a quiet machine, one at a time.

A study on another recipe (``OTHER_STUDIES``) is stored in its own file: ``--studies
"former stack" --eval-at 100 200 300`` writes ``benchmarks/results/stack_study_d128.csv``,
the first stack study, on notebook 07's former recipe (d_model 128, dropout 0.1,
3000-token batches).

``--summary`` trains nothing: it prints the stored rows' summary (and, for the whole study,
redraws its figure from them).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import matplotlib
import torch

matplotlib.use("Agg")  # files only, no window
import matplotlib.pyplot as plt  # noqa: E402

from transformer_lib import get_device
from transformer_lib.teaching import viz  # noqa: E402
from transformer_lib.teaching.studies.ablation import (  # noqa: E402
    BASE,
    FIELDS,
    OTHER_STUDIES,
    STUDIES,
    Corpus,
    final_scores,
    read_rows,
    summarize,
    train_variant,
)

from _common import ABOUT, provenance, write_rows  # noqa: E402  (benchmarks/ is not a package)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks/results/ablations.csv"
OTHER_OUT = {"former stack": ROOT / "benchmarks/results/stack_study_d128.csv"}


def report(rows: list[dict], title: str, names: list[str]) -> list[str]:
    """The summary of ``names`` as text lines."""
    step, seconds, lines = summarize(rows, names)
    out = [f"{title}: at step {step} (equal steps) | at {seconds:.0f} s (equal time)"]
    for line in lines:
        out.append(
            f"  {line['variant']:24s} seeds {line['seeds']}  {line['seconds']:5.1f} s  "
            f"valid BLEU {line['valid_bleu']}  longer BLEU {line['longer_bleu']}  "
            f"AER {line['valid_aer']} | valid BLEU {line['valid_bleu at time']}  "
            f"longer BLEU {line['longer_bleu at time']}"
        )
    return out


def draw(rows: list[dict], path: Path) -> None:
    """One row of panels per study (valid BLEU, longer BLEU; a dot per seed) in ``path``."""
    fig, axes = plt.subplots(len(STUDIES), 2, figsize=(13, 2.2 * len(STUDIES)), squeeze=False)
    for (left, right), (study, names) in zip(axes, STUDIES.items()):
        for ax, metric in ((left, "valid_bleu"), (right, "longer_bleu")):
            scores = final_scores(rows, names, metric)
            baseline = BASE if BASE in scores else None
            label = metric.replace("_bleu", " BLEU")
            viz.plot_seed_spread(scores, ax=ax, title=study, xlabel=label, baseline=baseline)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    studies = {**STUDIES, **OTHER_STUDIES}
    parser.add_argument("--studies", nargs="+", default=list(STUDIES), choices=list(studies))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--eval-at", type=int, nargs="+", default=[200, 400, 600])
    parser.add_argument("--out", type=Path, help="default: the study's own file")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (at most 2)")
    parser.add_argument("--device", default=None, help="default: COURSE_DEVICE, else GPU, else CPU")
    parser.add_argument(
        "--summary", action="store_true", help="train nothing: summarise the stored rows"
    )
    args = parser.parse_args(argv)
    others = [study for study in args.studies if study in OTHER_STUDIES]
    if others and len(args.studies) > 1:
        parser.error(f"--studies: {others[0]!r} is on another recipe; ask for it alone")
    args.out = args.out or (OTHER_OUT[others[0]] if others else OUT)

    torch.set_num_threads(max(1, min(args.threads, 2, os.cpu_count() or 1)))
    device = get_device(args.device)
    rows = read_rows(args.out)
    if not args.summary:
        corpus, about = Corpus(), provenance(device)
        done = {(row["variant"], row["seed"]) for row in rows}
        names = dict.fromkeys(name for study in args.studies for name in studies[study])
        for seed in args.seeds:  # seeds outermost: an early stop leaves every variant a seed
            for name in names:
                if (name, seed) in done:
                    continue
                print(f"{name}, seed {seed}", flush=True)
                new = train_variant(name, seed, corpus, sorted(args.eval_at), device)
                for row in new:
                    print(f"    {row}", flush=True)
                rows += [{**row, **about} for row in new]
                write_rows(args.out, rows, FIELDS + ABOUT)
    for study in args.studies:
        print("\n".join(report(rows, study, studies[study])))
    if args.studies == list(STUDIES):  # the whole study: its figure too
        draw(rows, args.out.with_suffix(".png"))


if __name__ == "__main__":
    sys.exit(main())
