"""Decoding speed: incremental decoding with a key/value cache vs the plain loop.

The plain loop (``cache=False``, what notebook 07 teaches) runs the decoder over the whole
prefix at every step, so generating L tokens costs about L²/2 decoder positions. With the
cache (``cache=True``) each step runs only the newest token: about L positions, and step
t's attention reads t cached keys. The ratio should therefore grow with the output length.

The model is notebook 07's (``TransformerConfig.small`` with the toy corpus' vocabulary
sizes), with random weights: speed does not depend on training. ``<eos>`` is made
impossible, so every run generates exactly L tokens. Sources are the first ``--batch``
sentences of the test split. Runs of the two variants are interleaved, so machine noise
hits both alike; we report medians, the ratio plain / cached, and check that both give the
same tokens.

A second table does the same for notebook 09's language model (``inference.generation.generate``,
greedy, ``cache=True`` against ``cache=False``): ``TransformerConfig.decoder_only`` with
the joint vocabulary of both languages (``data.joint_vocab``), random weights,
prompts that are the first ``--batch`` test sentences of at least ``--prompt`` tokens, cut
to ``--prompt`` tokens and followed by ``<sep>``, and exactly ``--new-tokens`` new tokens
each (no ``eos_id``: nothing ends early). A third table does the same for that model read
as a translator (``LanguageModelTranslator``): greedy and beam search over the test
sentences, whose cached search runs the one cache every model shares.

    python benchmarks/decode_speed.py [--lengths 24 64 128] [--repeats 5] [--device cpu]
                                      [--prompt 8] [--new-tokens 64]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from functools import partial

import torch

from transformer_lib import TransformerConfig, get_device
from transformer_lib.data import (
    SEP,
    build_vocabs,
    collate,
    encode_pairs,
    joint_vocab,
    load_split,
    tokenize,
)
from transformer_lib.data.vocab import EOS_ID
from transformer_lib.inference.decode import beam_search, greedy_decode
from transformer_lib.inference.generation import generate
from transformer_lib.model.language_model import LanguageModel
from transformer_lib.model.lm_translation import LanguageModelTranslator
from transformer_lib.model.transformer import Transformer

from _common import print_peak_memory, timed  # benchmarks/ is not a package


def build_model(src_size: int, tgt_size: int, max_len: int) -> Transformer:
    """Notebook 07's model, with a position table long enough for the longest output."""
    config = TransformerConfig.small(src_size, tgt_size, max_len=max_len)
    model = Transformer(config)
    with torch.no_grad():
        model.output.bias[EOS_ID] = -1e4  # never ends early: exactly max_len tokens
    return model.eval()


def compare(search, device: torch.device, repeats: int) -> dict[str, object]:
    """Interleaved runs of cache=False and cache=True (one warm-up each): medians, tokens."""
    times: dict[bool, list[float]] = {False: [], True: []}
    tokens: dict[bool, torch.Tensor] = {}
    for run in range(repeats + 1):
        for cache in (False, True):
            seconds, (tokens[cache], _) = timed(partial(search, cache=cache), device)
            if run > 0:  # the first run warms up allocators and kernels
                times[cache].append(seconds)
    return {
        "plain": statistics.median(times[False]),
        "cached": statistics.median(times[True]),
        "identical": torch.equal(tokens[False], tokens[True]),
        "length": tokens[True].size(1),
    }


def generate_greedy(
    model: LanguageModel, prompt: torch.Tensor, new_tokens: int, cache: bool
) -> tuple[torch.Tensor, None]:
    """``generate``, greedy, exactly ``new_tokens`` tokens; (tokens, no scores) as the
    searches return them, for :func:`compare`."""
    return generate(model, prompt, new_tokens, method="greedy", cache=cache), None


def language_model_prompts(batch: int, length: int) -> tuple[torch.Tensor, int]:
    """The prompts (see the module's text) and the joint vocabulary's size.

    Shapes: -> prompts (B, length + 1) with B <= batch.
    """
    train = load_split("train")
    vocab = joint_vocab([tokenize(text) for ex in train for text in ex[:2]])
    sources = [tokenize(ex[0]) for ex in load_split("test")]
    rows = [vocab.encode(tokens[:length]) + [vocab[SEP]] for tokens in sources
            if len(tokens) >= length][:batch]  # fmt: skip
    return torch.tensor(rows, dtype=torch.long), len(vocab)


def language_model_table(args, device: torch.device) -> bool:
    """The language model's table: cache=False against cache=True. Whether both gave
    the same tokens."""
    prompt, vocab_size = language_model_prompts(args.batch, args.prompt)
    torch.manual_seed(args.seed)
    config = TransformerConfig.decoder_only(vocab_size)
    model = LanguageModel(config).to(device).eval()
    print(
        f"\nlanguage model: batch={prompt.size(0)} prompt={prompt.size(1)} "
        f"new tokens={args.new_tokens} vocab={vocab_size} d_model={config.d_model} "
        f"layers={config.n_decoder_layers}"
    )
    search = partial(generate_greedy, model, prompt.to(device), args.new_tokens)
    result = compare(search, device, args.repeats)
    plain, cached, n = result["plain"], result["cached"], args.new_tokens
    values = (plain * 1e3, cached * 1e3, plain / cached, plain * 1e3 / n, cached * 1e3 / n)
    same = "yes" if result["identical"] else "NO"
    print(f"{'greedy':8s} {prompt.size(1):>2d}+{n:<2d}" + "".join(f" {v:13.2f}" for v in values)
          + f"  {same}")  # fmt: skip
    return result["identical"]


