"""Toy translator: train from scratch to a BLEU target, ours vs torch.nn.Transformer.

Both models share the recipe of notebook 07 (same embeddings, positional encoding, output
layer, loss, schedule, batches and loop); only the encoder-decoder stack differs. They
train in interleaved chunks of ``--eval-every`` steps, so machine noise hits both alike.
After each chunk the model is scored on the validation split (greedy BLEU, not timed).
When a model first reaches each of ``--targets`` it is scored on the test and longer
splits; it trains on until its ``--budget`` of training seconds is spent and is scored again.

    python benchmarks/translator.py [--targets 90 95] [--budget 45] [--device cpu]

Prints, per target: seconds (and steps) to it, test BLEU, longer-split BLEU (greedy), exact
match, AER of the last layer's cross-attention, and the ratio of the two models' times to it
(ours / nn.Transformer's); then training tokens/s and peak RSS. Times count training only. Each is given as measured and as steps x the median chunk's seconds per
step, which a burst of load from another process during one chunk does not skew.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import torch

from transformer_lib import get_device
from transformer_lib.data import (
    build_vocabs,
    concatenate_pairs,
    encode_pairs,
    load_split,
    make_batches,
)
from transformer_lib.model.reference import TorchTransformer
from transformer_lib.model.transformer import Transformer
from transformer_lib.teaching.studies.ablation import RECIPE, recipe_config
from transformer_lib.train import TrainState, make_optimizer, make_scheduler, train
from transformer_lib.train.evaluate import evaluate_translations

from _common import print_peak_memory  # benchmarks/ is not a package


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--targets", type=float, nargs="+", default=[90.0, 95.0], help="validation BLEUs to reach"
    )
    parser.add_argument("--budget", type=float, default=45.0, help="training seconds per model")
    parser.add_argument("--eval-every", type=int, default=50, help="steps between evaluations")
    parser.add_argument(
        "--max-tokens", type=int, default=RECIPE.max_tokens, help="padded tokens per batch"
    )
    parser.add_argument("--warmup", type=int, default=RECIPE.warmup)
    parser.add_argument("--peak-lr", type=float, default=RECIPE.peak_lr)
    parser.add_argument("--joined", type=float, default=0.25, help="extra joined pairs (share)")
    parser.add_argument(
        "--stop-at-target", action="store_true", help="do not train on to the budget"
    )
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (at most 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="default: COURSE_DEVICE, else GPU, else CPU")
    args = parser.parse_args(argv)

    torch.set_num_threads(max(1, min(args.threads, 2, os.cpu_count() or 1)))
    device = get_device(args.device)
    train_examples = load_split("train")
    src_vocab, tgt_vocab = build_vocabs(train_examples)
    pairs = encode_pairs(train_examples, src_vocab, tgt_vocab)
    pairs += concatenate_pairs(pairs, int(args.joined * len(pairs)), seed=0)  # as notebook 07
    splits = {name: load_split(name) for name in ("valid", "test", "longer")}
    config = recipe_config(len(src_vocab), len(tgt_vocab))  # notebook 07's model

    runs = {}
    for name in ("transformer_lib", "nn.Transformer"):
        torch.manual_seed(args.seed)
        model = Transformer(config)
        if name == "nn.Transformer":  # with the same embeddings and output layer
            model = TorchTransformer(config, model)
        model = model.to(device)
        optimizer = make_optimizer(model)
        scheduler = make_scheduler(optimizer, config.d_model, args.warmup, peak_lr=args.peak_lr)
        runs[name] = {
            "model": model,
            "optimizer": optimizer,
            "scheduler": scheduler,
            "state": TrainState(),
            "reached": {},  # target -> (seconds, steps, scores there)
            "done": False,
            "chunks": [],  # (steps, seconds, tokens) of each chunk
        }

    def batches(epoch: int):
        return make_batches(pairs, max_tokens=args.max_tokens, shuffle=True, seed=epoch)

    print(
        f"device={device} torch={torch.__version__} threads={torch.get_num_threads()} "
        f"targets={args.targets} budget={args.budget}s d_model={config.d_model} "
        f"layers={config.n_encoder_layers}+{config.n_decoder_layers}"
    )
    while not all(run["done"] for run in runs.values()):
        for name, run in runs.items():  # interleaved: noise hits both alike
            if run["done"]:
                continue
            state = run["state"]
            before = (state.step, state.seconds, state.tokens)
            train(
                run["model"],
                batches,
                run["optimizer"],
                run["scheduler"],
                state=state,
                steps=state.step + args.eval_every,
                log_every=args.eval_every,
                max_seconds=args.budget - state.seconds,
            )
            run["chunks"].append(
                tuple(
                    now - then
                    for now, then in zip((state.step, state.seconds, state.tokens), before)
                )
            )
            bleu = evaluate_translations(run["model"], splits["valid"], src_vocab, tgt_vocab)
            print(
                f"  {name:16s} step {state.step:5d}  {state.seconds:6.1f} s  "
                f"loss {state.history['loss'][-1]:.3f}  valid BLEU {bleu['bleu']:5.1f}"
            )
            new = [t for t in args.targets if bleu["bleu"] >= t and t not in run["reached"]]
            if new:
                at = scores(run["model"], splits, src_vocab, tgt_vocab)
                run["reached"] |= {target: (state.seconds, state.step, at) for target in new}
            stop = args.stop_at_target and len(run["reached"]) == len(args.targets)
            run["done"] = stop or state.seconds >= args.budget - 0.05
    report(runs, args.targets, splits, src_vocab, tgt_vocab)


def scores(model, splits: dict, src_vocab, tgt_vocab) -> str:
    """Test BLEU, exact match and AER, and the longer split's BLEU (all greedy)."""
    test = evaluate_translations(model, splits["test"], src_vocab, tgt_vocab)
    longer = evaluate_translations(model, splits["longer"], src_vocab, tgt_vocab)
    return (
        f"test BLEU {test['bleu']:.1f}   longer BLEU {longer['bleu']:.1f}   "
        f"exact match {100 * test['exact_match']:.1f} %   AER {test['aer']:.3f}"
    )


