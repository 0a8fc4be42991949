"""What matters: notebook 07's translator with one thing changed (the paper's Table 3).

A *variant* is the recipe of notebook 07 (:data:`RECIPE`, :func:`recipe_config`) with
some model fields or training settings changed (:data:`VARIANTS`); a *study* compares a
few variants (:data:`STUDIES`). :func:`train_variant` trains one variant with one seed
and scores it on ``valid`` and on ``longer`` (sentences longer than any in training)
at the steps asked for; ``test`` is never used to compare variants. Each score is one
row: ``variant, seed, step, seconds, loss, valid_bleu, longer_bleu, valid_aer``.
:func:`summarize` turns rows into one line per variant, mean and min-max over seeds,
at equal steps and at equal training time. ``benchmarks/ablations.py`` runs the full
study and stores its rows; notebook 08 runs a few of them live and reads the rest.
"""

from __future__ import annotations

import csv
import math
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from transformer_lib._checks import fail
from transformer_lib.data import (
    build_vocabs,
    concatenate_pairs,
    encode_pairs,
    load_split,
    make_batches,
)
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.reference import TorchTransformer
from transformer_lib.model.transformer import Transformer
from transformer_lib.teaching.studies.compare import clearly_better, compare  # noqa: F401 (re-exported)
from transformer_lib.train import TrainState, make_optimizer, make_scheduler, train
from transformer_lib.train.evaluate import evaluate_translations


@dataclass(frozen=True)
class Recipe:
    """How notebook 07 trains its translator (its sections 2, 5 and 6 say why)."""

    steps: int = 800  # notebook 07's run (the study scores at steps 200, 400 and 600)
    warmup: int = 100  # steps of linear warm-up before the 1/√step decay (§5.3)
    peak_lr: float = 5e-3  # the schedule's peak, reached at the end of warm-up
    max_tokens: int = 1500  # padded tokens per batch: more updates per second than 3000
    smoothing: float = 0.1  # label smoothing ε (§5.4)
    # extra pairs, each two training pairs joined end to end, per training pair: they
    # teach positions beyond the longest training sentence (notebook 07, section 2)
    joined: float = 0.25


RECIPE = Recipe()
# The recipe's model (notebook 07, section 3): a size that learns the toy corpus fast on
# a 2-core CPU (in exploratory single-seed runs, d_model 64 reached valid BLEU 95 in less
# than half the time d_model 128 needed; not stored), no dropout (a few passes over 30,000
# short pairs, most likely too few to overfit; study "dropout" finds dropout 0.1 worse at
# step 600), and the default start of W^Q, W^K, W^V (attention_init="fused", study "stack").
MODEL = {"d_model": 64, "n_heads": 4, "d_ff": 256, "dropout": 0.0, "max_len": 64}

BASE = "notebook 07"
# name -> what differs from notebook 07: "config" (model fields), "train" (Recipe
# fields), "model": "torch" for nn.Transformer's stack with the same everything else
VARIANTS: dict[str, dict] = {
    BASE: {},
    "separate init": {"config": {"attention_init": "separate"}},
    "attention dropout": {"config": {"attention_dropout": 0.1}},
    "final norm": {"config": {"final_norm": True}},
    "nn.Transformer": {"model": "torch"},
    "1 head": {"config": {"n_heads": 1}},
    "2 heads": {"config": {"n_heads": 2}},
    "8 heads": {"config": {"n_heads": 8}},
    "dropout 0.1": {"config": {"dropout": 0.1}},
    "dropout 0.1 + attention": {"config": {"dropout": 0.1, "attention_dropout": 0.1}},
    "no smoothing": {"train": {"smoothing": 0.0}},
    "learned positions": {"config": {"learned_positions": True}},
    "no joined pairs": {"train": {"joined": 0.0}},
    "learned, no joined pairs": {"config": {"learned_positions": True}, "train": {"joined": 0.0}},
    "pre-norm": {"config": {"norm_first": True}},
    "warmup 25": {"train": {"warmup": 25}},
    "warmup 400": {"train": {"warmup": 400}},
}
STUDIES: dict[str, list[str]] = {
    "stack": [BASE, "separate init", "attention dropout", "final norm", "nn.Transformer"],
    "heads": ["1 head", "2 heads", BASE, "8 heads"],
    "dropout": [BASE, "dropout 0.1", "dropout 0.1 + attention"],
    "smoothing": ["no smoothing", BASE],
    "positions": [BASE, "learned positions", "no joined pairs", "learned, no joined pairs"],
    "norm": [BASE, "pre-norm"],
    "warmup": ["warmup 25", BASE, "warmup 400"],
}
# Notebook 07's former recipe (d_model 128, d_ff 512, dropout 0.1, 3000-token batches, the
# paper-era start of W^Q, W^K, W^V), on which nn.Transformer's differences were first studied
# (notebook 08, section 5; benchmarks/results/stack_study_d128.csv, scored at steps 100-300).
FORMER = {"d_model": 128, "d_ff": 512, "dropout": 0.1, "attention_init": "separate"}
FORMER_STACK = {
    "paper": {},
    "attention dropout": {"attention_dropout": 0.1},
    "final norm": {"final_norm": True},
    "fused init": {"attention_init": "fused"},
    "all three": {"attention_init": "fused", "attention_dropout": 0.1, "final_norm": True},
}
VARIANTS |= {
    f"former: {name}": {"config": {**FORMER, **config}, "train": {"max_tokens": 3000}}
    for name, config in FORMER_STACK.items()
}
VARIANTS["former: nn.Transformer"] = {**VARIANTS["former: paper"], "model": "torch"}
# Studies on another recipe than notebook 07's, each stored in its own file
OTHER_STUDIES: dict[str, list[str]] = {
    "former stack": [f"former: {name}" for name in [*FORMER_STACK, "nn.Transformer"]],
}
METRICS = ("valid_bleu", "longer_bleu", "valid_aer")
FIELDS = ["variant", "seed", "step", "seconds", "loss", *METRICS]