def translator_table(args, device: torch.device) -> bool:
    """The language model read as a translator (``LanguageModelTranslator``): greedy and
    beam search with cache=False against cache=True, on the first ``--batch`` test
    sentences in the joint vocabulary, ``<eos>`` impossible, ``--new-tokens`` tokens each.
    Whether both gave the same tokens."""
    train = load_split("train")
    vocab = joint_vocab([tokenize(text) for ex in train for text in ex[:2]])
    rows = [vocab.encode(tokenize(ex[0])) for ex in load_split("test")[: args.batch]]
    src = torch.zeros(len(rows), max(map(len, rows)), dtype=torch.long)  # <pad> = 0
    for b, row in enumerate(rows):
        src[b, : len(row)] = torch.tensor(row)
    torch.manual_seed(args.seed)
    config = TransformerConfig.decoder_only(len(vocab))
    model = LanguageModelTranslator(config, vocab[SEP]).to(device).eval()
    with torch.no_grad():
        model.language_model.output.bias[EOS_ID] = -1e4  # never ends early
    print(f"\nlanguage-model translator: batch={src.size(0)} src_len={src.size(1)} "
          f"vocab={len(vocab)} max_len={args.new_tokens}")  # fmt: skip
    identical = True
    searches = {
        "greedy": partial(greedy_decode, model, src.to(device)),
        f"beam {args.beam}": partial(beam_search, model, src.to(device), beam_size=args.beam),
    }
    for name, search in searches.items():
        result = compare(partial(search, max_len=args.new_tokens), device, args.repeats)
        plain, cached, n = result["plain"], result["cached"], result["length"]
        identical &= result["identical"]
        values = (plain * 1e3, cached * 1e3, plain / cached, plain * 1e3 / n, cached * 1e3 / n)
        same = "yes" if result["identical"] else "NO"
        print(f"{name:8s} {n:4d} " + " ".join(f"{v:13.2f}" for v in values) + f"  {same}")
    return identical


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--lengths", type=int, nargs="+", default=[24, 64, 128], help="output lengths L"
    )
    parser.add_argument("--batch", type=int, default=32, help="sentences per search")
    parser.add_argument("--beam", type=int, default=4, help="beam size (§6.1: 4)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per variant")
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None, help="default: COURSE_DEVICE, else GPU, else CPU")
    parser.add_argument("--prompt", type=int, default=8, help="language model: prompt tokens")
    parser.add_argument("--new-tokens", type=int, default=64, help="language model: new tokens")
    args = parser.parse_args(argv)

    torch.set_num_threads(max(1, min(args.threads, os.cpu_count() or 1)))
    device = get_device(args.device)
    src_vocab, tgt_vocab = build_vocabs(load_split("train"))
    test_pairs = encode_pairs(load_split("test")[: args.batch], src_vocab, tgt_vocab)
    src = collate(test_pairs).src.to(device)  # (B, S)
    torch.manual_seed(args.seed)
    model = build_model(len(src_vocab), len(tgt_vocab), max(64, *args.lengths)).to(device)
    c = model.config

    print(
        f"device={device} torch={torch.__version__} threads={torch.get_num_threads()} "
        f"batch={src.size(0)} src_len={src.size(1)} vocab={c.src_vocab_size}/{c.tgt_vocab_size} "
        f"d_model={c.d_model} layers={c.n_encoder_layers}+{c.n_decoder_layers} "
        f"beam={args.beam} repeats={args.repeats}"
    )
    columns = ("plain ms", "cached ms", "plain/cached", "plain ms/tok", "cached ms/tok")
    print(f"{'search':8s} {'L':>4s} " + " ".join(f"{c:>13s}" for c in columns) + "  same tokens")
    searches = {  # beam alone: the paper's search, as translate runs it
        "greedy": partial(greedy_decode, model, src),
        f"beam {args.beam}": partial(beam_search, model, src, beam_size=args.beam, alpha=0.6),
    }
    all_identical = True
    for name, search in searches.items():
        for length in args.lengths:
            result = compare(partial(search, max_len=length), device, args.repeats)
            plain, cached, n = result["plain"], result["cached"], result["length"]
            all_identical &= result["identical"]
            values = (plain * 1e3, cached * 1e3, plain / cached, plain * 1e3 / n, cached * 1e3 / n)
            same = "yes" if result["identical"] else "NO"
            print(f"{name:8s} {length:4d} " + " ".join(f"{v:13.2f}" for v in values) + f"  {same}")
    all_identical &= language_model_table(args, device)
    all_identical &= translator_table(args, device)
    print_peak_memory(device.type == "cuda")
    if not all_identical:
        sys.exit("cache=True and cache=False gave different tokens")


if __name__ == "__main__":
    sys.exit(main())
