"""What the benchmarks share: timing, peak memory, and result CSVs with their provenance.

A benchmark run as ``python benchmarks/NAME.py`` finds this module next to it
(``benchmarks/`` is on ``sys.path``, not a package).
"""

from __future__ import annotations

import csv
import datetime
import platform
import resource
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import torch

ROOT = Path(__file__).resolve().parents[1]
ABOUT = ["command", "commit", "machine", "date"]  # the provenance columns, last in every CSV
Result = TypeVar("Result")


def synchronize(device: torch.device) -> None:
    """Wait for the GPU's queued work, so that a timer measures it (no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(run: Callable[[], Result], device: torch.device) -> tuple[float, Result]:
    """Seconds ``run()`` takes on ``device``, and what it returned."""
    synchronize(device)
    start = time.perf_counter()
    result = run()
    synchronize(device)
    return time.perf_counter() - start, result


def print_peak_memory(cuda: bool, label: str = "peak RSS") -> None:
    """The process's peak resident memory, and the peak CUDA allocation when ``cuda``."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(f"{label}: {rss / 1024:.0f} MiB")
    if cuda:
        print(f"peak CUDA memory: {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB")


def provenance(device) -> dict:
    """Where the numbers come from: the command, the commit, the machine, the date."""
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    # the results a run writes (and a resumed run appends to) do not make its tree dirty
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--", ".", ":!benchmarks/results"],
        capture_output=True, text=True,
    )  # fmt: skip
    cpu = platform.machine()
    if Path("/proc/cpuinfo").exists():
        names = [
            line for line in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in line
        ]
        cpu = names[0].split(":", 1)[1].strip() if names else cpu
    return {
        "command": shlex.join(["python", *sys.argv]),  # quoted: it runs as it reads
        "commit": commit.stdout.strip() + ("+uncommitted" if dirty.stdout.strip() else ""),
        "machine": f"{cpu}, {torch.get_num_threads()} threads, torch {torch.__version__}, {device.type}",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    }


def write_rows(path: Path, rows: list[dict], fields: list[str]) -> None:
    """``rows`` as CSV at ``path``, columns ``fields`` (the benchmarks' one writer)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
