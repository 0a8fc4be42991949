"""Tests for reading corpus files: transformer_lib.data.read_tsv (formats, encodings, the
header rule, what is not a regular file, memory)."""

from __future__ import annotations

import itertools
import os
import re
import threading
import tracemalloc
import unicodedata
from pathlib import Path

import pytest

from transformer_lib.data import Example, corpus, read_tsv

PAIRS = "Go.\tGeh.\nHi.\tHallo.\n"


def _error_of(function, *args) -> Exception | None:
    try:
        function(*args)
    except Exception as error:  # noqa: BLE001 - the test inspects it
        return error
    return None


def test_read_tsv_accepts_tatoeba_exports(tmp_path):
    path = tmp_path / "deu.txt"
    path.write_text(
        "Go.\tGeh.\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #8597805\r\n"
        "I won!\tIch hab gewonnen!\r\n"
        "\n"
        "the dog sleeps.\tder Hund schläft.\t0-0 1-1 2-2 3-3\n",
        encoding="utf-8",
        newline="",
    )
    examples = read_tsv(path)
    assert examples == [
        Example("Go.", "Geh.", None),
        Example("I won!", "Ich hab gewonnen!", None),
        Example("the dog sleeps.", "der Hund schläft.", ((0, 0), (1, 1), (2, 2), (3, 3))),
    ]


@pytest.mark.parametrize(
    "line, problem",
    [("Go. Geh.", "1 column"), ("Go.\t \tCC-BY", "an empty target"), ("\tGeh.", "an empty source")],
)
def test_read_tsv_names_file_and_line_of_a_malformed_line(tmp_path, line, problem):
    path = tmp_path / "bad.tsv"
    path.write_text(f"Hi.\tHallo.\n{line}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"bad\.tsv, line 2` must be .*; got {problem}"):
        read_tsv(path)


def test_read_tsv_drops_a_byte_order_mark(tmp_path):
    path = tmp_path / "bom.tsv"
    path.write_bytes("\ufeffGo.\tGeh.\nHi.\tHallo.\n".encode())
    # before: the first source was '\ufeffGo.' and '\ufeff' became a token and a vocabulary entry
    assert read_tsv(path) == [Example("Go.", "Geh."), Example("Hi.", "Hallo.")]


def test_read_tsv_names_file_and_line_of_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / "latin1.tsv"
    path.write_bytes("Go.\tGeh.\r\nHi.\tHallo.\r\nBye.\tTschüss.\n".encode("latin-1"))
    # before: a bare UnicodeDecodeError naming neither the file nor the line
    with pytest.raises(
        ValueError,
        match=r"latin1\.tsv, line 3` must be UTF-8 text; got bytes b'\\xfc' at character 10",
    ):
        read_tsv(path)


