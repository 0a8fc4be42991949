"""Training throughput: transformer_lib.Transformer vs torch.nn.Transformer.

Both models get the same embeddings, positional encoding and output layer; only the
encoder-decoder stack differs. Steps of the two are interleaved in one run so that
machine noise hits both alike; we report medians and the ratio (ours / PyTorch's). The
course's floor for that ratio is 1.05, with standard PyTorch modules only (``nn.Dropout``,
``nn.LayerNorm``, ``F.scaled_dot_product_attention``): no speed trick of our own.

    python benchmarks/train_throughput.py [--steps 30] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from functools import partial

import torch
from torch import nn

from transformer_lib import Transformer, TransformerConfig, get_device
from transformer_lib.model.reference import TorchTransformer

from _common import print_peak_memory, timed  # benchmarks/ is not a package


def train_step(model, optimizer, src, tgt_in, tgt_out) -> None:
    logits = model(src, tgt_in)  # (B, T, V)
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), tgt_out.flatten(), ignore_index=0)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="timed steps per model")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--length", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--device", default=None, help="default: COURSE_DEVICE, else GPU, else CPU")
    args = parser.parse_args(argv)

    device = get_device(args.device)
    torch.manual_seed(0)
    config = TransformerConfig.small(
        args.vocab,
        share_embeddings=True,  # one vocabulary for both sides
        d_model=128,
        n_heads=4,
        d_ff=512,
        n_encoder_layers=2,
        n_decoder_layers=2,
    )
    models = {"transformer_lib": Transformer(config), "nn.Transformer": TorchTransformer(config)}
    optimizers = {}
    for name, model in models.items():
        model.to(device).train()
        optimizers[name] = torch.optim.Adam(
            model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9
        )
    # data drawn on the CPU generator, then moved: identical batches on every device
    src = torch.randint(4, args.vocab, (args.batch, args.length)).to(device)
    tgt = torch.randint(4, args.vocab, (args.batch, args.length + 1)).to(device)
    tokens_per_step = args.batch * args.length * 2  # source + target tokens

    times: dict[str, list[float]] = {name: [] for name in models}
    for step in range(args.warmup + args.steps):
        for name, model in models.items():  # interleaved: noise hits both alike
            step_batch = partial(train_step, model, optimizers[name], src, tgt[:, :-1], tgt[:, 1:])
            seconds, _ = timed(step_batch, device)
            if step >= args.warmup:
                times[name].append(seconds)

    print(
        f"device={device} torch={torch.__version__} threads={torch.get_num_threads()} "
        f"batch={args.batch} length={args.length} vocab={args.vocab} steps={args.steps}"
    )
    throughput = {}
    for name in models:
        median = statistics.median(times[name])
        throughput[name] = tokens_per_step / median
        print(f"{name:16s} median step {median * 1e3:8.2f} ms   {throughput[name]:10.0f} tokens/s")
    ratio = throughput["transformer_lib"] / throughput["nn.Transformer"]
    print(f"ratio transformer_lib / nn.Transformer (tokens/s): {ratio:.3f}")
    print_peak_memory(device.type == "cuda")


if __name__ == "__main__":
    sys.exit(main())
