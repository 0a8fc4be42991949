"""Do notebooks run through nbclient ever stall? N runs, J at once, L busy processes beside them.

nbclient is how the student-edition test, nbgrader's autograde and ``nbconvert --execute`` run
a notebook. A stall is a cell whose reply the kernel has sent but the client takes only when
its wait times out: the cell then lasts the whole cell timeout for the client (a cell that
really runs that long fails with a timeout instead), and the gap from the kernel's reply to
the next cell's start is almost as long. This prints the runs, the stalls, and the longest gap seen.

    python benchmarks/kernel_stalls.py -n 200 -j 2 -l 2

Run it on a machine with nothing else running: the L busy processes are the load.
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing
import os
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
# (notebook, the share of its cells run): 07's first half ends after its training run
# (a progress bar and a live loss curve) and its first translations.
NOTEBOOKS = {
    "02": ("02_positional_encoding.ipynb", None),
    "04": ("04_masking.ipynb", None),
    "05": ("05_multi_head_attention.ipynb", None),
    "07a": ("07_toy_translator.ipynb", 0.5),
    "09": ("09_decoder_only.ipynb", None),
}


def _load(key: str, edition: Path) -> nbformat.NotebookNode:
    name, share = NOTEBOOKS[key]
    notebook = nbformat.read(edition / name, as_version=4)
    if share is not None:
        notebook.cells = notebook.cells[: int(len(notebook.cells) * share)]
    return notebook


def run_once(key: str, edition: str, timeout: int) -> dict:
    """Run one notebook; return its time, its longest reply-to-next-start gap and its stalls."""
    notebook = _load(key, Path(edition))
    starts: dict[int, float] = {}

    def on_cell_start(cell, cell_index):
        starts[cell_index] = time.time()

    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=timeout,
        allow_errors=True,  # so that --edition can name a student edition, whose stubs fail
        record_timing=True,
        on_cell_start=on_cell_start,
        resources={"metadata": {"path": edition}},
    )
    began = time.time()
    error = ""
    try:
        client.execute()
    except Exception as exc:  # a cell timeout with no reply at all, a dead kernel
        error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    gaps = []  # (seconds from the kernel's reply of cell i to the client's start of cell i+1, i)
    stalls = []  # cells whose wait for the reply lasted the whole timeout, and yet got the reply
    code = sorted(starts)
    for index, following in zip(code, code[1:]):
        reply = notebook.cells[index].metadata.get("execution", {}).get("shell.execute_reply")
        if reply:
            sent = datetime.datetime.fromisoformat(reply.replace("Z", "+00:00")).timestamp()
            gaps.append((starts[following] - sent, index))
        if starts[following] - starts[index] >= timeout:
            stalls.append(index)
    longest, cell = max(gaps, default=(0.0, -1))
    return {
        "notebook": key,
        "seconds": time.time() - began,
        "longest_gap": longest,
        "longest_gap_after_cell": cell,
        "stalls": stalls,
        "error": error,
    }


def busy() -> subprocess.Popen:
    """A process that keeps one core busy until it is ended."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=40, help="notebook runs in all")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="runs at once")
    parser.add_argument("-l", "--load", type=int, default=2, help="busy processes beside them")
    parser.add_argument("--timeout", type=int, default=60, help="nbclient's cell timeout (s)")
    parser.add_argument("--notebooks", nargs="+", default=list(NOTEBOOKS), choices=NOTEBOOKS)
    parser.add_argument("--edition", default=str(ROOT / "notebooks"))
    args = parser.parse_args()

    os.environ.setdefault("OMP_NUM_THREADS", "1")  # each kernel computes on one thread
    keys = [args.notebooks[i % len(args.notebooks)] for i in range(args.runs)]
    load = [busy() for _ in range(args.load)]
    results = []
    began = time.time()
    try:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            jobs = [pool.submit(run_once, key, args.edition, args.timeout) for key in keys]
            for done, job in enumerate(jobs, 1):
                result = job.result()
                results.append(result)
                mark = f" STALL after cells {result['stalls']}" if result["stalls"] else ""
                mark += f" ERROR {result['error']}" if result["error"] else ""
                print(
                    f"[{done}/{args.runs}] {result['notebook']}: {result['seconds']:.1f} s, "
                    f"longest gap {result['longest_gap']:.2f} s "
                    f"(after cell {result['longest_gap_after_cell']}){mark}",
                    flush=True,
                )
    finally:
        for process in load:
            process.kill()
    stalls = sum(len(r["stalls"]) for r in results)
    errors = sum(bool(r["error"]) for r in results)
    longest = max(results, key=lambda r: r["longest_gap"])
    print(
        f"\n{len(results)} runs of {', '.join(args.notebooks)} (J = {args.jobs}, L = {args.load}, "
        f"cell timeout {args.timeout} s) in {time.time() - began:.0f} s: "
        f"{stalls} stalls in {sum(bool(r['stalls']) for r in results)} runs, {errors} errors; "
        f"longest gap {longest['longest_gap']:.2f} s "
        f"({longest['notebook']}, after cell {longest['longest_gap_after_cell']})"
    )
    for key in args.notebooks:
        mine = [r for r in results if r["notebook"] == key]
        times = sorted(r["seconds"] for r in mine)
        print(
            f"  {key}: {len(mine)} runs, median {times[len(times) // 2]:.1f} s, "
            f"stalls {sum(len(r['stalls']) for r in mine)}, "
            f"longest gap {max(r['longest_gap'] for r in mine):.2f} s"
        )
    sys.exit(1 if stalls or errors else 0)


if __name__ == "__main__":
    main()
