"""Build the handouts: one static HTML page per notebook that opens offline from disk.

Usage: python tools/make_handouts.py [--src notebooks] [--out handouts] [NOTEBOOK ...]

Each page is made from the notebook's stored outputs (nothing is executed) with
nbconvert's JupyterLab template. Figures are embedded as data URIs. Formulas are
typeset in the browser by a copy of MathJax 2.7 (from the `jupyter-server-mathjax`
package) written to ``<out>/mathjax/``, so keep the folder together when you copy it.
The page loads nothing from the network: require.js, the widget manager and
mermaid.js, which the stock template fetches from CDNs, are left out.

Widgets cannot run in a static page. Each widget is replaced by a short note that
names its controls and their values, followed by the picture it showed when the
notebook was saved (taken from the widget state stored in the notebook).

The build fails if a page would still reference a remote script, style sheet, font
or image; ``remote_references`` is the check, and the tests use it too.
"""

from __future__ import annotations

import argparse
import copy
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

MATHJAX_DIR = "mathjax"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

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


# --- widgets -> static note and picture ------------------------------------------------


def _widget_ids(value) -> list[str]:
    """Model ids referenced as "IPY_MODEL_<id>" anywhere inside a widget's state."""
    if isinstance(value, str):
        return [value[len("IPY_MODEL_") :]] if value.startswith("IPY_MODEL_") else []
    if isinstance(value, list):
        return [i for item in value for i in _widget_ids(item)]
    return []


def _walk_widget(model_id: str, state: dict, seen: set[str]) -> tuple[list[str], list[dict]]:
    """The controls ("name = value") and the stored outputs of a widget and its children."""
    if model_id in seen or model_id not in state:
        return [], []
    seen.add(model_id)
    model = state[model_id].get("state", {})
    controls, outputs = [], []
    if "description" in model and "value" in model and model["description"]:
        controls.append(f"{model['description']} = {model['value']}")
    if state[model_id].get("model_name") == "OutputModel":
        outputs.extend(model.get("outputs", []))
    for child in _widget_ids(model.get("children", [])):
        more_controls, more_outputs = _walk_widget(child, state, seen)
        controls += more_controls
        outputs += more_outputs
    return controls, outputs


def _note(controls: list[str]) -> dict:
    settings = f" ({html.escape(', '.join(controls))})" if controls else ""
    text = (
        f'<p class="handout-widget-note"><b>Interactive widget</b>{settings}. It runs only '
        "in JupyterLab: open the notebook there to use it. Below is what it showed when "
        "the notebook was saved.</p>"
    )
    return nbformat.v4.new_output("display_data", data={"text/html": text})


def freeze_widgets(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose widget outputs are a note plus the widget's stored outputs."""
    nb = copy.deepcopy(nb)
    stored = nb.metadata.pop("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is None:
                outputs.append(output)
                continue
            controls, shown = _walk_widget(view.get("model_id", ""), stored, set())
            outputs.append(_note(controls))
            outputs.extend(nbformat.from_dict(o) for o in shown)
        cell.outputs = outputs
    return nb


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


def exporter() -> HTMLExporter:
    return HTMLExporter(
        template_name="lab",
        extra_loaders=[DictLoader({"handout.html.j2": TEMPLATE})],
        template_file="handout.html.j2",
        embed_images=True,  # markdown images become data URIs too
    )


def build_page(notebook: Path, out: Path, html_exporter: HTMLExporter | None = None) -> Path:
    """Write ``out/<notebook>.html`` from the notebook's stored outputs; return its path."""
    nb = freeze_widgets(nbformat.read(notebook, as_version=4))
    resources = {
        "metadata": {"name": notebook.stem, "path": str(notebook.parent)},
        "handout_mathjax_url": f"{MATHJAX_DIR}/MathJax.js?config={MATHJAX_CONFIG}",
    }
    page, _ = (html_exporter or exporter()).from_notebook_node(nb, resources=resources)
    remote = remote_references(page)
    if remote:
        raise RuntimeError(f"{notebook.name}: the page would load from the network: {remote}")
    target = out / f"{notebook.stem}.html"
    target.write_text(page, encoding="utf-8")
    return target


def build_index(pages: list[Path], out: Path) -> Path:
    items = "\n".join(
        f'<li><a href="{html.escape(p.name)}">{html.escape(p.stem)}</a></li>' for p in pages
    )
    index = out / "index.html"
    index.write_text(
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<title>Handouts: Build a Transformer</title></head>\n<body>\n"
        "<h1>Build a Transformer, one notebook at a time: handouts</h1>\n"
        f"<ol>\n{items}\n</ol>\n</body></html>\n",
        encoding="utf-8",
    )
    return index


def build(notebooks: list[Path], out: Path) -> list[Path]:
    """Build one page per notebook, the MathJax copy and an index into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    copy_mathjax(out)
    html_exporter = exporter()
    pages = [build_page(nb, out, html_exporter) for nb in notebooks]
    build_index(pages, out)
    return pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path("notebooks"), help="notebook folder")
    parser.add_argument("--out", type=Path, default=Path("handouts"), help="output folder")
    parser.add_argument("notebooks", nargs="*", type=Path, help="only these notebooks")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted(args.src.glob("*.ipynb"))
    if not notebooks:
        print(f"No notebooks in {args.src}/", file=sys.stderr)
        return 1
    for page in build(notebooks, args.out):
        print(f"wrote {page}")
    print(f"Open {args.out / 'index.html'} in a browser (keep {args.out}/ together).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
