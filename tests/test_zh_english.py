"""English where a Chinese student reads: the Chinese edition's stored outputs, and the text
of its figures as they are drawn.

An English word is a run of three or more Latin letters that is not code (in backticks; a
token with ``_``, ``.``, ``=``, ``[``, ``(`` or an inner capital: ``d_model``, ``nn.Transformer``,
``tensor(...)``, ``PyTorch``; a quoted string in a list, ``['the', 'zebra']``; a word joined
to digits, ``float16``, ``avx2``), not a special
token (``<eos>``), not a word of the course's corpus (the sentences the model translates are
English and German on purpose), and not on the short ALLOWED list below.

Outputs: the printed text, ``text/plain`` and ``text/html`` of every code cell (a figure's
``text/plain`` stand-in, ``<Figure size ...>``, is not shown and is skipped), and the
``ename: evalue`` line of an error. Figures: ``make test-notebooks-zh`` runs the Chinese
edition with ``COURSE_FIGURE_TEXT`` set, so that every figure records its visible text as
it is drawn (``transformer_lib.fonts``), then runs this module's ``figure_text`` test on
that record (deselected where ``COURSE_FIGURE_TEXT`` is unset: nothing was recorded).

Much English is left today, so the cells that still show it are on a ledger: a cell on
it that shows no English any more fails ("take it off the ledger"), and a cell off it that
shows English fails. The ledger can only shrink.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import sys
import textwrap
from functools import cache
from pathlib import Path

import pytest

from transformer_lib.fonts import CJK_CHARACTERS

ROOT = Path(__file__).resolve().parents[1]
ZH_EDITION = ROOT / "notebooks" / "zh_CN"
ZH_NOTEBOOKS = sorted(ZH_EDITION.glob("[0-9][0-9]_*.ipynb"))
CORPUS = ROOT / "transformer_lib" / "data" / "bundled"

# Names, units and symbols a Chinese text keeps in Latin letters (GLOSSARY.md's code names
# aside). Keep it short: a word belongs here only if the Chinese edition should show it.
ALLOWED = frozenset(
    {
        *("BLEU", "AER", "GPT", "BERT", "BART", "Transformer", "PyTorch", "torch"),  # names
        *("sacrebleu", "Xavier", "Vaswani"),
        *("softmax", "logit", "logits", "dropout"),  # GLOSSARY.md: not translated
        *("train", "valid", "test", "longer"),  # GLOSSARY.md: the splits keep their code names
        *("ReLU", "GELU", "FFN", "RMS", "LayerNorm", "RMSNorm"),  # layers
        *("CPU", "GPU", "cpu", "cuda", "AVX", "AMD", "EPYC", "Intel", "Xeon"),  # machines
        *("default", "native"),  # values of ATEN_CPU_CAPABILITY, the kernel sets (notebook 08)
        *("top",),  # top-k (GLOSSARY.md: top-k采样)
        *("True", "False", "None", "nan", "NaN", "inf", "bool"),  # Python's values, a dtype
        *("log", "exp", "max", "min", "sqrt", "cos", "sin", "argmax", "eps", "pos"),  # maths
        *("KiB", "MiB", "GiB", "rad"),  # units
    }
)
WORD = re.compile(r"(?<![\w])[A-Za-zÀ-ÖØ-öø-ÿ]*[A-Za-z]{3}[A-Za-zÀ-ÖØ-öø-ÿ]*(?![\w])")
CODE = re.compile(r"`[^`\n]*`|<[a-z]+>")  # code in backticks; special tokens, <eos>
# A token is code if it has _ . = [ or (, a capital after a small letter (camelCase) or a
# name under Python's ~ (~mask), or is a quoted string in a list or dict ('the', 'gelu',)
# or a module's child, (dropout):.
CODE_TOKEN = re.compile(r"_|\w\.\w|=|\[|\w\(|[a-z][A-Z]|~\w|^[\[({]*'[^'\s]*'[\])},:]*$|^\(\w+\):$")
TOKEN_BREAK = re.compile(rf"[\s{CJK_CHARACTERS}]+")  # Chinese has no spaces between words
HTML_TAG = re.compile(r"<style.*?</style>|<script.*?</script>|<[^>]+>", re.DOTALL)


@cache
def corpus_words() -> frozenset[str]:
    """Every word of the bundled corpus, English and German, in lower case."""
    words = set()
    for path in sorted(CORPUS.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for sentence in line.split("\t")[:2]:
                words.update(WORD.findall(sentence.lower()))
    return frozenset(words)


def english_words(text: str) -> list[str]:
    """The English words of ``text`` (see the module's docstring), in order."""
    found = []
    for token in TOKEN_BREAK.split(CODE.sub(" ", text)):
        if CODE_TOKEN.search(token):
            continue
        for word in WORD.findall(token):
            if word not in ALLOWED and word.lower() not in corpus_words():
                found.append(word)
    return found


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def shown_text(output: dict) -> str:
    """The text a student sees of one stored output (an image's own text is the figure
    record's business)."""
    kind = output["output_type"]
    if kind == "stream":
        return _joined(output["text"])
    if kind == "error":
        return f"{output['ename']}: {output['evalue']}"
    data = output.get("data", {})
    if "text/html" in data:
        return HTML_TAG.sub(" ", html.unescape(_joined(data["text/html"])))
    if set(data) - {"text/plain"}:  # an image or a widget, text/plain its unseen stand-in
        return ""
    return _joined(data.get("text/plain", ""))


def english_in_outputs(path: Path) -> dict[str, list[str]]:
    """{cell id: its English words} for each code cell of ``path`` whose outputs show any."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    found = {}
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            words = english_words("\n".join(map(shown_text, cell.get("outputs", []))))
            if words:
                found[cell["id"]] = words
    return found


def ledger_verdict(name: str, english: dict[str, list[str]], ledger: dict[str, set[str]]) -> str:
    """What is wrong with ``name``'s cells against its ledger entry; "" when nothing."""
    listed = ledger.get(name, set())
    new = {cell: words for cell, words in english.items() if cell not in listed}
    gone = sorted(listed - set(english))
    problems = [
        f"cell {cell} shows English: {' '.join(dict.fromkeys(words))}"
        for cell, words in new.items()
    ]
    if gone:
        problems.append(f"no English left in {', '.join(gone)}: take it off the ledger")
    if not problems:
        return ""
    count = sum(map(len, ledger.values()))
    return (
        f"{name}:\n  " + "\n  ".join(problems) + f"\n(ledger: {count} cells in all; "
        f"allowed: {', '.join(sorted(ALLOWED))}; code in backticks or with _ . = ( is code)"
    )


def test_the_english_finder_finds_english_and_leaves_code_names_and_the_corpus():
    assert english_words("验证集 BLEU 97.4，AER 0.459") == []
    assert english_words("notebook 07 的模型：268,620 parameters") == ["notebook", "parameters"]
    assert english_words("在greedy BLEU上，dropout 0.1不如notebook 07") == ["greedy", "notebook"]
    assert english_words("`d_model` 与 nn.Transformer、tensor([True])、float16、<eos>") == []
    assert english_words("ValueError: `tokens` must be token ids; got 300") == [
        "token",
        "ids",
        "got",
    ]
    assert english_words("与transformer_lib.masks相同，dropout与seed不同") == ["seed"]
    assert english_words("['the', 'zebra'] (dropout): Dropout(p=0.1)") == []
    assert english_words("(~mask) * -1e9，attn_mask = ~causal，读作<unk>：'zebra'。") == []
    assert english_words("mask取反，causal，zebra") == ["mask", "causal", "zebra"]
    assert english_words("参考：die Mädchen schreiben keine Geschichten.") == []
    assert shown_text({"output_type": "error", "ename": "E", "evalue": "bad words"}) == (
        "E: bad words"
    )
    figure = {"output_type": "display_data", "data": {"image/png": "", "text/plain": "<Figure"}}
    assert english_words(shown_text(figure)) == []


def test_the_ledger_fails_both_ways():
    ledger = {"09.ipynb": {"a", "b"}}
    assert ledger_verdict("09.ipynb", {"a": ["x"], "b": ["y"]}, ledger) == ""
    assert "take it off the ledger" in ledger_verdict("09.ipynb", {"a": ["x"]}, ledger)
    verdict = ledger_verdict("09.ipynb", {"a": ["x"], "b": ["y"], "c": ["greedy"]}, ledger)
    assert "cell c shows English: greedy" in verdict


@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=lambda path: path.name)
def test_no_output_of_the_chinese_edition_shows_english_off_the_ledger(path):
    verdict = ledger_verdict(path.name, english_in_outputs(path), NOT_YET_CHINESE)
    assert not verdict, verdict


