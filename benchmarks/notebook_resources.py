"""Peak memory and wall time of each notebook's kernel, as a Markdown table.

Each notebook runs top to bottom in a fresh kernel (nbclient, the notebook's own kernel
name, started in the notebook's folder: as nbval runs it), driven from a fresh Python
process per notebook. Nothing is written back.

- wall time: from starting the kernel to the end of the last cell;
- peak RSS: the kernel process's high-water mark of resident memory (VmHWM in
  /proc/<pid>/status, Linux only), read after the last cell, before the kernel stops.

A JupyterHub/Binder memory limit covers the kernel plus the Jupyter server (about
100-150 MB), so the kernel should stay well below it.

    .venv/bin/python benchmarks/notebook_resources.py [NOTEBOOK ...] [--timeout 900]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
MIB = 1024 * 1024


def vm_hwm(pid: int) -> int:
    """Peak resident memory of process ``pid`` in bytes (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024  # reported in kB
    raise RuntimeError(f"no VmHWM in /proc/{pid}/status")


def child_pids(pid: int) -> list[int]:
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            pass
    return children


def run_notebook(path: Path, timeout: int) -> dict:
    """Execute ``path`` in a fresh kernel; its wall time, peak RSS and any error."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=nb.metadata.get("kernelspec", {}).get("name", "python3"),
        resources={"metadata": {"path": str(path.parent)}},
    )
    result = {"peak": 0, "end": None, "error": None, "children": 0}

    def after_cell(**_) -> None:  # nbclient hook: runs while the kernel is still up
        pid = client.km.provisioner.process.pid
        result["peak"] = vm_hwm(pid)
        result["children"] = max(result["children"], len(child_pids(pid)))
        result["end"] = time.perf_counter()

    client.on_cell_executed = after_cell
    start = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as error:
        result["error"] = f"{error.ename}: {error.evalue}"
    result["wall"] = (result["end"] or time.perf_counter()) - start
    return result


def run_in_subprocess(path: Path, timeout: int) -> dict:
    """``run_notebook`` in a fresh interpreter: one client per process keeps runs independent."""
    command = [sys.executable, __file__, "--one", str(path), "--timeout", str(timeout)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{path.name}: the benchmark process failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def machine() -> str:
    try:
        import torch

        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    except ImportError:
        gpu = "torch missing"
    device = os.environ.get("COURSE_DEVICE", "auto")
    return (
        f"{os.cpu_count()} CPU cores, {gpu}, {platform.system()} {platform.machine()}, "
        f"Python {platform.python_version()}, torch {version('torch')}, COURSE_DEVICE={device}"
    )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/*.ipynb")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    parser.add_argument(
        "--one", type=Path, help=argparse.SUPPRESS
    )  # internal: one notebook, JSON out
    args = parser.parse_args(argv)
    if not Path("/proc/self/status").is_file():
        print("This benchmark reads /proc: it runs on Linux only.", file=sys.stderr)
        return 2
    # The kernel should pick its matplotlib backend as in JupyterLab (inline), not inherit one.
    os.environ.pop("MPLBACKEND", None)
    os.environ.setdefault("JUPYTER_PREFER_ENV_PATH", "1")
    if args.one:
        print(json.dumps(run_notebook(args.one, args.timeout)))
        return 0
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))

    print(f"Machine: {machine()}")
    print(f"Load average before: {load()}")
    rows, failed = [], False
    for path in notebooks:
        r = run_in_subprocess(path, args.timeout)
        status = f" (FAILED: {r['error']})" if r["error"] else ""
        failed |= bool(r["error"])
        if r["children"]:
            print(f"note: {path.stem} had child processes; their memory is not counted")
        print(f"  {path.stem}: {r['wall']:.1f} s, {r['peak'] / MIB:.0f} MiB{status}", flush=True)
        rows.append((path.stem + status, r["wall"], r["peak"]))
    print(f"Load average after: {load()}\n")

    print("| notebook | wall time (s) | kernel peak RSS (MiB) |")
    print("|---|---:|---:|")
    for name, wall, peak in rows:
        print(f"| `{name}` | {wall:.1f} | {peak / MIB:.0f} |")
    total, peak = sum(r[1] for r in rows), max(r[2] for r in rows)
    print(
        f"| **all {len(rows)}, one after another** | **{total:.0f}** | **{peak / MIB:.0f}** (max) |"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