def report(runs: dict, targets: list[float], splits: dict, src_vocab, tgt_vocab) -> None:
    """Scores at each target and at the end, and two times to each target: as measured
    (the sum of the chunks' training time) and robust (steps to target times the median
    chunk's seconds per step), which a burst of load from another process does not skew."""
    print()
    step_seconds = {}
    for name, run in runs.items():
        step_seconds[name] = statistics.median(sec / n for n, sec, _ in run["chunks"] if n)
        tokens_per_s = statistics.median(tok / sec for _, sec, tok in run["chunks"] if sec)
        print(f"{name}: {tokens_per_s:.0f} target tokens/s, median {step_seconds[name]:.3f} s/step")
    for target in targets:
        print(f"valid BLEU {target:g}:")
        times = {}
        for name, run in runs.items():
            if target not in run["reached"]:
                print(f"  {name:16s} not reached in {run['state'].seconds:.1f} s")
                continue
            seconds, steps, at = run["reached"][target]
            times[name] = (seconds, steps * step_seconds[name])
            print(
                f"  {name:16s} {seconds:.1f} s as measured, {times[name][1]:.1f} s robust "
                f"({steps} steps): {at}"
            )
        if len(times) == 2:
            ours, theirs = times["transformer_lib"], times["nn.Transformer"]
            print(
                f"  time to it, transformer_lib / nn.Transformer: {ours[0] / theirs[0]:.3f} "
                f"as measured, {ours[1] / theirs[1]:.3f} robust"
            )
    for name, run in runs.items():
        state = run["state"]
        if all(state.step != steps for _, steps, _ in run["reached"].values()):
            end = scores(run["model"], splits, src_vocab, tgt_vocab)
            print(f"{name} after {state.seconds:.0f} s ({state.step} steps): {end}")
    cuda = any(run["model"].output.weight.is_cuda for run in runs.values())
    print_peak_memory(cuda, "peak RSS (whole process, both models)")


if __name__ == "__main__":
    sys.exit(main())