def recipe_config(src_vocab_size: int, tgt_vocab_size: int, **changes) -> TransformerConfig:
    """Notebook 07's model for these vocabularies, with ``changes``."""
    return TransformerConfig.small(src_vocab_size, tgt_vocab_size, **{**MODEL, **changes})


class Corpus:
    """Notebook 07's data: vocabularies, training pairs (with its joined pairs), splits."""

    def __init__(self) -> None:
        train_examples = load_split("train")
        self.vocabs = build_vocabs(train_examples)
        self.pairs = encode_pairs(train_examples, *self.vocabs)
        self.valid, self.longer = load_split("valid"), load_split("longer")

    def train_pairs(self, joined: float) -> list:
        """The training pairs and ``joined`` times as many joined pairs."""
        return self.pairs + concatenate_pairs(self.pairs, int(joined * len(self.pairs)), seed=0)

    def config(self, **changes) -> TransformerConfig:
        return recipe_config(len(self.vocabs[0]), len(self.vocabs[1]), **changes)

    def scores(self, model) -> dict:
        """Greedy BLEU and AER on valid, greedy BLEU on longer."""
        valid = evaluate_translations(model, self.valid, *self.vocabs)
        longer = evaluate_translations(model, self.longer, *self.vocabs)
        return {
            "valid_bleu": valid["bleu"],
            "longer_bleu": longer["bleu"],
            "valid_aer": valid["aer"],
        }


def train_variant(
    name: str, seed: int, corpus: Corpus, eval_at: list[int], device="cpu"
) -> list[dict]:
    """Train variant ``name`` from scratch with ``seed`` (initial weights, dropout and batch
    order; every variant sees the same batches for a seed) until the last step of
    ``eval_at``; one row of scores at each step of ``eval_at``."""
    if name not in VARIANTS:
        fail("name", "one of {choices}", repr(name), choices=list(VARIANTS))
    check_eval_at(eval_at)
    variant = VARIANTS[name]
    recipe = replace(RECIPE, **variant.get("train", {}), steps=max(eval_at))
    config = corpus.config(**variant.get("config", {}))
    torch.manual_seed(seed)
    model = Transformer(config)
    if variant.get("model") == "torch":  # the same embeddings as the other variants' for a seed
        model = TorchTransformer(config, model)
    pairs = corpus.train_pairs(recipe.joined)
    return train_and_score(name, seed, model.to(device), pairs, recipe, eval_at, corpus.scores)


def check_eval_at(eval_at: object) -> None:
    if not eval_at or not all(isinstance(step, int) and step > 0 for step in eval_at):
        fail("eval_at", "a non-empty list of steps (ints > 0)", repr(eval_at))


