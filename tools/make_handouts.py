"""Build the handouts: one static HTML page per notebook that opens offline from disk.

Usage: python tools/make_handouts.py [--src notebooks] [--out handouts] [--lang en|zh_CN] [NOTEBOOK ...]

Each page is made from the notebook's stored outputs (nothing is executed) with
nbconvert's JupyterLab template. Figures are embedded as data URIs. Formulas are
typeset in the browser by a copy of MathJax 2.7 (from the `jupyter-server-mathjax`
package) written to ``<out>/mathjax/``, so keep the folder together when you copy it.
The page loads nothing from the network: require.js, the widget manager and
mermaid.js, which the stock template fetches from CDNs, are left out.

Widgets cannot run in a static page: each becomes a short note that names its controls
and their values, followed by the picture it showed when the notebook was saved
(``tools/handout_widgets.py``). ``index.html`` lists each notebook's title (its first
heading) and its opening paragraph, styled by an inline style sheet.

The build fails if a page would still reference a remote script, style sheet, font
or image; ``remote_references`` is the check, and the tests use it too.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
from jinja2 import DictLoader
from nbconvert import HTMLExporter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from handout_widgets import NOTES, WIDGET_STATE, WIDGET_VIEW, freeze_widgets  # noqa: E402

__all__ = [
    "WIDGET_STATE",
    "WIDGET_VIEW",
    "build",
    "freeze_widgets",
    "notebook_summary",
    "remote_references",
]

MATHJAX_DIR = "mathjax"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full"

# The stock lab template, minus everything it would fetch from a CDN. The MathJax copy
# holds one combined configuration, TeX-AMS-MML_HTMLorMML-full: TeX in, HTML-CSS out
# with the STIX-Web fonts that ship with it.
TEMPLATE = r"""
{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_js_mathjax -%}
<script type="text/x-mathjax-config">
MathJax.Hub.Config({
  tex2jax: {
    inlineMath: [["$", "$"], ["\\(", "\\)"]],
    displayMath: [["$$", "$$"], ["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true
  },
  // A TeX error shows as an error, not as the raw TeX (the tests look for errors).
  TeX: { noErrors: { disabled: true }, noUndefined: { disabled: true } },
  MMLorHTML: { prefer: "HTML" },
  "HTML-CSS": { availableFonts: [], webFont: "STIX-Web", imageFont: null },
  displayAlign: "center",
  messageStyle: "none"
});
MathJax.Hub.Register.StartupHook("End", function () {
  document.documentElement.setAttribute("data-mathjax", "done");
});
</script>
<script src="{{ resources.handout_mathjax_url }}"></script>
{%- endblock html_head_js_mathjax -%}
{%- block extra_css -%}
<style type="text/css">
.handout-widget-note {
  border-left: 4px solid var(--jp-brand-color1, #1976d2);
  background: var(--jp-layout-color2, #eee);
  padding: 0.4em 0.8em;
  margin: 0.2em 0;
}
</style>
{%- endblock extra_css -%}
"""


# --- the offline check -----------------------------------------------------------------

_REMOTE = re.compile(r"^\s*(?:https?:)?//", re.IGNORECASE)
_CSS_REFS = re.compile(r"""@import\s+(?:url\()?\s*['"]?([^'")\s;]+)|url\(\s*['"]?([^'")\s]+)""")


class _References(HTMLParser):
    """Collects what a page loads: src/href of loading tags, and CSS @import/url()."""

    LOADS = {"script": "src", "img": "src", "iframe": "src", "embed": "src", "source": "src"}
    LOADS |= {"audio": "src", "video": "src", "input": "src", "object": "data", "link": "href"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.refs: list[tuple[str, str]] = []
        self._in_style = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in self.LOADS and attrs.get(self.LOADS[tag]):
            self.refs.append((f"<{tag} {self.LOADS[tag]}>", attrs[self.LOADS[tag]]))
        if attrs.get("srcset"):
            self.refs += [(f"<{tag} srcset>", s.split()[0]) for s in attrs["srcset"].split(",")]
        if attrs.get("style"):
            self._css(attrs["style"], f"<{tag} style>")
        self._in_style = tag == "style"

    def handle_endtag(self, tag):
        self._in_style = False

    def handle_data(self, data):
        if self._in_style:
            self._css(data, "<style>")

    def _css(self, css: str, where: str) -> None:
        for imported, url in _CSS_REFS.findall(css):
            self.refs.append((f"{where} {'@import' if imported else 'url()'}", imported or url))


def page_references(page: str) -> list[tuple[str, str]]:
    """Every (where, url) that a browser would load for this page, from tags and CSS."""
    parser = _References()
    parser.feed(page)
    parser.close()
    return parser.refs


def remote_references(page: str) -> list[str]:
    """References in ``page`` that would go to the network (http:, https: or //)."""
    return [f"{where} {url}" for where, url in page_references(page) if _REMOTE.match(url)]


# --- the build -------------------------------------------------------------------------


def mathjax_source() -> Path:
    """MathJax 2.7 as the `jupyter-server-mathjax` package ships it (a course dependency)."""
    spec = importlib.util.find_spec("jupyter_server_mathjax")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "MathJax is missing: pip install -c constraints.txt jupyter-server-mathjax"
        )
    return Path(spec.submodule_search_locations[0]) / "static"


def copy_mathjax(out: Path) -> Path:
    """Copy MathJax (12 MB, fonts and all) to ``out/mathjax``, unless it is there already."""
    target = out / MATHJAX_DIR
    if not (target / "MathJax.js").is_file():
        shutil.copytree(mathjax_source(), target, dirs_exist_ok=True)
    return target


# The page's <html lang>: nbconvert takes an ISO 639-1 code; "zh" makes browsers draw
# the Chinese edition with Chinese (not Japanese) glyphs of a CJK font.
HTML_LANG = {"en": "en", "zh_CN": "zh"}


def exporter(lang: str = "en") -> HTMLExporter:
    return HTMLExporter(
        language_code=HTML_LANG[lang],
        template_name="lab",
        extra_loaders=[DictLoader({"handout.html.j2": TEMPLATE})],
        template_file="handout.html.j2",
        embed_images=True,  # markdown images become data URIs too
    )


def build_page(
    notebook: Path, out: Path, html_exporter: HTMLExporter | None = None, lang: str = "en"
) -> Path:
    """Write ``out/<notebook>.html`` from the notebook's stored outputs, its notes and
    ``<html lang>`` in ``lang`` (en or zh_CN); return its path."""
    nb = nbformat.read(notebook, as_version=4)
    title, _ = notebook_summary(nb, notebook.stem)
    resources = {
        "metadata": {"name": re.sub(r"[`*]", "", title), "path": str(notebook.parent)},
        "handout_mathjax_url": f"{MATHJAX_DIR}/MathJax.js?config={MATHJAX_CONFIG}",
    }
    page, _ = (html_exporter or exporter(lang)).from_notebook_node(
        freeze_widgets(nb, lang), resources=resources
    )
    remote = remote_references(page)
    if remote:
        raise RuntimeError(f"{notebook.name}: the page would load from the network: {remote}")
    target = out / f"{notebook.stem}.html"
    target.write_text(page, encoding="utf-8")
    return target


# --- the index -------------------------------------------------------------------------

INDEX_CSS = """
body { font-family: system-ui, sans-serif; line-height: 1.5; color: #222;
       max-width: 46em; margin: 2em auto; padding: 0 1em; }
h1 { font-size: 1.6em; border-bottom: 3px solid #1976d2; padding-bottom: 0.3em; }
ul { list-style: none; padding: 0; }
li { margin: 1.1em 0; padding-left: 0.8em; border-left: 4px solid #e3e3e3; }
li a { font-size: 1.15em; font-weight: 600; color: #1565c0; text-decoration: none; }
li a:hover { text-decoration: underline; }
li p { margin: 0.2em 0 0; color: #444; }
code { font-family: monospace; background: #f2f2f2; padding: 0 0.2em; }
"""
_HEADING = re.compile(r"^#+\s+(.+)$", re.MULTILINE)


def notebook_summary(nb: nbformat.NotebookNode, fallback: str) -> tuple[str, str]:
    """A notebook's title (its first heading; else ``fallback``) and what it is about (the
    first paragraph of prose in its first Markdown cell, in one line). Both in Markdown."""
    text = next((cell.source for cell in nb.cells if cell.cell_type == "markdown"), "")
    heading = _HEADING.search(text)
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
    prose = [p for p in paragraphs if p and not p.startswith(("#", "-", "*", ">", "|"))]
    return (heading.group(1).strip() if heading else fallback), (prose or [""])[0]


def _inline_html(markdown: str) -> str:
    """Markdown's inline code, bold and italics as HTML: all that a title needs."""
    text = html.escape(markdown, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    return re.sub(r"\*(.+?)\*", r"<em>\1</em>", text)


INDEX_TEXT = {
    "en": {
        "title": "Handouts: Build a Transformer",
        "heading": "Build a Transformer, one notebook at a time: handouts",
        "intro": "Each page is a notebook with the outputs it had when it was saved. Widgets "
        "run only in JupyterLab; here each is a note followed by what it last showed.",
    },
    "zh_CN": {
        "title": "讲义：动手搭建Transformer",
        "heading": "动手搭建Transformer，一次一个笔记本：讲义",
        "intro": "每个页面是一个笔记本，带着它保存时的输出。交互控件只能在JupyterLab中运行；"
        "这里每个控件换成一段说明，后面是它最后显示的内容。",
    },
}


def build_index(
    pages: list[Path], summaries: list[tuple[str, str]], out: Path, lang: str = "en"
) -> Path:
    """``out/index.html``: each page's title as a link, its opening paragraph below it."""
    items = "\n".join(
        f'<li><a href="{html.escape(page.name)}">{_inline_html(title)}</a>'
        f"<p>{_inline_html(purpose)}</p></li>"
        for page, (title, purpose) in zip(pages, summaries)
    )
    words = INDEX_TEXT[lang]
    index = out / "index.html"
    index.write_text(
        f"<!DOCTYPE html>\n<html lang='{HTML_LANG[lang]}'><head><meta charset='utf-8'>\n"
        f"<title>{words['title']}</title>\n"
        f"<style>{INDEX_CSS}</style></head>\n<body>\n"
        f"<h1>{words['heading']}</h1>\n<p>{words['intro']}</p>\n"
        f"<ul>\n{items}\n</ul>\n</body></html>\n",
        encoding="utf-8",
    )
    return index


def build(notebooks: list[Path], out: Path, lang: str = "en") -> list[Path]:
    """Build one page per notebook, the MathJax copy and an index into ``out``, with the
    notes and the index in ``lang`` (en or zh_CN: the edition's language)."""
    out.mkdir(parents=True, exist_ok=True)
    copy_mathjax(out)
    html_exporter = exporter(lang)
    pages = [build_page(nb, out, html_exporter, lang) for nb in notebooks]
    summaries = [notebook_summary(nbformat.read(nb, as_version=4), nb.stem) for nb in notebooks]
    build_index(pages, summaries, out, lang)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path("notebooks"), help="notebook folder")
    parser.add_argument("--out", type=Path, default=Path("handouts"), help="output folder")
    parser.add_argument(
        "--lang", choices=sorted(NOTES), default="en", help="the edition's language"
    )
    parser.add_argument("notebooks", nargs="*", type=Path, help="only these notebooks")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted(args.src.glob("*.ipynb"))
    if not notebooks:
        print(f"No notebooks in {args.src}/", file=sys.stderr)
        return 1
    for page in build(notebooks, args.out, args.lang):
        print(f"wrote {page}")
    print(f"Open {args.out / 'index.html'} in a browser (keep {args.out}/ together).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
