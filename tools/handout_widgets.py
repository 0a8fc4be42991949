"""Widgets for the handouts (tools/make_handouts.py): a static note instead of each one.

A widget cannot run in a static page. Its output is replaced by a short note that names
its controls and their values, followed by what its Output widgets showed when the
notebook was saved, all read from the widget state stored in the notebook. A progress
bar (tqdm's) becomes a static bar with its last text. The note says that a picture
follows only when one does: the output after a progress bar is another output.
"""

from __future__ import annotations

import copy
import html
import re
from dataclasses import dataclass, field

import nbformat

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@dataclass
class WidgetContent:
    """What a widget and its children hold, read from the stored widget state."""

    controls: list[str] = field(default_factory=list)  # "name = value"
    outputs: list[dict] = field(default_factory=list)  # what its Output widgets showed
    texts: list[str] = field(default_factory=list)  # HTML and Label values, tags removed
    bars: list[tuple[float, float]] = field(default_factory=list)  # progress (value, max)
    seen: set[str] = field(default_factory=set)


def _widget_ids(value) -> list[str]:
    """Model ids referenced as "IPY_MODEL_<id>" anywhere inside a widget's state."""
    if isinstance(value, str):
        return [value[len("IPY_MODEL_") :]] if value.startswith("IPY_MODEL_") else []
    if isinstance(value, list):
        return [i for item in value for i in _widget_ids(item)]
    return []


def _value(model: dict) -> str:
    """A control's value as a reader would name it: a dropdown's label, text in quotes."""
    if "_options_labels" in model and isinstance(model.get("index"), int):
        return model["_options_labels"][model["index"]]
    value = model.get("value")
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    return f"\u201c{value}\u201d" if isinstance(value, str) else str(value)


def walk_widget(model_id: str, state: dict, found: WidgetContent | None = None) -> WidgetContent:
    """Everything a widget and its children hold (see :class:`WidgetContent`)."""
    found = found or WidgetContent()
    if model_id not in state or model_id in found.seen:
        return found
    found.seen.add(model_id)
    kind, model = state[model_id].get("model_name", ""), state[model_id].get("state", {})
    name = str(model.get("description", "")).strip().rstrip(":")  # "English:" -> "English"
    if kind == "OutputModel":
        found.outputs.extend(model.get("outputs", []))
    elif kind.endswith("ProgressModel"):
        found.bars.append((model.get("value", 0), model.get("max", 100)))
    elif kind in ("HTMLModel", "LabelModel") and model.get("value"):
        text = html.unescape(re.sub(r"<[^>]*>", "", model["value"]))
        found.texts.append(" ".join(text.split()))
    elif name and ("value" in model or "index" in model):
        found.controls.append(f"{name} = {_value(model)}")
    for child in _widget_ids(model.get("children", [])):
        walk_widget(child, state, found)
    return found


# The notes in each edition's language (tools/make_handouts.py --lang)
NOTES = {
    "en": {
        "bar": "<b>Progress bar</b>, as it stood when the notebook was saved: ",
        "widget": "<b>Interactive widget</b>{settings}. It runs only in JupyterLab: open the "
        "notebook there to use it.",
        "settings": " ({controls})",
        "picture": " Below is what it showed when the notebook was saved.",
        "text": " When the notebook was saved it read: {texts}",
    },
    "zh_CN": {
        "bar": "<b>进度条</b>，保存笔记本时的样子：",
        "widget": "<b>交互控件</b>{settings}。它只能在JupyterLab中运行：请在JupyterLab中"
        "打开这个笔记本来使用它。",
        "settings": "（{controls}）",
        "picture": "下面是保存笔记本时它显示的内容。",
        "text": "保存笔记本时它显示的是：{texts}",
    },
}


def note(found: WidgetContent, lang: str = "en") -> dict:
    """The display output that stands for a widget in a static page, in ``lang``."""
    words = NOTES[lang]
    texts = html.escape(" ".join(found.texts))
    if found.bars and not found.outputs:
        value, top = found.bars[0]
        text = words["bar"] + f'<progress value="{value:g}" max="{top:g}"></progress> {texts}'
    else:
        controls = html.escape(", ".join(found.controls))
        settings = words["settings"].format(controls=controls) if found.controls else ""
        text = words["widget"].format(settings=settings)
        if found.outputs:
            text += words["picture"]
        elif texts:
            text += words["text"].format(texts=texts)
    page = f'<p class="handout-widget-note">{text.strip()}</p>'
    return nbformat.v4.new_output("display_data", data={"text/html": page})


def freeze_widgets(nb: nbformat.NotebookNode, lang: str = "en") -> nbformat.NotebookNode:
    """A copy of ``nb`` whose widget outputs are a note (in ``lang``, a key of
    :data:`NOTES`) plus the widget's stored outputs."""
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
            found = walk_widget(view.get("model_id", ""), stored)
            outputs.append(note(found, lang))
            outputs.extend(nbformat.from_dict(o) for o in found.outputs)
        cell.outputs = outputs
    return nb
