"""Running a notebook in a kernel from the tests, as nbgrader and ``nbconvert --execute`` run
one (nbclient): a cell that gives no reply fails the test within minutes, and the failure
says which notebook, which cell, and what the client was waiting for."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError

# Longer than any cell of the course takes on a loaded 2-core machine (notebook 07's
# training, about 30 s on a quiet one), short enough that a stall fails within minutes.
CELL_TIMEOUT_S = 300


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
