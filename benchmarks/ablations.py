"""What matters in the toy translator: the paper's Table 3, asked again at toy scale.

Every variant is notebook 07's translator with one thing changed; each trains from
scratch with several seeds (the seed sets the initial weights, dropout and the batch
order; all variants see the same batches for a seed). During training, at the steps of
``--eval-at``, each is scored on ``valid`` (greedy BLEU, and the AER of its last layer's
cross-attention on the reference translations) and on the ``longer`` split (greedy BLEU:
sentences longer than any seen in training). ``test`` is never used here.

Studies (a variant shared by several studies trains once):

- stack:  the paper's stack, then each way nn.Transformer's differs (dropout on the
          attention weights, a final LayerNorm after each post-norm stack, Q/K/V
          initialised as one (3D, D) matrix with zero biases), all three, and stock
          ``nn.Transformer`` (``reference.TorchTransformer``)
- heads, dropout, smoothing, positions, norm, warmup: one hyper-parameter each

    python benchmarks/ablations.py [--studies stack heads ...] [--seeds 0 1 2]

Writes one CSV row per (variant, seed, evaluation step) to
benchmarks/results/ablations.csv, with the command, commit, machine and date; a run
that stops keeps its rows, and a second call trains only the (variant, seed) pairs the
file does not hold yet. Prints, per study, mean [min-max] over seeds at the last
evaluation step (equal steps) and at the time the fastest run needed for it (equal time,
read off each run's curve). BLEU and AER do not depend on the machine's speed;
the seconds do, so time the runs on a quiet machine.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
from pathlib import Path

import torch

from transformer_lib import TransformerConfig, get_device
from transformer_lib.data import (
    build_vocabs,
    concatenate_pairs,
    encode_pairs,
    load_split,
    make_batches,
)
from transformer_lib.evaluate import evaluate_translations
from transformer_lib.model import Transformer
from transformer_lib.reference import TorchTransformer
from transformer_lib.train import TrainState, make_optimizer, make_scheduler, train

sys.path.insert(0, str(Path(__file__).resolve().parent))
from translator_seeds import provenance  # noqa: E402  (benchmarks/ is not a package)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks/results/ablations.csv"
# Notebook 07's recipe: what every variant keeps unless it changes it.
RECIPE = {"steps": 450, "warmup": 100, "peak_lr": 0.005, "max_tokens": 3000, "smoothing": 0.1}
BASE = "paper"
# name -> what differs from the paper's model and notebook 07's recipe
VARIANTS: dict[str, dict] = {
    BASE: {},
    "attention dropout": {"config": {"attention_dropout": 0.1}},
    "final norm": {"config": {"final_norm": True}},
    "fused init": {"config": {"attention_init": "fused"}},
    "all three": {
        "config": {"attention_dropout": 0.1, "final_norm": True, "attention_init": "fused"}
    },
    "nn.Transformer": {"model": "torch"},
    "1 head": {"config": {"n_heads": 1}},
    "2 heads": {"config": {"n_heads": 2}},
    "8 heads": {"config": {"n_heads": 8}},
    "no dropout": {"config": {"dropout": 0.0}},
    "no smoothing": {"train": {"smoothing": 0.0}},
    "learned positions": {"config": {"learned_positions": True}},
    "pre-norm": {"config": {"norm_first": True}},
    "warmup 25": {"train": {"warmup": 25}},
    "warmup 400": {"train": {"warmup": 400}},
}
STUDIES = {
    "stack": [BASE, "attention dropout", "final norm", "fused init", "all three", "nn.Transformer"],
    "heads": ["1 head", "2 heads", BASE, "8 heads"],
    "dropout": ["no dropout", BASE, "attention dropout"],
    "smoothing": ["no smoothing", BASE],
    "positions": [BASE, "learned positions"],
    "norm": [BASE, "pre-norm"],
    "warmup": ["warmup 25", BASE, "warmup 400"],
}
METRICS = ("valid_bleu", "longer_bleu", "valid_aer")
FIELDS = ["variant", "seed", "step", "seconds", "loss", *METRICS]
ABOUT = ["command", "commit", "machine", "date"]


class Corpus:
    """Notebook 07's data: vocabularies, training pairs (with its joined pairs), splits."""

    def __init__(self) -> None:
        train_examples = load_split("train")
        self.vocabs = build_vocabs(train_examples)
        pairs = encode_pairs(train_examples, *self.vocabs)
        self.train_pairs = pairs + concatenate_pairs(pairs, len(pairs) // 4, seed=0)
        self.valid, self.longer = load_split("valid"), load_split("longer")

    def config(self, **changes) -> TransformerConfig:
        return TransformerConfig.small(
            len(self.vocabs[0]), len(self.vocabs[1]), max_len=64, **changes
        )

    def scores(self, model) -> dict:
        """Greedy BLEU and AER on valid, greedy BLEU on longer (the model is left in train mode)."""
        valid = evaluate_translations(model, self.valid, *self.vocabs)
        longer = evaluate_translations(model, self.longer, *self.vocabs)
        return {
            "valid_bleu": valid["bleu"],
            "longer_bleu": longer["bleu"],
            "valid_aer": valid["aer"],
        }


def train_variant(name: str, seed: int, corpus: Corpus, eval_at: list[int], device) -> list[dict]:
    """Train variant ``name`` with ``seed``; one row per step of ``eval_at`` (the last ends it)."""
    variant = VARIANTS[name]
    recipe = {**RECIPE, **variant.get("train", {}), "steps": max(eval_at)}
    config = corpus.config(**variant.get("config", {}))
    torch.manual_seed(seed)
    model_class = TorchTransformer if variant.get("model") == "torch" else Transformer
    model = model_class(config).to(device)
    optimizer = make_optimizer(model)
    scheduler = make_scheduler(
        optimizer, config.d_model, warmup=recipe["warmup"], peak_lr=recipe["peak_lr"]
    )
    state, rows = TrainState(), []

    def evaluate(record: dict) -> None:
        if record["step"] in eval_at:  # callbacks are not counted in state.seconds
            row = {"step": record["step"], "seconds": round(state.seconds, 2)}
            row |= {"loss": round(record["loss"], 4), **corpus.scores(model)}
            rows.append({"variant": name, "seed": seed, **row})
            print(f"    {rows[-1]}", flush=True)

    def batches(epoch: int):  # seed 0 gives notebook 07's batches
        return make_batches(
            corpus.train_pairs,
            max_tokens=recipe["max_tokens"],
            shuffle=True,
            seed=1000 * seed + epoch,
        )

    train(
        model, batches, optimizer, scheduler, steps=recipe["steps"],
        label_smoothing=recipe["smoothing"], clip_norm=1.0, log_every=min(eval_at),
        callback=evaluate, state=state,
    )  # fmt: skip
    return rows


def read_rows(path: Path) -> list[dict]:
    """The rows stored in ``path`` (none if it does not exist), numbers as numbers."""
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    for row in rows:
        row["seed"], row["step"] = int(row["seed"]), int(row["step"])
        for key in ("seconds", "loss", *METRICS):
            row[key] = float(row[key])
    return rows


def write_rows(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=FIELDS + ABOUT)
        writer.writeheader()
        writer.writerows(rows)


def at_time(runs: list[dict], metric: str, seconds: float) -> float:
    """``metric`` of one run (its rows in step order) at ``seconds`` of training, linear
    between evaluations; before the first evaluation, the first one's value."""
    points = [(row["seconds"], row[metric]) for row in runs]
    if seconds <= points[0][0]:
        return points[0][1]
    for (t0, y0), (t1, y1) in zip(points, points[1:]):
        if seconds <= t1:
            return y0 + (y1 - y0) * (seconds - t0) / (t1 - t0)
    return points[-1][1]


def spread(values: list[float]) -> str:
    digits = 3 if max(values) < 1 else 1
    return (
        f"{statistics.mean(values):.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"
    )


def summary(rows: list[dict], study: str) -> list[str]:
    """Per variant of ``study``: mean [min-max] over seeds at the last step, and at the
    time the fastest run took to reach it."""
    by_run: dict[tuple[str, int], list[dict]] = {}
    for row in rows:
        by_run.setdefault((row["variant"], row["seed"]), []).append(row)
    names = [name for name in STUDIES[study] if any(key[0] == name for key in by_run)]
    if not names:
        return []
    last = min(max(r["step"] for r in runs) for (n, _), runs in by_run.items() if n in names)
    equal_time = min(  # every run has trained this long: read each curve there
        next(r["seconds"] for r in runs if r["step"] == last)
        for (n, _), runs in by_run.items()
        if n in names
    )
    lines = [f"{study}: at step {last} (equal steps) | at {equal_time:.0f} s (equal time)"]
    for name in names:
        runs = [sorted(rs, key=lambda r: r["step"]) for (n, _), rs in by_run.items() if n == name]
        at_step = [next(r for r in rs if r["step"] == last) for rs in runs]
        cells = [spread([r[m] for r in at_step]) for m in METRICS]
        cells += [spread([at_time(rs, m, equal_time) for rs in runs]) for m in METRICS[:2]]
        seconds = statistics.median(r["seconds"] for r in at_step)
        lines.append(
            f"  {name:18s} seeds {len(runs)}  {seconds:5.1f} s  valid BLEU {cells[0]}  "
            f"longer BLEU {cells[1]}  AER {cells[2]} | valid BLEU {cells[3]}  longer BLEU {cells[4]}"
        )
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", nargs="+", default=list(STUDIES), choices=list(STUDIES))
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--eval-at", type=int, nargs="+", default=[150, 300, 450])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (at most 2)")
    parser.add_argument("--device", default=None, help="default: COURSE_DEVICE, else GPU, else CPU")
    parser.add_argument(
        "--summary", action="store_true", help="only print the stored rows' summary"
    )
    args = parser.parse_args(argv)

    torch.set_num_threads(max(1, min(args.threads, 2, os.cpu_count() or 1)))
    device = get_device(args.device)
    rows = read_rows(args.out)
    if not args.summary:
        corpus, about = Corpus(), provenance(device)
        done = {(row["variant"], row["seed"]) for row in rows}
        names = dict.fromkeys(name for study in args.studies for name in STUDIES[study])
        for seed in args.seeds:  # seeds outermost: an early stop leaves every variant a seed
            for name in names:
                if (name, seed) in done:
                    continue
                print(f"{name}, seed {seed}", flush=True)
                new = train_variant(name, seed, corpus, sorted(args.eval_at), device)
                rows += [{**row, **about} for row in new]
                write_rows(args.out, rows)
    for study in args.studies:
        print("\n".join(summary(rows, study)))


if __name__ == "__main__":
    sys.exit(main())
