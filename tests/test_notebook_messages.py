"""A sentence a notebook prints through the library's catalogue, ``i18n._("...")``, is in the
catalogue: otherwise the Chinese edition prints it in English and no other test notices
(both editions run the same code, and nbval compares each edition with its own run).
The templates are marked for the catalogue in the library (e.g.
``transformer_lib/teaching/exercises/ch07_messages.py``)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from babel.messages.extract import extract
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CATALOGUE = ROOT / "transformer_lib" / "locale" / "zh_CN" / "LC_MESSAGES" / "transformer_lib.po"


def printed_templates(notebook: dict) -> list[str]:
    """The messages the notebook's code cells look up with ``_`` (``i18n._`` too)."""
    code = "\n\n".join(
        "".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"
    )
    found = extract("python", io.BytesIO(code.encode("utf-8")), keywords={"_": None})
    return [message for _, message, _, _ in found if isinstance(message, str)]


def held() -> set[str]:
    with CATALOGUE.open("rb") as file:
        return {m.id for m in read_po(file, locale="zh_CN") if m.id and m.string}


def missing(notebook: dict) -> list[str]:
    """The notebook's printed templates that the catalogue lacks or leaves untranslated."""
    catalogue = held()
    return [message for message in printed_templates(notebook) if message not in catalogue]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_sentence_a_notebook_prints_through_the_catalogue_is_translated(path):
    assert missing(json.loads(path.read_text(encoding="utf-8"))) == []


def test_a_template_missing_from_the_catalogue_is_found():
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": ['i18n._("prose is not code")']},
            {"cell_type": "code", "source": ['print(i18n._("no catalogue holds this {n}"))\n']},
            {"cell_type": "code", "source": ['print(_("{n} greedy outputs repeat a word"))']},
        ]
    }
    assert printed_templates(notebook) == [
        "no catalogue holds this {n}",
        "{n} greedy outputs repeat a word",
    ]
    assert missing(notebook) == ["no catalogue holds this {n}"]