def test_read_tsv_maps_tatoebas_four_column_pairs(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text(
        "1276\tLet's try something.\t6413\tLass uns etwas versuchen!\n"
        "1277\tI have to go to sleep.\t2213\tIch muss schlafen gehen.\n",
        encoding="utf-8",
    )
    # before: Example('1276', "Let's try something.", None): the id was the source sentence
    assert read_tsv(path) == [
        Example("Let's try something.", "Lass uns etwas versuchen!"),
        Example("I have to go to sleep.", "Ich muss schlafen gehen."),
    ]


@pytest.mark.parametrize(
    "line, columns",
    [("Go.\tGeh.\t0-0 1-1\tnote", 4), ("x1\tGo.\t2\tGeh.", 4), ("a\tb\tc\td\te", 5)],
)
def test_read_tsv_rejects_other_extra_columns(tmp_path, line, columns):
    path = tmp_path / "wide.tsv"
    path.write_text(f"Hi.\tHallo.\n{line}\n", encoding="utf-8")
    # before: every column after the third was silently ignored
    with pytest.raises(ValueError, match=rf"wide\.tsv, line 2` must be .*; got {columns} column"):
        read_tsv(path)


@pytest.mark.parametrize("link", ["3-0", "0-3"])
def test_read_tsv_rejects_an_alignment_link_past_a_sentence_end(tmp_path, link):
    path = tmp_path / "gold.tsv"
    path.write_text(
        f"Hi.\tHallo.\t0-0 1-1\nthe dog.\tder Hund.\t0-0 1-1 {link}\n", encoding="utf-8"
    )
    # before: accepted, and a perfect prediction then scored AER 0.6
    with pytest.raises(
        ValueError,
        match=rf"gold\.tsv, line 2` must be an alignment with links i-j, i < 3 and j < 3; got link {link}\.",
    ):
        read_tsv(path)


def test_read_tsv_normalises_to_nfc(tmp_path):
    path = tmp_path / "nfd.tsv"
    path.write_text(unicodedata.normalize("NFD", "the girl.\tdas Mädchen.\t0-0 1-1 2-2\n"), "utf-8")
    example = read_tsv(path)[0]
    assert example == Example("the girl.", "das Mädchen.", ((0, 0), (1, 1), (2, 2)))


@pytest.mark.parametrize(
    "text",
    ["src\ttgt\n", "\ufeffsrc\ttgt\n", "\nSource\tTarget\tAlignment\r\n", "id\tsrc\tid\ttgt\n"],
)
def test_read_tsv_skips_a_header_and_a_header_alone_is_no_pair(tmp_path, text):
    path = tmp_path / "header.tsv"
    path.write_text(text, encoding="utf-8", newline="")
    # before: the header became the pair ('src', 'tgt'), in the vocabulary and the batches
    assert read_tsv(path) == []
    path.write_text(text + "the dog.\tder Hund.\t0-0 1-1 2-2\n", encoding="utf-8", newline="")
    assert read_tsv(path) == [Example("the dog.", "der Hund.", ((0, 0), (1, 1), (2, 2)))]


def test_read_tsv_reads_header_words_after_the_first_pair_as_a_pair(tmp_path):
    path = tmp_path / "words.tsv"
    path.write_text("Go.\tGeh.\nsource\ttarget\n", encoding="utf-8")
    assert read_tsv(path) == [Example("Go.", "Geh."), Example("source", "target")]


@pytest.mark.parametrize(
    "encoding, got",
    [
        ("utf-16", "a UTF-16 byte-order mark"),
        ("utf-32", "a UTF-32 byte-order mark"),
        ("utf-16-le", "NUL bytes between the letters, as in UTF-16LE"),
        ("utf-16-be", "NUL bytes between the letters, as in UTF-16BE"),
        ("utf-32-le", "NUL bytes between the letters, as in UTF-32LE"),
    ],
)
def test_read_tsv_names_utf16_and_utf32_and_how_to_convert(tmp_path, encoding, got):
    path = tmp_path / "wide.tsv"
    path.write_text(PAIRS, encoding=encoding)
    # before: "line 1 ... got bytes b'\xff'" with a Latin-1 hint, "line 3 ... got 1 column(s):
    # '\x00'", or, for UTF-16BE, no error: NUL bytes were read as text
    with pytest.raises(ValueError, match=rf"wide\.tsv` must be UTF-8 text; got {got}\. ") as info:
        read_tsv(path)
    message = str(info.value)
    assert "`iconv -f UTF-" in message and "-t UTF-8 wide.tsv > wide-utf8.tsv`" in message
    named = re.search(r"open\(path, encoding='([^']+)'\)", message).group(1)
    assert path.read_text(encoding=named).lstrip("\ufeff") == PAIRS  # the advice works


def test_read_tsv_names_the_line_of_a_nul_byte(tmp_path):
    path = tmp_path / "nul.tsv"
    path.write_bytes(b"Go.\tGeh.\nHi.\tHal\x00lo.\n")
    # before: read silently as the target 'Hal\x00lo.'
    with pytest.raises(
        ValueError, match=r"nul\.tsv, line 2` must be UTF-8 text; got a NUL byte at character 8\."
    ):
        read_tsv(path)


def test_read_tsv_counts_lines_across_read_buffers(tmp_path):
    path = tmp_path / "late.tsv"
    path.write_bytes(("Hi.\tHallo.\n" * 5000 + "Bye.\tTschüss.\n").encode("latin-1"))
    with pytest.raises(ValueError, match=r"late\.tsv, line 5001` .* at character 10\. Is it"):
        read_tsv(path)


def test_read_tsv_refuses_a_folder_and_a_device(tmp_path):
    # before: IsADirectoryError; /dev/zero (like /dev/null, a character device) ran out of memory
    with pytest.raises(ValueError, match=r"` must be a regular file; got a directory\."):
        read_tsv(tmp_path)
    if Path("/dev/null").exists():
        with pytest.raises(ValueError, match=r"null` must be a regular file; got a character dev"):
            read_tsv("/dev/null")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_read_tsv_refuses_a_named_pipe_instead_of_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe.tsv"
    os.mkfifo(fifo)
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(_error_of(read_tsv, fifo)))
    thread.start()
    thread.join(timeout=5)
    if thread.is_alive():  # before: blocked in open(); a writer lets it go
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join()
    assert not thread.is_alive()
    assert re.search(r"pipe\.tsv` must be a regular file; got a named pipe", str(outcome[0]))


@pytest.mark.parametrize(
    "first, rest, problem",
    [("no tab here\n", "Hi.\tHallo.\n", "1 column"), ("x" * 1000, "x" * 1000, "a longer line")],
    ids=["bad-first-line", "one-long-line"],
)
def test_read_tsv_memory_is_bounded_by_a_line_not_the_file(tmp_path, first, rest, problem):
    path = tmp_path / "big.tsv"
    with path.open("w", encoding="utf-8", newline="") as file:
        file.write(first)
        block = rest * (1_000_000 // len(rest))
        file.writelines(itertools.repeat(block, 50))
    size = path.stat().st_size  # 50 MB
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=rf"big\.tsv, line 1` must be .*; got {problem}"):
            read_tsv(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # before: the whole file was read and decoded first (peak several times its size)
    assert peak < size / 5


def test_read_tsv_accepts_lines_up_to_the_limit_and_refuses_longer(tmp_path, monkeypatch):
    monkeypatch.setattr(corpus, "MAX_LINE_CHARS", 20)
    path = tmp_path / "limit.tsv"
    line = "Go on.\tGeh weiter!!"  # 19 characters, then one more
    path.write_text(f"{line}!\n{line}!", encoding="utf-8")
    assert read_tsv(path) == [Example("Go on.", "Geh weiter!!!")] * 2
    path.write_text(f"{line}!!\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"line 1` must be at most 20 characters long; got a lo"):
        read_tsv(path)
