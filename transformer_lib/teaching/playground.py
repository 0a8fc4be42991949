"""The translation playground of notebook 07: type English, see German and the attention.

Two halves, like :mod:`transformer_lib.teaching.widgets`: :func:`draw_translation` translates one
sentence, draws the cross-attention into a given Axes and returns the text to show (tests
call it without a browser); :func:`translation_playground` wires it to ipywidgets. Words
the model has never seen are not an error: they are read as ``<unk>``, marked with ``?``
on the plot, and listed in a warning line.

The corpus is truecased (``data/README.md``): English is lower-case except "I", so a typed
"The" would be unknown: :func:`truecase` first writes each word as the vocabulary does.

Shapes: T output length, S source length, H heads.
"""

from __future__ import annotations

import ipywidgets as widgets
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from torch import nn

from transformer_lib._checks import check_int, fail
from transformer_lib.data import detokenize, tokenize
from transformer_lib.data.vocab import Vocab
from transformer_lib.i18n import N_, _
from transformer_lib.inference.translate import translate_detailed
from transformer_lib.model.contract import check_model
from transformer_lib.teaching import viz
from transformer_lib.teaching.widgets._common import LABEL_STYLE, Panel, live_output, shown

__all__ = ["draw_translation", "translation_playground", "truecase"]

EXAMPLE = "the small dog sees the cat."
CASE_NOTE = N_(
    "Capitals are read as the corpus writes them: it is lower-case except for "
    "“I”, so “The” is read as “the”."
)


def truecase(words: list[str], vocab: Vocab) -> list[str]:
    """Each word as the vocabulary writes it: as typed, lower-case, or capitalised ("i" ->
    "I"), the first of these the vocabulary holds; a word it holds in no form is kept."""
    cased = []
    for word in words:
        forms = (word, word.lower(), word.capitalize())
        cased.append(next((form for form in forms if form in vocab), word))
    return cased


def draw_translation(
    ax: Axes | None,
    text: str,
    model: nn.Module,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    method: str = "greedy",
    layer: int = -1,
    beam_size: int = 4,
) -> str:
    """Translate ``text`` and draw layer ``layer``'s cross-attention (mean of the heads).

    Rows are the German tokens as they are produced, columns the English tokens the model
    read (after :func:`truecase`); an unknown word shows as ``word?`` and the returned text
    warns about it. Returns the lines to print. ``ax=None`` skips the drawing.
    """
    if not isinstance(text, str):
        fail("text", "a str", type(text).__name__, error=TypeError)
    check_int("layer", layer)
    typed = tokenize(text)
    words = truecase(typed, src_vocab)
    if not words:
        _message(ax, _("Type an English sentence."))
        return _("Type an English sentence, e.g. {example}").format(example=repr(EXAMPLE))
    check_model("model", model)
    if len(words) > model.max_len:
        _message(ax, _("Sentence too long"))
        return _(
            "⚠ {count} tokens: this model reads at most {max_len}. Try a shorter sentence."
        ).format(count=len(words), max_len=model.max_len)
    (result,) = translate_detailed(
        model,
        [" ".join(words)],  # tokenize splits this into `words` again
        src_vocab,
        tgt_vocab,
        method=method,
        beam_size=beam_size,
        attention=True,
    )
    n_layers = result.cross_attention.size(0)
    if not -n_layers <= layer < n_layers:
        fail("layer", "a layer index in [{low}, {n_layers})", repr(layer), low=-n_layers,
             n_layers=n_layers)  # fmt: skip
    lines = [_("German: {text}").format(text=result.text)]
    if words != typed:
        lines.insert(0, _("read as: {sentence}").format(sentence=detokenize(words)))
    if result.unknown:
        warning = _(
            "⚠ not in the vocabulary, read as <unk>: {words}. "
            "The model has never seen these words, so it cannot translate them."
        )
        lines.append(warning.format(words=", ".join(map(repr, result.unknown))))  # quoted, as typed
    if ax is not None:
        weights = result.cross_attention[layer].mean(dim=0)  # (H, T, S) -> (T, S)
        src_labels = [w if w in src_vocab else f"{w}?" for w in words]
        title = _("cross-attention, layer {layer} of {n_layers} (mean of heads)").format(
            layer=layer % n_layers + 1, n_layers=n_layers
        )
        viz.plot_attention(weights, result.tgt_tokens, src_labels, ax=ax, title=title)
        ax.set_xlabel(_("English token (key, attended to)"))
        ax.set_ylabel(_("German token being produced (query)"))
    return "\n".join(lines)


def _message(ax: Axes | None, text: str) -> None:
    if ax is not None:
        ax.set_axis_off()
        ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=14, transform=ax.transAxes)


def translation_playground(
    model: nn.Module, src_vocab: Vocab, tgt_vocab: Vocab, text: str = EXAMPLE
) -> Panel:
    """A text box (press Enter to translate), a search toggle and a layer picker above the
    translation and its cross-attention map; a line under the text box says how capitals
    are read (see :func:`truecase`). The box carries ``.controls`` and the last
    ``.figure``; it works with the plain inline backend."""
    check_model("model", model)
    n_layers = model.config.n_decoder_layers
    controls = {
        "text": widgets.Text(
            value=text,
            description=_("English:"),
            continuous_update=False,
            layout=widgets.Layout(width="60%"),
            style=LABEL_STYLE,
        ),
        "method": widgets.ToggleButtons(
            options=[(_("greedy"), "greedy"), (_("beam"), "beam")],
            description=_("search:"),
            style=LABEL_STYLE,
        ),
        "layer": widgets.Dropdown(
            options=[(_("layer {number}").format(number=k + 1), k) for k in range(n_layers)],
            value=n_layers - 1,
            description=_("attention:"),
            style=LABEL_STYLE,
        ),
    }
    box = Panel(_("translation playground: type an English sentence"))

    def show(text: str, method: str, layer: int) -> tuple[dict, ...]:
        figure = Figure(figsize=(7, 5.5), layout="constrained")
        said = draw_translation(
            figure.add_subplot(), text, model, src_vocab, tgt_vocab, method, layer
        )
        box.figure = figure
        return shown(said, figure)

    out = live_output(show, controls)
    row = widgets.HBox([controls["method"], controls["layer"]])
    box.children = [controls["text"], widgets.Label(_(CASE_NOTE)), row, out]
    box.controls = controls
    return box