def train_and_score(
    name: str, seed: int, model, pairs: list, recipe: Recipe, eval_at: list[int], score
) -> list[dict]:
    """Train ``model`` on ``pairs`` with ``recipe`` (batches shuffled by ``seed``) until
    ``recipe.steps``; at each step of ``eval_at``, one row with ``score(model)``'s scores."""
    optimizer = make_optimizer(model)
    d_model = model.config.d_model
    scheduler = make_scheduler(optimizer, d_model, recipe.warmup, peak_lr=recipe.peak_lr)
    state, rows = TrainState(), []

    def evaluate(record: dict) -> None:
        if record["step"] in eval_at:  # callbacks are not counted in state.seconds
            scores = score(model)
            rows.append({"variant": name, "seed": seed, "step": record["step"],
                         "seconds": round(state.seconds, 2), "loss": round(record["loss"], 4),
                         **scores})  # fmt: skip

    def batches(epoch: int):  # seed 0 gives notebook 07's batches
        return make_batches(
            pairs, max_tokens=recipe.max_tokens, shuffle=True, seed=1000 * seed + epoch
        )

    train(
        model, batches, optimizer, scheduler, steps=recipe.steps,
        label_smoothing=recipe.smoothing, clip_norm=1.0, log_every=math.gcd(*eval_at),
        callback=evaluate, state=state,
    )  # fmt: skip
    return rows


def read_rows(path: str | Path) -> list[dict]:
    """The rows stored in the CSV at ``path`` (none if it does not exist), numbers as numbers
    (a file may leave out ``seconds``, as ``benchmarks/cross_machine.py``'s does; an empty
    cell, such as a decoder-only model's AER in ``studies.decoder_only``, is None)."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    for row in rows:
        row["seed"], row["step"] = int(row["seed"]), int(row["step"])
        for key in ("seconds", "loss", *METRICS):
            if key in row:
                row[key] = float(row[key]) if row[key] != "" else None
    return rows


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
    """``mean [min-max]``: three decimals for rates below 1, else one."""
    digits = 3 if max(values) < 1 else 1
    mean, low, high = statistics.mean(values), min(values), max(values)
    return f"{mean:.{digits}f} [{low:.{digits}f}-{high:.{digits}f}]"


def runs_by_variant(rows: list[dict], names: list[str]) -> dict[str, list[list[dict]]]:
    """For each of ``names`` found in ``rows``: its runs (one per seed), each in step order.
    Raises the house error when none of ``names`` has rows."""
    if not any(row["variant"] in names for row in rows):
        stored = sorted({row["variant"] for row in rows})
        fail("names", "variants with stored rows, among {stored}", repr(names), stored=stored)
    by_run: dict[tuple[str, int], list[dict]] = {}
    for row in rows:
        if row["variant"] in names:
            by_run.setdefault((row["variant"], row["seed"]), []).append(row)
    return {
        name: [sorted(rs, key=lambda r: r["step"]) for (n, _), rs in by_run.items() if n == name]
        for name in names
        if any(n == name for n, _ in by_run)
    }


def _at_last_step(by_variant: dict[str, list[list[dict]]]) -> tuple[int, dict[str, list[dict]]]:
    """The last step every run reached, and each variant's rows there (one per seed)."""
    last = min(run[-1]["step"] for runs in by_variant.values() for run in runs)
    return last, {
        name: [next(r for r in run if r["step"] == last) for run in runs]
        for name, runs in by_variant.items()
    }


def final_scores(rows: list[dict], names: list[str], metric: str) -> dict[str, list[float]]:
    """``metric`` at the last step every run of ``names`` reached: variant -> one per seed."""
    _, at_step = _at_last_step(runs_by_variant(rows, names))
    return {name: [row[metric] for row in seeds] for name, seeds in at_step.items()}


def summarize(rows: list[dict], names: list[str]) -> tuple[int, float, list[dict]]:
    """Compare ``names`` at equal steps (the last step every run reached) and at equal
    time (the training seconds the fastest run needed for that step, read off each run's
    curve). Returns (step, seconds, one dict per variant: ``variant, seeds, seconds``, and
    per metric ``mean [min-max]`` at the step and, for the BLEUs, ``… at time``)."""
    by_variant = runs_by_variant(rows, names)
    last, at_step = _at_last_step(by_variant)
    equal_time = min(row["seconds"] for seeds in at_step.values() for row in seeds)
    lines = []
    for name, variant_runs in by_variant.items():
        seeds = at_step[name]
        line = {"variant": name, "seeds": len(variant_runs)}
        line["seconds"] = statistics.median(r["seconds"] for r in seeds)
        for metric in METRICS:  # "" for a metric a variant does not have (None)
            values = [r[metric] for r in seeds]
            line[metric] = "" if None in values else spread(values)
        line |= {
            f"{metric} at time": spread([at_time(run, metric, equal_time) for run in variant_runs])
            for metric in METRICS[:2]
        }
        lines.append(line)
    return last, equal_time, lines
