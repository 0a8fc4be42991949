"""Running a notebook in a kernel from the tests, as nbgrader and ``nbconvert --execute`` run
one (nbclient): a cell that gives no reply fails the test within minutes, and the failure
says which notebook, which cell, and what the client was waiting for."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError

# The most one cell may run, in every harness (nbval in the Makefile, nbclient here, the
# browser test): three times the slowest cell of the course, so that it holds with two busy
# processes beside the suite's two on a 2-core machine (about twice the quiet time), and
# short enough that a stall fails within minutes. The slowest cell is notebook 08's live
# training, which prints its own time (146 s at one thread on a quiet 2-core machine);
# tests/test_notebook_runs.py holds the limit to that output and to the Makefile.
CELL_TIMEOUT_S = 450


def execute(
    notebook: nbformat.NotebookNode,
    name: str,
    folder: Path,
    timeout: int = CELL_TIMEOUT_S,
    **options,
) -> None:
    """Run ``notebook`` (called ``name`` in messages) in the venv's ``python3`` kernel, with
    ``folder`` as its working directory; ``options`` go to ``NotebookClient``."""
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=timeout,
        record_timing=True,  # the kernel's timestamps say how far it got with a cell
        resources={"metadata": {"path": str(folder)}},
        **options,
    )
    # Cell by cell, not client.execute(): a timed-out cell's timestamps are read before the
    # kernel is shut down (shutting it down sends more of them).
    with client.setup_kernel():
        for index, cell in enumerate(notebook.cells):
            try:
                client.execute_cell(cell, index)
            except CellTimeoutError:
                raise AssertionError(timeout_message(notebook, name, index, timeout)) from None


def first_line(cell: nbformat.NotebookNode) -> str:
    """What names a cell in a message: its first line of source."""
    return next(iter(cell.source.strip().splitlines()), "")


def timeout_message(notebook: nbformat.NotebookNode, name: str, index: int, timeout: int) -> str:
    """What a cell that gave no reply within ``timeout`` s was waiting for."""
    cell = notebook.cells[index]
    heard = cell.metadata.get("execution", {})
    if "iopub.status.idle" in heard:
        kernel = (
            "the kernel had finished it (it said idle): its reply was sent but never read, a stall"
        )
    elif "iopub.execute_input" in heard:
        kernel = "the kernel was still running it (busy)"
    else:
        kernel = "the kernel never started it"
    return (
        f"{name}: cell {index} ({first_line(cell)!r}) got no execute_reply on the shell channel "
        f"within {timeout} s; {kernel}"
    )