def test_the_ledgers_name_cells_that_exist():
    ids = {path.name: cell_ids(path) for path in ZH_NOTEBOOKS}
    for ledger in (NOT_YET_CHINESE, NOT_YET_CHINESE_FIGURES):
        for name, cells in ledger.items():
            assert cells <= ids.get(name, set()), f"{name}: no cells {cells - ids.get(name, set())}"
    print(f"NOT_YET_CHINESE: {sum(map(len, NOT_YET_CHINESE.values()))} cells")


def cell_ids(path: Path) -> set[str]:
    return {cell["id"] for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]}


# -- figures ----------------------------------------------------------------------------------


def _source(cell: dict) -> str:
    return _joined(cell["source"])


def english_in_figures(record: Path) -> dict[str, dict[str, list[str]]]:
    """{notebook: {cell id: English words}} of the figures a run recorded in ``record``."""
    cells: dict[str, dict[str, str]] = {}  # SHA-1 of a code cell's source: {notebook: cell id}
    for path in ZH_NOTEBOOKS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                digest = hashlib.sha1(_source(cell).encode("utf-8")).hexdigest()
                cells.setdefault(digest, {}).setdefault(path.name, cell["id"])
    entries = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    # Each notebook runs in a kernel of its own, and two notebooks may hold the same cell:
    # a kernel's notebook is one that holds every cell that drew a figure in it.
    kernels: dict[object, set[str]] = {}
    for entry in entries:
        holders = set(cells.get(entry["cell_sha1"], {}))
        kernels[entry.get("kernel")] = kernels.get(entry.get("kernel"), holders) & holders
    found: dict[str, dict[str, list[str]]] = {}
    for entry in entries:
        holders = cells.get(entry["cell_sha1"])
        assert holders, f"a figure drawn outside the Chinese edition's cells: {entry}"
        notebook = min(kernels[entry.get("kernel")] or holders)
        words = english_words(re.sub(r"\$[^$]*\$", " ", entry["text"]))  # maths is symbols
        if words:
            found.setdefault(notebook, {}).setdefault(holders[notebook], []).extend(words)
    return found


