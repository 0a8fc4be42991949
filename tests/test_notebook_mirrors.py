"""Notebook definitions that mirror a library object must behave like it.

A notebook may rebuild a concept from scratch to teach it. Such a cell carries the cell
metadata ``"mirrors": "transformer_lib.<layer>.<module>.<name>"``, is self-contained, and defines
``<name>`` (or ``"transformer_lib.<layer>.<module>.<name> as <other>"`` when the notebook's own
version has another name, so that it can sit beside the library's). tools/slide_metadata.py
moves a first line ``# mirrors: ...`` there, so that slides do not show it.
This test runs each such cell on its own and compares it with the library on seeded
inputs, so the notebook and the library cannot drift apart.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest
import torch
from torch import nn

from transformer_lib.model import masks

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MIRRORS = re.compile(r"^transformer_lib\.([\w.]+)\.(\w+)(?: as (\w+))?$")


def _mirror_cells() -> list[tuple[str, str, str, str, str]]:
    """(notebook, module, library name, notebook name, source) of every mirror cell."""
    found = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            mirrors = cell["metadata"].get("mirrors")
            if mirrors is None:
                continue
            match = MIRRORS.match(mirrors)
            assert cell["cell_type"] == "code" and match, f"{path.name}: bad mirrors {mirrors!r}"
            module, name, alias = match.groups()
            found.append((path.name, module, name, alias or name, "".join(cell["source"])))
    return found


CELLS = _mirror_cells()


def _padded(batch: int, length: int) -> torch.Tensor:
    tokens = torch.randint(1, 9, (batch, length))
    tokens[0, length - 2 :] = 0
    return tokens


def _compare_functions(name: str, ours, theirs) -> None:
    if name == "sinusoidal_positional_encoding":
        torch.testing.assert_close(ours(50, 16), theirs(50, 16))
    elif name == "scaled_dot_product_attention":
        q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 8)
        mask = masks.padding_mask(_padded(2, 7), 0) & masks.causal_mask(7)[..., :5, :]
        for a, b in zip(ours(q, k, v, mask), theirs(q, k, v, mask), strict=True):
            torch.testing.assert_close(a, b)
    elif name == "causal_mask":
        expected = theirs(6)
        assert torch.equal(torch.broadcast_to(ours(6), expected.shape), expected)
    elif name == "padding_mask":
        tokens = _padded(3, 6)
        assert torch.equal(ours(tokens, 0), theirs(tokens, 0))
    elif name == "sublayer_connection":
        x, sublayer, norm = torch.randn(2, 5, 16), nn.Linear(16, 16), nn.LayerNorm(16)
        for norm_first in (False, True):
            dropout = nn.Dropout(0.5)  # training mode: the same mask when seeded alike
            results = []
            for connection in (ours, theirs):
                torch.manual_seed(1)
                results.append(connection(x, sublayer, norm, dropout, norm_first))
            torch.testing.assert_close(*results)
    else:
        raise AssertionError(f"no comparison written for mirrors of {name}")


MODULE_ARGS = {  # constructor arguments shared by the mirror and the library class
    "TokenEmbedding": (10, 16),
    "MultiHeadAttention": (16, 4),
    "FeedForward": (16, 32, 0.0),
    "EncoderLayer": (16, 4, 32, 0.0),
    "DecoderLayer": (16, 4, 32, 0.0),
}


def _module_inputs(name: str) -> tuple:
    x, memory = torch.randn(2, 5, 16), torch.randn(2, 7, 16)
    src_mask = masks.padding_mask(_padded(2, 7), 0)
    return {
        "TokenEmbedding": (_padded(2, 5),),
        "MultiHeadAttention": (x, memory, memory, src_mask),
        "FeedForward": (x,),
        "EncoderLayer": (memory, src_mask),
        "DecoderLayer": (x, memory, masks.causal_mask(5), src_mask),
    }[name]


@pytest.mark.parametrize(
    ("notebook", "module", "name", "defined", "source"),
    CELLS,
    ids=[f"{c[0]}:{c[3]}" for c in CELLS],
)
def test_notebook_definition_matches_library(notebook, module, name, defined, source):
    namespace: dict = {}
    exec(compile(source, f"{notebook}:{defined}", "exec"), namespace)  # noqa: S102
    assert defined in namespace, f"{notebook}: the mirror cell must define {defined}"
    ours, theirs = (
        namespace[defined],
        getattr(importlib.import_module(f"transformer_lib.{module}"), name),
    )
    torch.manual_seed(0)
    if name not in MODULE_ARGS:
        _compare_functions(name, ours, theirs)
        return
    reference = theirs(*MODULE_ARGS[name]).eval()
    mirror = ours(*MODULE_ARGS[name]).eval()
    mirror.load_state_dict(reference.state_dict())  # same parameter names and shapes
    inputs = _module_inputs(name)
    torch.testing.assert_close(mirror(*inputs), reference(*inputs))


def test_the_course_has_mirror_cells():
    if not any(NOTEBOOKS.glob("*.ipynb")):
        pytest.skip("no notebooks yet")
    names = {cell[2] for cell in CELLS}
    assert {"scaled_dot_product_attention", "MultiHeadAttention"} <= names, names
