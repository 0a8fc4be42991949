"""A notebook run that stalls fails fast and says where (tests/notebook_runs.py)."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from queue import Empty

import nbformat
import pytest
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session
from notebook_runs import CELL_TIMEOUT_S, execute

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the test extra installs tomli
    import tomli as tomllib

TIMEOUT_S = 5
REPO = Path(__file__).parents[1]


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


def test_the_course_widgets_send_nothing_on_the_shell_channel_while_their_cell_runs(
    tmp_path, monkeypatch
):
    """Each widget drawn in a kernel run by nbclient: the client sends only execute requests.

    An Output widget that captures its cell's messages (``with out:``) makes nbclient's
    stand-in for it answer each one on the shell channel while the client waits there for
    the cell's reply, and on a loaded machine that send loses the reply's wake-up (see
    ``widgets._common.live_output``). The course's widgets set their Output's contents
    instead."""
    sent = []
    send = Session.send

    def record(self, stream, msg_or_type, *args, **kwargs):
        kind = msg_or_type["header"]["msg_type"] if isinstance(msg_or_type, dict) else msg_or_type
        sent.append(kind)
        return send(self, stream, msg_or_type, *args, **kwargs)

    monkeypatch.setattr(Session, "send", record)
    notebook = _notebook(
        "import torch\nfrom transformer_lib import Transformer, TransformerConfig, widgets\n"
        "from transformer_lib.teaching.playground import translation_playground\n"
        "from transformer_lib.data.vocab import SPECIALS, Vocab",
        "display(widgets.pe_explorer_widget(d_model=16, max_len=20))",
        "display(widgets.attention_temperature_widget(torch.randn(4, 4), d_k=4))",
        "display(widgets.mask_builder_widget())",
        "display(widgets.head_picker_widget(torch.rand(2, 3, 3).softmax(-1)))",
        "vocab = Vocab([*SPECIALS, 'the', 'dog', '.'])\n"
        "config = TransformerConfig.small(len(vocab), len(vocab), d_model=16, d_ff=32)\n"
        "display(translation_playground(Transformer(config).eval(), vocab, vocab, 'the dog .'))",
    )
    execute(notebook, "widgets.ipynb", tmp_path)
    assert all(
        cell.outputs and not any(o.output_type == "error" for o in cell.outputs)
        for cell in notebook.cells[1:]
    ), [c.outputs for c in notebook.cells]
    assert set(sent) == {"kernel_info_request", "execute_request", "shutdown_request"}, sent


def _slowest_cell_seconds() -> int:
    """What notebook 08's live training printed it took ("6 runs in 146 s") in its stored
    output: the slowest cell of the course."""
    notebook = nbformat.read(REPO / "notebooks" / "08_what_matters.ipynb", as_version=4)
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            found = re.search(r"^\d+ runs in (\d+) s$", output.get("text", ""), re.MULTILINE)
            if found:
                return int(found.group(1))
    raise AssertionError("notebook 08 no longer prints how long its live training took")


def test_every_harness_gives_a_cell_three_times_the_slowest_cell():
    """A limit sized for notebook 07's 30 s once failed notebook 08's 146 s cell on a busy
    machine: the limit follows the slowest cell, and every harness uses the same one."""
    slowest = _slowest_cell_seconds()
    assert CELL_TIMEOUT_S >= 3 * slowest, (CELL_TIMEOUT_S, slowest)
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.findall(r"--nbval-cell-timeout=(\d+)", makefile) == [str(CELL_TIMEOUT_S)]
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["tool"]["pytest"]["ini_options"]["timeout"] > CELL_TIMEOUT_S
