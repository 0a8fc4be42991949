"""The notebooks' stored outputs come from a CPU and must also pass nbval on a GPU
(COURSE_DEVICE=cuda). These checks cover the part of that which needs no GPU: random
numbers are drawn on the CPU generator and then moved, so every device sees the same
numbers, and no stored output names a device that tests/nbval_sanitize.cfg leaves alone.
Both editions: the English notebooks and the Chinese ones (notebooks/zh_CN).
"""

import json
import re
from pathlib import Path

import browser_support
import pytest

NOTEBOOKS = browser_support.EDITION_PATHS

# A random draw made directly on a device: each device's generator gives other numbers.
RANDOM_ON_DEVICE = re.compile(
    r"torch\.(?:randn|rand|randint|randperm|randn_like|rand_like|normal|Generator)\([^#\n]*device="
)


def code_lines(path: Path):
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            yield from "".join(cell["source"]).splitlines()


def stored_texts(path: Path):
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for output in cell.get("outputs", []):
            yield "".join(output.get("text", ""))
            yield "".join(output.get("data", {}).get("text/plain", ""))


def test_the_pattern_finds_a_draw_on_a_device():
    assert RANDOM_ON_DEVICE.search("x = torch.randn(2, 3, device=device)")
    assert not RANDOM_ON_DEVICE.search("x = torch.randn(2, 3).to(device)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=browser_support.edition_id)
def test_random_numbers_are_drawn_on_the_cpu(path):
    on_device = [line.strip() for line in code_lines(path) if RANDOM_ON_DEVICE.search(line)]
    assert not on_device, f"{path.name}: draw on the CPU, then .to(device): {on_device}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=browser_support.edition_id)
def test_stored_outputs_name_no_accelerator(path):
    named = [t for t in stored_texts(path) if re.search(r"\b(?:cuda|mps)(?::\d+)?\b", t)]
    # The device line itself is in an NBVAL_IGNORE_OUTPUT cell; a CPU run never prints one.
    assert not named, f"{path.name}: stored outputs mention an accelerator: {named}"
