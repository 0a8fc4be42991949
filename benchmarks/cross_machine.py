"""The same seed on other kernels and thread counts: how far apart do the scores land?

Floating-point addition is not associative, so the order in which a sum is taken changes
its last bits. PyTorch's CPU kernel set (``ATEN_CPU_CAPABILITY``: ``default``, ``avx2``,
``avx512``; unset, PyTorch picks the best one the CPU supports) and the number of threads
both change that order, and training amplifies the
difference step after step. This script trains notebook 07's translator (seeds 0, 1, 2,
scored on ``valid`` and ``longer`` at steps 200 to 800) and the "1 head" variant (seeds 0,
1, 2 at step 200, as notebook 08 trains them live) under every setting asked for, each in
a fresh process (torch picks its kernel set when it is imported):

    python benchmarks/cross_machine.py [--kernels default avx2 native] [--threads 1 2]

``native`` leaves ``ATEN_CPU_CAPABILITY`` unset, as a student's machine does; the column
``asked`` records what was asked for and ``kernels`` the set that ran, by name (on an
AVX-512 machine, ``native`` runs ``avx512``).
It writes one row per (setting, variant, seed, step) to
benchmarks/results/cross_machine.csv, with the command, commit, machine and date, and
trains notebook 09's language model (seeds 0, 1, 2, its 150 steps:
``studies.decoder_only.language_model_perplexity``) under the same settings, one row per
(setting, seed) with its valid perplexity in benchmarks/results/cross_machine_lm.csv; a run
that stops keeps its rows, and a second call trains only what the files do not hold yet.
Then it prints, per variant and step, how far one seed's scores move across the settings:
the spread that a test comparing a re-run with a stored number must allow
(``tests/test_quality.py``; notebook 08, section 3.1). Scores do not depend on the
machine's speed, so this may run beside other work; it stores no times.
"""

from __future__ import annotations

import argparse
import csv
import os
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from _common import ABOUT, ROOT, provenance, write_rows  # benchmarks/ is not a package

OUT = ROOT / "benchmarks/results/cross_machine.csv"
LM_OUT = ROOT / "benchmarks/results/cross_machine_lm.csv"
# variant -> evaluation steps: the baseline to the end of notebook 07's run, "1 head" to
# step 200 as notebook 08 trains it live
RUNS = {"notebook 07": [200, 400, 600, 800], "1 head": [200]}
SEEDS = (0, 1, 2)
METRICS = ["valid_bleu", "longer_bleu", "valid_aer"]
FIELDS = ["asked", "kernels", "threads", "variant", "seed", "step", "loss", *METRICS, *ABOUT]
LM_FIELDS = ["asked", "kernels", "threads", "seed", "loss", "valid_perplexity", *ABOUT]


def read(path: Path) -> list[dict]:
    from transformer_lib.teaching.studies.ablation import read_rows

    rows = read_rows(path)
    for row in rows:
        row["threads"] = int(row["threads"])
    return rows


def read_lm(path: Path) -> list[dict]:
    """The language model's rows in ``path`` (none if it does not exist), numbers as numbers."""
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    for row in rows:
        row["seed"], row["threads"] = int(row["seed"]), int(row["threads"])
        row["loss"], row["valid_perplexity"] = float(row["loss"]), float(row["valid_perplexity"])
    return rows


def train_here(path: Path, command: str) -> None:
    """Train what ``path`` (and ``LM_OUT``) lack under this process's kernel set and thread
    count."""
    import torch

    from transformer_lib.teaching.studies.ablation import Corpus, train_variant
    from transformer_lib.teaching.studies.decoder_only import language_model_perplexity

    threads = int(os.environ["OMP_NUM_THREADS"])
    torch.set_num_threads(threads)
    asked = os.environ.get("ATEN_CPU_CAPABILITY", "native")
    kernels = torch.backends.cpu.get_cpu_capability().lower()
    setting = {"asked": asked, "kernels": kernels, "threads": threads}
    print(f"asked for {asked} kernels, {threads} threads: PyTorch runs {kernels}", flush=True)
    about = {**provenance(torch.device("cpu")), "command": command}
    corpus = Corpus()
    for variant, steps in RUNS.items():
        for seed in SEEDS:
            rows = read(path)
            done = {(r["asked"], r["threads"], r["variant"], r["seed"]) for r in rows}
            if (asked, threads, variant, seed) in done:
                continue
            for row in train_variant(variant, seed, corpus, steps):
                print(f"  {setting}: {variant}, seed {seed}, step {row['step']}: valid BLEU "
                      f"{row['valid_bleu']:.1f}, AER {row['valid_aer']:.3f}", flush=True)  # fmt: skip
                scores = {field: row[field] for field in FIELDS if field in row}  # no seconds
                rows.append({**scores, **setting, **about})
            write_rows(path, rows, FIELDS)
    for seed in SEEDS:
        rows = read_lm(LM_OUT)
        if (asked, threads, seed) in {(r["asked"], r["threads"], r["seed"]) for r in rows}:
            continue
        lm = language_model_perplexity(seed, corpus)
        print(f"  {setting}: language model, seed {seed}: valid perplexity "
              f"{lm['perplexity']:.2f}", flush=True)  # fmt: skip
        rows.append({**setting, "seed": seed, "loss": lm["loss"],
                     "valid_perplexity": lm["perplexity"], **about})  # fmt: skip
        write_rows(LM_OUT, rows, LM_FIELDS)


def spread(rows: list[dict]) -> list[str]:
    """Per variant and step: the widest range over settings of one seed's scores."""
    out = []
    for variant, steps in RUNS.items():
        for step in steps:
            here = [r for r in rows if (r["variant"], r["step"]) == (variant, step)]
            settings = len({(r["asked"], r["threads"]) for r in here})
            widths = []
            for metric in METRICS:
                per_seed = [[r[metric] for r in here if r["seed"] == seed] for seed in SEEDS]
                widths.append(max(max(v) - min(v) for v in per_seed if v))
            out.append(
                f"{variant:12s} step {step}: over {settings} settings, one seed moves by up to "
                "{:.1f} valid BLEU, {:.1f} longer BLEU, {:.3f} AER".format(*widths)
            )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", nargs="+", default=["default", "avx2", "native"])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--here", help=argparse.SUPPRESS)  # the command, in a child process
    args = parser.parse_args(argv)
    if args.here:
        train_here(args.out, args.here)
        return
    command = shlex.join(["python", *sys.argv])
    for kernels in args.kernels:
        for threads in args.threads:
            env = {**os.environ, "ATEN_CPU_CAPABILITY": kernels, "OMP_NUM_THREADS": str(threads)}
            if kernels == "native":  # PyTorch picks, as it does on a student's machine
                del env["ATEN_CPU_CAPABILITY"]
            child = [sys.executable, __file__, "--here", command, "--out", str(args.out)]
            subprocess.run(child, env=env, check=True)
    print("\n".join(spread(read(args.out))))
    lm = read_lm(LM_OUT)
    means = [
        statistics.mean(r["valid_perplexity"] for r in lm if (r["asked"], r["threads"]) == key)
        for key in {(r["asked"], r["threads"]) for r in lm}
    ]
    print(f"language model: over {len(means)} settings, the mean valid perplexity of seeds "
          f"{', '.join(map(str, SEEDS))} lies between {min(means):.2f} and {max(means):.2f}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
