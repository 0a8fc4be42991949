"""Toy translator: train from scratch to a BLEU target, ours vs torch.nn.Transformer.

Both models share the recipe of notebook 07 (same embeddings, positional encoding, output
layer, loss, schedule, batches and loop); only the encoder-decoder stack differs. They
train in interleaved chunks of ``--eval-every`` steps, so machine noise hits both alike.
After each chunk the model is scored on the validation split (greedy BLEU, not timed);
when a model first reaches ``--target`` it is scored on the test and longer splits, then
trains on until its ``--budget`` of training seconds is spent and is scored again.

    python benchmarks/translator.py [--target 90] [--budget 120] [--device cpu]

Prints: seconds (and steps) to the target, test BLEU, longer-split BLEU (greedy), exact
match, AER of the last layer's cross-attention, training tokens/s, peak RSS, and the ratio
of the two times to target (ours / nn.Transformer's; the goal is at most 1.05). Times count
training only. Each is given as measured and as steps x the median chunk's seconds per
step, which a burst of load from another process during one chunk does not skew.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys

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


def build_config(src_size: int, tgt_size: int) -> TransformerConfig:
    """The model of notebook 07 (see there for why this size)."""
    return TransformerConfig.small(
        src_size,
        tgt_size,
        d_model=128,
        n_heads=4,
        d_ff=512,
        n_encoder_layers=2,
        n_decoder_layers=2,
        dropout=0.1,
        max_len=64,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=float, default=90.0, help="validation BLEU to reach")
    parser.add_argument("--budget", type=float, default=120.0, help="training seconds per model")
    parser.add_argument("--eval-every", type=int, default=50, help="steps between evaluations")
    parser.add_argument("--max-tokens", type=int, default=3000, help="padded tokens per batch")
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--peak-lr", type=float, default=5e-3)
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
    config = build_config(len(src_vocab), len(tgt_vocab))

    runs = {}
    for name, cls in (("transformer_lib", Transformer), ("nn.Transformer", TorchTransformer)):
        torch.manual_seed(args.seed)
        model = cls(config).to(device)
        optimizer = make_optimizer(model)
        scheduler = make_scheduler(optimizer, config.d_model, args.warmup, peak_lr=args.peak_lr)
        runs[name] = {
            "model": model,
            "optimizer": optimizer,
            "scheduler": scheduler,
            "state": TrainState(),
            "reached": None,
            "done": False,
            "chunks": [],  # (steps, seconds, tokens) of each chunk
            "at_target": None,
        }

    def batches(epoch: int):
        return make_batches(pairs, max_tokens=args.max_tokens, shuffle=True, seed=epoch)

    print(
        f"device={device} torch={torch.__version__} threads={torch.get_num_threads()} "
        f"target={args.target} budget={args.budget}s d_model={config.d_model} "
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
            if bleu["bleu"] >= args.target and run["reached"] is None:
                run["reached"] = (state.seconds, state.step)
                run["at_target"] = scores(run["model"], splits, src_vocab, tgt_vocab)
            stop = args.stop_at_target and run["reached"] is not None
            run["done"] = stop or state.seconds >= args.budget - 0.05
    report(runs, splits, src_vocab, tgt_vocab)


def scores(model, splits: dict, src_vocab, tgt_vocab) -> str:
    """Test BLEU, exact match and AER, and the longer split's BLEU (all greedy)."""
    test = evaluate_translations(model, splits["test"], src_vocab, tgt_vocab)
    longer = evaluate_translations(model, splits["longer"], src_vocab, tgt_vocab)
    return (
        f"test BLEU {test['bleu']:.1f}   longer BLEU {longer['bleu']:.1f}   "
        f"exact match {100 * test['exact_match']:.1f} %   AER {test['aer']:.3f}"
    )


def report(runs: dict, splits: dict, src_vocab, tgt_vocab) -> None:
    """Scores at the target and at the end, and two times to target: as measured (the sum
    of the chunks' training time) and robust (steps to target times the median chunk's
    seconds per step), which a burst of load from another process does not skew."""
    print()
    times: dict[str, tuple[float, float] | None] = {}
    for name, run in runs.items():
        state = run["state"]
        step_seconds = statistics.median(sec / steps for steps, sec, _ in run["chunks"] if steps)
        tokens_per_s = statistics.median(tok / sec for _, sec, tok in run["chunks"] if sec)
        print(f"{name}: {tokens_per_s:.0f} target tokens/s, median {step_seconds:.3f} s/step")
        if run["reached"] is None:
            times[name] = None
            print(f"  target not reached in {state.seconds:.1f} s ({state.step} steps)")
        else:
            seconds, steps = run["reached"]
            times[name] = (seconds, steps * step_seconds)
            print(
                f"  {seconds:.1f} s to target as measured, {steps * step_seconds:.1f} s robust "
                f"({steps} steps)\n  at the target:  {run['at_target']}"
            )
        if state.step != (run["reached"] or (None, None))[1]:
            end = scores(run["model"], splits, src_vocab, tgt_vocab)
            print(f"  after {state.seconds:.0f} s ({state.step} steps): {end}")
    if None not in times.values():
        ours, theirs = times["transformer_lib"], times["nn.Transformer"]
        print(
            f"time to target, transformer_lib / nn.Transformer: {ours[0] / theirs[0]:.3f} "
            f"as measured, {ours[1] / theirs[1]:.3f} robust (goal <= 1.05)"
        )
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(f"peak RSS (whole process, both models): {rss / 1024:.0f} MiB")
    if any(run["model"].output.weight.is_cuda for run in runs.values()):
        print(f"peak CUDA memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")


if __name__ == "__main__":
    sys.exit(main())