def test_a_record_of_figure_text_is_read_back_to_its_notebook_and_cell(tmp_path):
    path = ZH_EDITION / "09_decoder_only.ipynb"
    cell = next(
        c
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"][1:]
        if c["cell_type"] == "code"
    )
    digest = hashlib.sha1(_source(cell).encode("utf-8")).hexdigest()
    texts = [("text", "Decoder-only: no encoder"), ("tick", "Mädchen"), ("text", "$\\alpha$ 步")]
    record = tmp_path / "figure_text.jsonl"
    record.write_text(
        "".join(
            json.dumps(
                {"kind": kind, "text": text, "kernel": 7, "cell_id": None, "cell_sha1": digest}
            )
            + "\n"
            for kind, text in texts
        ),
        encoding="utf-8",
    )
    assert english_in_figures(record) == {path.name: {cell["id"]: ["Decoder", "only", "encoder"]}}


@pytest.mark.figure_text
def test_no_figure_of_the_chinese_edition_shows_english_off_the_ledger():
    record = Path(os.environ["COURSE_FIGURE_TEXT"])
    assert record.is_file(), f"{record}: no figure text recorded; run `make test-notebooks-zh`"
    english = english_in_figures(record)
    verdicts = [
        ledger_verdict(path.name, english.get(path.name, {}), NOT_YET_CHINESE_FIGURES)
        for path in ZH_NOTEBOOKS
    ]
    verdicts = [verdict for verdict in verdicts if verdict]
    assert not verdicts, "\n".join(verdicts)


def ledger_source(name: str, english: dict[str, dict[str, list[str]]]) -> str:
    """The Python source of a ledger ``name`` holding the cells of ``english``."""
    lines = [f"{name}: dict[str, set[str]] = {{"]
    for notebook, cells in sorted(english.items()):
        if cells:
            ids = textwrap.wrap(", ".join(f'"{cell}"' for cell in cells), 88)
            count = f"{len(cells)} cell{'s' if len(cells) > 1 else ''}"
            lines += [f'    "{notebook}": {{  # {count}', *(" " * 8 + i for i in ids), "    },"]
    return "\n".join(["# fmt: off", *lines, "}", "# fmt: on"])


def main(argv: list[str]) -> None:
    """Print the ledgers today's outputs (and a record of figure text, if given) call for:
    how the ledgers were first written. After that, a cell only ever leaves them."""
    print(ledger_source("NOT_YET_CHINESE", {p.name: english_in_outputs(p) for p in ZH_NOTEBOOKS}))
    if argv:
        print(ledger_source("NOT_YET_CHINESE_FIGURES", english_in_figures(Path(argv[0]))))


# -- the ledgers -----------------------------------------------------------------------------

# Cells of the Chinese edition whose stored outputs still show English (issue "中文版, round
# 2"): each leaves the ledger when its printout is Chinese, and no cell may join it. 102
# cells on 2 December 2026; 22, then 6, on 3 December: PyTorch's own error messages
# (01, 04, 05), which the Chinese sentence before each explains, and 06's table of the
# model's modules, named as the code names them (encoder Encoder, output Linear).
# fmt: off
NOT_YET_CHINESE: dict[str, set[str]] = {
    "01_embeddings.ipynb": {  # 1 cell
        "cell-016"
    },
    "04_masking.ipynb": {  # 2 cells
        "04-012", "04-035"
    },
    "05_multi_head_attention.ipynb": {  # 2 cells
        "05-009", "05-029"
    },
    "06_encoder_decoder.ipynb": {  # 1 cell
        "06-032"
    },
}
# fmt: on

# Cells whose figures still show English as `make test-notebooks-zh` draws them: 49 cells
# on 2 December 2026, before figure text went through `_()`; none on 3 December.
# fmt: off
NOT_YET_CHINESE_FIGURES: dict[str, set[str]] = {
}
# fmt: on


if __name__ == "__main__":  # python tests/test_zh_english.py [build/zh_CN_figure_text.jsonl]
    main(sys.argv[1:])
