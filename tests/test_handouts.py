"""make handouts: static HTML pages that open offline, with formulas and figures rendered,
widgets replaced by notes that say what they showed, and an index of titles.

The pages are built from two notebooks (one with a widget, one heavy on formulas) into a
temporary folder. The browser test opens them from disk in headless Chromium with every
request that is not file: or data: aborted.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ["02_positional_encoding", "06_encoder_decoder"]
_spec = importlib.util.spec_from_file_location("make_handouts", ROOT / "tools" / "make_handouts.py")
make_handouts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_handouts)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    paths = [ROOT / "notebooks" / f"{name}.ipynb" for name in NOTEBOOKS]
    missing = [p.name for p in paths if not p.is_file()]
    assert not missing, f"notebooks missing: {missing}"
    out = tmp_path_factory.mktemp("handouts")
    pages = make_handouts.build(paths, out)
    return {page.stem: page for page in pages}


def _stored(name: str) -> dict:
    return json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))


# --- the offline check itself ----------------------------------------------------------


def test_remote_references_finds_every_kind_of_network_load():
    page = """<html><head>
    <script src="https://cdn.example.org/require.js"></script>
    <link rel="stylesheet" href="//fonts.example.org/css">
    <style>@import url("https://example.org/a.css"); .x { background: url(http://example.org/b.png) }</style>
    <style>@import 'https://example.org/c.css';</style>
    </head><body><img src="https://example.org/d.png"><div style="background:url('https://e.org/e.png')"></div>
    </body></html>"""
    remote = make_handouts.remote_references(page)
    assert len(remote) == 7, remote
    for url in ("require.js", "fonts.example.org", "a.css", "b.png", "c.css", "d.png", "e.png"):
        assert any(url in r for r in remote), (url, remote)


def test_remote_references_allows_local_files_data_uris_and_plain_links():
    page = """<html><head><script src="mathjax/MathJax.js"></script>
    <style>.icon { background: url(data:image/svg+xml;base64,AAAA) }</style></head>
    <body><img src="data:image/png;base64,AAAA"><a href="https://arxiv.org/abs/1706.03762">paper</a>
    <p>see https://example.org in the text</p></body></html>"""
    assert make_handouts.remote_references(page) == []


def test_a_remote_image_in_a_notebook_fails_the_build(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell('<img src="https://example.org/fig.png">'))
    source = tmp_path / "remote.ipynb"
    nbformat.write(nb, source)
    with pytest.raises(RuntimeError, match=r"remote\.ipynb: the page would load from the network"):
        make_handouts.build_page(source, tmp_path)


# --- the built pages -------------------------------------------------------------------


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_pages_load_nothing_from_the_network(built, name):
    page = built[name].read_text(encoding="utf-8")
    assert make_handouts.remote_references(page) == []
    # Independent of the parser: no remote src/href/@import/url( anywhere, and no script
    # that would fetch a module itself (the stock template's mermaid.js loader does).
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert not re.search(r"""(?:@import|url\()\s*["']?\s*(?:https?:)?//""", page, re.I)
    scripts = re.findall(r"<script\b[^>]*>(.*?)</script>", page, re.S | re.I)
    assert not [s for s in scripts if re.search(r"https?://", s)]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_figures_are_embedded_as_data_uris(built, name):
    page = built[name].read_text(encoding="utf-8")
    sources = re.findall(r"<img\b[^>]*\bsrc\s*=\s*[\"']([^\"']*)", page, re.I)
    assert sources and all(s.startswith("data:image/") for s in sources), sources[:3]
    stored = make_handouts.freeze_widgets(nbformat.from_dict(_stored(name)))
    images = sum(
        "image/png" in o.get("data", {}) for c in stored.cells for o in c.get("outputs", [])
    )
    assert len(sources) == images


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_formulas_are_left_for_the_bundled_mathjax(built, name):
    page = built[name].read_text(encoding="utf-8")
    config = make_handouts.MATHJAX_CONFIG
    assert f'<script src="mathjax/MathJax.js?config={config}"></script>' in page
    assert (built[name].parent / "mathjax" / "MathJax.js").is_file()
    assert (built[name].parent / "mathjax" / "config" / f"{config}.js").is_file()
    assert "$$" in page  # display formulas reach the page as TeX for MathJax to typeset


def test_widgets_become_a_note_and_the_picture_they_showed(built):
    page = built["02_positional_encoding"].read_text(encoding="utf-8")
    assert "application/vnd.jupyter.widget" not in page
    assert "jupyter-widgets/html-manager" not in page
    notes = re.findall(r'<p class="handout-widget-note">(.*?)</p>', page, re.S)
    assert len(notes) == 1
    assert "d_model = 64" in notes[0] and "JupyterLab" in notes[0]
    # The widget's stored figure follows the note, in the same cell.
    cell = page.split('<p class="handout-widget-note">', 1)[1].split("jp-Cell-inputWrapper", 1)[0]
    assert "data:image/png;base64," in cell


def _widget_notebook(state: dict, top: str, after: list) -> nbformat.NotebookNode:
    """A notebook with one code cell: the widget ``top`` (its ``state`` stored), then ``after``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {make_handouts.WIDGET_STATE: {"state": state}}
    view = {"model_id": top, "version_major": 2, "version_minor": 0}
    widget = nbformat.v4.new_output("display_data", data={make_handouts.WIDGET_VIEW: view})
    nb.cells.append(nbformat.v4.new_code_cell("w", outputs=[widget, *after]))
    return nb


def _model(name: str, **state) -> dict:
    return {"model_name": name, "state": state}


def _notes(nb: nbformat.NotebookNode) -> list[str]:
    frozen = make_handouts.freeze_widgets(nb)
    texts = [
        o.get("data", {}).get("text/html", "") for c in frozen.cells for o in c.get("outputs", [])
    ]
    return [t for t in texts if "handout-widget-note" in t]


def test_a_progress_bar_becomes_a_static_bar_and_does_not_claim_the_next_output():
    # tqdm's bar: HBox(HTML, FloatProgress, HTML); the cell then shows a loss curve.
    state = {
        "bar": _model("HBoxModel", children=["IPY_MODEL_a", "IPY_MODEL_b", "IPY_MODEL_c"]),
        "a": _model("HTMLModel", description="", value="training:\u2007100%"),
        "b": _model("FloatProgressModel", description="", value=450.0, max=450.0),
        "c": _model("HTMLModel", description="", value="450/450 [02:45&lt;00:00]"),
    }
    curve = nbformat.v4.new_output("display_data", data={"image/png": "AAAA"})
    (note,) = _notes(_widget_notebook(state, "bar", [curve]))
    assert "<b>Progress bar</b>" in note and '<progress value="450" max="450">' in note
    assert "training: 100% 450/450 [02:45&lt;00:00]" in note
    assert "below" not in note.lower() and "showed" not in note


def test_notes_name_controls_without_their_colons_and_selections_by_label():
    state = {
        "box": _model("VBoxModel", children=["IPY_MODEL_t", "IPY_MODEL_m", "IPY_MODEL_o"]),
        "t": _model("TextModel", description="English:", value="the dog."),
        "m": _model("DropdownModel", description="attention:", index=1, _options_labels=["a", "b"]),
        "o": _model(
            "OutputModel", outputs=[{"output_type": "stream", "name": "stdout", "text": "hi"}]
        ),
    }
    (note,) = _notes(_widget_notebook(state, "box", []))
    assert "(English = \u201cthe dog.\u201d, attention = b)" in note
    assert "Below is what it showed" in note


def test_the_playground_and_progress_notes_of_notebook_07():
    nb = nbformat.read(ROOT / "notebooks" / "07_toy_translator.ipynb", as_version=4)
    stored = nb.metadata.get("widgets", {}).get(make_handouts.WIDGET_STATE, {}).get("state", {})
    shown = [
        stored.get(o.data[make_handouts.WIDGET_VIEW]["model_id"], {}).get("state", {})
        for c in nb.cells
        for o in c.get("outputs", [])
        if make_handouts.WIDGET_VIEW in o.get("data", {})
    ]
    kinds = [  # the kinds of the shown widgets' children; tqdm's bar holds a FloatProgress
        {
            stored.get(i.removeprefix("IPY_MODEL_"), {}).get("model_name")
            for i in w.get("children", [])
        }
        for w in shown
    ]
    bars = sum("FloatProgressModel" in k for k in kinds)
    notes = _notes(nb)
    progress = [n for n in notes if "Progress bar" in n]
    assert len(progress) == bars and not any("below" in n.lower() for n in progress), notes
    playground = [n for n in notes if "English" in n]
    assert len(playground) == 1 and "English = \u201c" in playground[0], notes
    assert ": =" not in playground[0] and "search = greedy" in playground[0]


def test_freeze_widgets_handles_a_widget_without_stored_state():
    nb = nbformat.v4.new_notebook()
    view = {"model_id": "abc", "version_major": 2, "version_minor": 0}
    output = nbformat.v4.new_output(
        "display_data", data={make_handouts.WIDGET_VIEW: view, "text/plain": "VBox()"}
    )
    nb.cells.append(nbformat.v4.new_code_cell("w", outputs=[output]))
    frozen = make_handouts.freeze_widgets(nb)
    (note,) = frozen.cells[0].outputs
    assert set(note["data"]) == {"text/html"} and "Interactive widget" in note["data"]["text/html"]
    assert "Below" not in note["data"]["text/html"]  # nothing follows it
    assert nb.cells[0].outputs[0]["data"]["text/plain"] == "VBox()"  # the input is untouched


def test_the_index_links_every_page_by_its_title_with_its_opening_paragraph(built):
    index = (next(iter(built.values())).parent / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'href="([^"]+)"', index) == [f"{name}.html" for name in NOTEBOOKS]
    titles = re.findall(r'<a href="[^"]+">(.*?)</a>', index)
    assert (
        titles[0].startswith("02 · Positional encoding") and titles[1] == "06 · Encoder and decoder"
    )
    assert "Attention, built in the next notebook, compares every token" in index
    assert "<style>" in index and make_handouts.remote_references(index) == []
    page = built["06_encoder_decoder"].read_text(encoding="utf-8")
    assert "<title>06 · Encoder and decoder</title>" in page


def test_the_chinese_edition_makes_offline_pages_in_chinese(tmp_path):
    """`make handouts COURSE_LANG=zh_CN`: the same pages for notebooks/zh_CN, declared
    Chinese (<html lang="zh">, so a CJK font draws Chinese glyphs), with Chinese notes and
    index."""
    paths = [ROOT / "notebooks" / "zh_CN" / f"{name}.ipynb" for name in NOTEBOOKS]
    if not all(path.is_file() for path in paths):
        pytest.skip("no Chinese edition in notebooks/zh_CN")
    pages = make_handouts.build(paths, tmp_path, lang="zh_CN")
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert make_handouts.remote_references(text) == [], page.name
        assert '<html lang="zh">' in text, page.name
        assert re.search(r"<title>\d\d · [^<]*[\u4e00-\u9fff]", text), page.name
        assert "data:image/png" in text, page.name
    notes = re.findall(r'<p class="handout-widget-note">(.*?)</p>', pages[0].read_text("utf-8"))
    assert len(notes) == 1 and "交互控件" in notes[0] and "Interactive" not in notes[0]
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "<html lang='zh'>" in index and "讲义" in index and "Handouts" not in index


def test_notebook_summary_reads_the_first_heading_and_paragraph():
    nb = nbformat.v4.new_notebook()
    text = "# 09 · Extra: `beam` search\n\nFirst line\nof the *opening* paragraph.\n\n- a list"
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell(text)]
    title, about = make_handouts.notebook_summary(nb, "09_extra")
    assert (title, about) == ("09 · Extra: `beam` search", "First line of the *opening* paragraph.")
    assert make_handouts.notebook_summary(nbformat.v4.new_notebook(), "x") == ("x", "")


# --- in a browser, offline ---------------------------------------------------------------

_CHECKS = r"""() => {
  const hasError = (node) => !!node && (node.type === "merror" || (node.data || []).some(hasError));
  const jax = MathJax.Hub.getAllJax();
  const texts = Array.from(document.querySelectorAll(".jp-MarkdownOutput")).map((el) => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll("script, code, pre, .MathJax, .MathJax_Display, .MathJax_Preview")
      .forEach((n) => n.remove());
    return copy.textContent;
  });
  return {
    rendered: document.querySelectorAll("span.MathJax").length,
    font: MathJax.OutputJax["HTML-CSS"].fontInUse,
    fontWarning: !!document.getElementById("MathJax_Font_Warning"),
    jax: jax.length,
    errors: jax.filter((j) => hasError(j.root)).map((j) => j.originalText),
    leftover: texts.filter((t) => /\$\$|\\\(|\\\[|\\[a-zA-Z]{2,}/.test(t)).map((t) => t.slice(0, 200)),
    images: Array.from(document.images).map((img) => [img.complete, img.naturalWidth]),
  };
}"""


@pytest.mark.browser
def test_pages_render_offline_in_chromium(built):
    browser_support = pytest.importorskip("browser_support")
    browser_support.skip_unless_available()
    from playwright.sync_api import sync_playwright

    blocked: list[str] = []

    def offline(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    with sync_playwright() as pw:
        browser = browser_support.launch_chromium(pw, browser_support.find_chromium())
        try:
            page = browser.new_page()
            page.route("**/*", offline)
            for name, path in built.items():
                page.goto(path.as_uri())
                page.wait_for_selector("html[data-mathjax=done]", state="attached", timeout=60_000)
                result = page.evaluate(_CHECKS)
                assert result["jax"] > 20 and result["rendered"] == result["jax"], (name, result)
                assert result["errors"] == [], (name, result["errors"])
                assert result["font"] == "STIX-Web" and not result["fontWarning"], (name, result)
                assert result["leftover"] == [], (name, result["leftover"])
                assert result["images"], name
                assert all(done and width > 0 for done, width in result["images"]), name
        finally:
            browser.close()
    assert blocked == [], f"the pages tried to reach the network: {blocked}"
