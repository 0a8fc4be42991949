"""A notebook run that stalls fails fast and says where (tests/notebook_runs.py)."""

from __future__ import annotations

import asyncio
import time
from queue import Empty

import nbformat
import pytest
from jupyter_client.channels import AsyncZMQSocketChannel
from notebook_runs import execute

TIMEOUT_S = 5


def _notebook(*sources: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


def test_a_cell_that_waits_for_ever_fails_within_its_timeout_naming_the_cell(tmp_path):
    notebook = _notebook("x = 1", "import time\ntime.sleep(3600)", "y = 2")
    started = time.monotonic()
    with pytest.raises(AssertionError) as failure:
        execute(notebook, "planted.ipynb", tmp_path, timeout=TIMEOUT_S)
    assert time.monotonic() - started < TIMEOUT_S + 60  # the kernel's start and stop aside
    assert str(failure.value) == (
        "planted.ipynb: cell 1 ('import time') got no execute_reply on the shell channel "
        f"within {TIMEOUT_S} s; the kernel was still running it (busy)"
    )


def test_a_reply_that_is_never_read_is_called_a_stall(tmp_path, monkeypatch):
    """The kernel finishes the cell and says idle, but the client never reads its reply:
    what a lost wake-up on the shell socket looks like from the client."""
    read = AsyncZMQSocketChannel.get_msg

    async def lose_the_second_reply(self, timeout=None):
        msg = await read(self, timeout)
        if msg["msg_type"] == "execute_reply" and msg["content"]["execution_count"] == 2:
            await asyncio.sleep(timeout or 0)
            raise Empty
        return msg

    monkeypatch.setattr(AsyncZMQSocketChannel, "get_msg", lose_the_second_reply)
    notebook = _notebook("x = 1", "y = 2", "z = 3")
    with pytest.raises(
        AssertionError, match=r"^planted\.ipynb: cell 1 \('y = 2'\) got no "
    ) as failure:
        execute(notebook, "planted.ipynb", tmp_path, timeout=TIMEOUT_S)
    assert str(failure.value).endswith("its reply was sent but never read, a stall")
