"""The Chinese edition's figures: Chinese drawn with an installed CJK font; where none is
installed, English and one notice; never a box for a missing glyph (transformer_lib.fonts).

matplotlib warns "Glyph NNNN (...) missing from font(s) ..." when it draws a character its
fonts lack (as a box): each figure here is drawn with that warning turned into a failure."""

from __future__ import annotations

import json
import re
import warnings

import matplotlib
import matplotlib.pyplot as plt
import pytest

from transformer_lib import fonts, i18n

LANG = "zh_CN"
MISSING_GLYPH = re.compile(r"Glyph \d+ .*missing from")
TITLE = "self-attention mask"  # a message of the library's catalogue (自注意力掩码)
LABEL = "layer {number}"  # and a template (第{number}层)


def draw_without_boxes(figure) -> None:
    """Draw ``figure``; fail if matplotlib drew a box for a glyph its fonts lack."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure.canvas.draw()
    boxes = [str(w.message) for w in caught if MISSING_GLYPH.search(str(w.message))]
    assert not boxes, "drawn as boxes:\n" + "\n".join(boxes)


def a_figure():
    figure, axes = plt.subplots(layout="constrained")
    axes.plot([0, 1, 2], [2.0, 1.0, 0.5], label=i18n._(TITLE))
    axes.set_title(i18n._(TITLE) + "：" + i18n._(LABEL).format(number=1))
    axes.set_xlabel(i18n._(LABEL).format(number=2))
    axes.legend()
    return figure, axes


@pytest.fixture
def chinese(monkeypatch):
    """The Chinese edition's process, its matplotlib settings restored afterwards."""
    monkeypatch.setenv("COURSE_LANG", "en")
    monkeypatch.delenv(fonts.ENV_RECORD, raising=False)
    fonts._notice.cache_clear()
    with matplotlib.rc_context():
        yield
        plt.close("all")
    fonts._notice.cache_clear()


@pytest.fixture
def no_cjk_font(monkeypatch):
    """A machine without a CJK font: the lookup finds none, matplotlib knows only DejaVu."""
    monkeypatch.setattr(fonts, "installed_cjk_family", lambda: None)
    matplotlib.rcParams["font.family"] = ["sans-serif"]
    matplotlib.rcParams["font.sans-serif"] = ["DejaVu Sans"]


def test_chinese_figure_text_is_drawn_with_an_installed_cjk_font(chinese, capsys):
    family = fonts.installed_cjk_family()
    if family is None:
        pytest.skip("no CJK font installed: on Debian/Ubuntu, apt-get install fonts-noto-cjk")
    i18n.set_language(LANG)
    assert matplotlib.rcParams["font.sans-serif"][:2] == [family, fonts.SYMBOLS_FAMILY]
    figure, axes = a_figure()
    draw_without_boxes(figure)
    assert axes.get_title() == "自注意力掩码：第1层" and axes.get_xlabel() == "第2层"
    assert fonts.INSTALL_NOTICE not in capsys.readouterr().err


def test_italic_chinese_figure_text_is_drawn_upright_in_the_cjk_font(chinese):
    """A CJK family has no italic face: matplotlib would pick a Latin italic one without CJK
    glyphs (notebook 00's architecture note was drawn in boxes)."""
    if fonts.installed_cjk_family() is None:
        pytest.skip("no CJK font installed: on Debian/Ubuntu, apt-get install fonts-noto-cjk")
    i18n.set_language(LANG)
    figure, axes = plt.subplots()
    note = axes.text(0.5, 0.5, "（模型输出logit）", style="italic")
    draw_without_boxes(figure)
    assert note.get_fontstyle() == "normal"


def test_without_a_cjk_font_figure_text_falls_back_to_english_with_one_notice(
    chinese, no_cjk_font, capsys
):
    i18n.set_language(LANG)
    assert capsys.readouterr().err.count("fonts-noto-cjk") == 1  # said when the edition starts
    figure, axes = a_figure()
    assert axes.get_title() == "自注意力掩码：第1层"  # translated, as in any process ...
    draw_without_boxes(figure)  # ... and English when drawn
    assert axes.get_title() == "self-attention mask: layer 1"
    assert axes.get_xlabel() == "layer 2"
    assert [t.get_text() for t in axes.get_legend().get_texts()] == [TITLE]
    draw_without_boxes(a_figure()[0])
    assert capsys.readouterr().err == ""  # the notice, once per process


def test_the_fallback_also_reaches_a_process_that_chose_chinese_by_course_lang(
    chinese, no_cjk_font, monkeypatch, capsys
):
    monkeypatch.setenv("COURSE_LANG", LANG)  # a script: no set_language
    monkeypatch.setattr(i18n, "_figures_prepared", set())
    figure, axes = a_figure()  # its _() sees matplotlib imported and prepares the figures
    draw_without_boxes(figure)
    assert axes.get_xlabel() == "layer 2"
    assert "fonts-noto-cjk" in capsys.readouterr().err


def test_the_glyph_check_sees_a_box(chinese, monkeypatch):
    """A CJK title in a font without CJK glyphs fails the check (the hook does not step in
    when it believes a CJK font is there)."""
    fonts.install_figure_hook()
    monkeypatch.setattr(fonts, "installed_cjk_family", lambda: "Noto Sans CJK SC")
    matplotlib.rcParams["font.sans-serif"] = ["DejaVu Sans"]
    figure, axes = plt.subplots()
    axes.set_title("自注意力掩码")
    with pytest.raises(AssertionError, match="missing from font"):
        draw_without_boxes(figure)


def test_the_catalogue_read_backwards_gives_the_english_with_its_values(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", LANG)
    assert i18n.english(i18n._(TITLE)) == TITLE
    assert i18n.english(i18n._(LABEL).format(number=12)) == "layer 12"
    assert i18n.english("不在目录里的话") is None
    assert fonts.english_figure_text("英语：\n不在目录里的话 x", i18n.english) == "English:\n… x"


def test_every_figure_records_its_visible_text_when_asked(chinese, monkeypatch, tmp_path):
    record = tmp_path / "figure_text.jsonl"
    monkeypatch.setenv(fonts.ENV_RECORD, str(record))
    i18n.set_language("en")
    figure, axes = plt.subplots()
    axes.plot([0, 1], [0, 1], label="loss")
    axes.set(title="Learning to reverse", xlabel="step", xticks=[0, 1], xticklabels=["a", "b"])
    axes.legend()
    figure.canvas.draw()
    figure.canvas.draw()  # drawn again unchanged: recorded once
    lines = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    texts = {(line["kind"], line["text"]) for line in lines}
    assert {("tick", "a"), ("tick", "b"), ("text", "Learning to reverse")} <= texts
    assert {("text", "step"), ("text", "loss")} <= texts
    assert len(lines) == len(texts)
