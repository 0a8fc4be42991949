"""Notebook 07's translator over several seeds: how much of its BLEU is luck?

Each seed trains notebook 07's recipe from scratch (same model, data, loss, schedule,
steps and batches; the seed sets the initial weights and the batch order, and
seed 0 is the notebook's run) and then evaluates it as the notebook does:

1. the checkpoints kept during training (steps 600, 700, 800) are scored on ``valid``
   with greedy decoding, and the best is kept;
2. greedy decoding, and beam search (beam 4) without and with the paper's length penalty
   (alpha 0 and 0.6), are scored on ``valid`` for that checkpoint, and the best is kept
   (ties go to the first: greedy, then alpha 0);
3. ``test`` is decoded once, with the chosen settings, and scored with sacrebleu's 95%
   bootstrap interval (1000 samples; ``test_low`` and ``test_high`` are μ ∓ half-width, as
   ``sacrebleu --confidence`` prints it).

    python benchmarks/translator_seeds.py [--seeds 0 1 2] [--device cpu]

Writes one CSV row per seed (default benchmarks/results/translator_seeds.csv) with the
command, commit, machine and date; notebook 07 reads it. Results are BLEU scores, not
timings: a busy machine gives the same numbers.
"""

from __future__ import annotations

import argparse
import copy
import os
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
from transformer_lib.inference.translate import translate
from transformer_lib.model.transformer import Transformer
from transformer_lib.teaching.studies.ablation import RECIPE, recipe_config
from transformer_lib.train import TrainState, make_optimizer, make_scheduler, train
from transformer_lib.train.evaluate import bleu_confidence_interval, corpus_bleu

from _common import ABOUT, ROOT, provenance, write_rows  # benchmarks/ is not a package

# Notebook 07's recipe (sections 2, 3, 5 and 6 there say why each value).
STEPS, WARMUP, PEAK_LR, MAX_TOKENS = RECIPE.steps, RECIPE.warmup, RECIPE.peak_lr, RECIPE.max_tokens
KEEP_AT = (600, 700, 800)  # the checkpoints kept during training
DECODINGS = {  # tried in this order: ties go to the first
    "greedy": {"method": "greedy"},
    "beam 4, alpha 0": {"method": "beam", "beam_size": 4, "alpha": 0.0},
    "beam 4, alpha 0.6": {"method": "beam", "beam_size": 4, "alpha": 0.6},
}
FIELDS = [
    "seed",
    "step",
    "decoding",
    "valid_bleu",
    "test_bleu",
    "test_low",
    "test_high",
    "final_loss",
    *ABOUT,
]


def train_seed(seed: int, train_pairs, config: TransformerConfig, device) -> tuple[dict, float]:
    """Train the recipe with ``seed``; the weights at each step of KEEP_AT, the final loss."""
    torch.manual_seed(seed)
    model = Transformer(config).to(device)
    optimizer = make_optimizer(model)
    scheduler = make_scheduler(optimizer, config.d_model, warmup=WARMUP, peak_lr=PEAK_LR)
    kept = {}

    def keep(record: dict) -> None:
        if record["step"] in KEEP_AT:
            kept[record["step"]] = copy.deepcopy(model.state_dict())

    def batches(epoch: int):  # seed 0 gives the notebook's batches
        return make_batches(
            train_pairs, max_tokens=MAX_TOKENS, shuffle=True, seed=1000 * seed + epoch
        )

    state = TrainState()
    history = train(
        model, batches, optimizer, scheduler, steps=STEPS, label_smoothing=0.1,
        clip_norm=1.0, log_every=10, callback=keep, state=state,
    )  # fmt: skip
    return kept, history["loss"][-1]


def evaluate_seed(model, kept: dict, splits: dict, vocabs) -> dict:
    """Choose the checkpoint, then the decoding, on valid; decode test once with them."""
    valid_src = [ex.src for ex in splits["valid"]]
    valid_ref = [ex.tgt for ex in splits["valid"]]

    def valid_bleu(settings: dict) -> float:
        return corpus_bleu(translate(model, valid_src, *vocabs, **settings), valid_ref)

    by_step = {}
    for step, weights in kept.items():
        model.load_state_dict(weights)
        by_step[step] = valid_bleu(DECODINGS["greedy"])
    step = max(by_step, key=by_step.get)
    model.load_state_dict(kept[step])
    by_decoding = {name: valid_bleu(settings) for name, settings in DECODINGS.items()}
    decoding = max(by_decoding, key=by_decoding.get)
    test_out = translate(model, [ex.src for ex in splits["test"]], *vocabs, **DECODINGS[decoding])
    test = bleu_confidence_interval(test_out, [ex.tgt for ex in splits["test"]])
    print(f"  valid BLEU by step (greedy): {by_step}")
    print(f"  valid BLEU by decoding at step {step}: {by_decoding}")
    return {
        "step": step,
        "decoding": decoding,
        "valid_bleu": round(by_decoding[decoding], 2),
        "test_bleu": round(test.bleu, 2),
        "test_low": round(test.low, 2),
        "test_high": round(test.high, 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--device", default=None, help="default: COURSE_DEVICE, else GPU, else CPU")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (at most 2)")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks/results/translator_seeds.csv"
    )
    args = parser.parse_args(argv)

    torch.set_num_threads(max(1, min(args.threads, 2, os.cpu_count() or 1)))
    device = get_device(args.device)
    train_examples = load_split("train")
    vocabs = build_vocabs(train_examples)
    pairs = encode_pairs(train_examples, *vocabs)
    train_pairs = pairs + concatenate_pairs(pairs, len(pairs) // 4, seed=0)  # as notebook 07
    splits = {name: load_split(name) for name in ("valid", "test")}
    config = recipe_config(len(vocabs[0]), len(vocabs[1]))
    about = provenance(device)
    rows = []
    for seed in args.seeds:
        print(f"seed {seed}: training {STEPS} steps on {device}", flush=True)
        kept, final_loss = train_seed(seed, train_pairs, config, device)
        model = Transformer(config).to(device)
        row = {"seed": seed, **evaluate_seed(model, kept, splits, vocabs)}
        rows.append({**row, "final_loss": round(final_loss, 3), **about})
        print(f"  {row}", flush=True)
        write_rows(args.out, rows, FIELDS)  # after every seed: a long run that stops keeps its rows
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
