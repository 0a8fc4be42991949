"""10: fill in the blank, the masked-token model's own task: a sentence with ``<mask>`` in it,
and the tokens the model puts there with their probabilities."""

from __future__ import annotations

import ipywidgets as widgets
import torch
from matplotlib.figure import Figure

from transformer_lib._checks import check_int, fail
from transformer_lib.data.text import tokenize
from transformer_lib.data.vocab import MASK, UNK, Vocab
from transformer_lib.i18n import _
from transformer_lib.model.contract import eval_no_grad
from transformer_lib.model.encoder_only import EncoderOnlyModel
from transformer_lib.teaching.widgets._common import LABEL_STYLE, Panel, panel

__all__ = ["fill_mask", "draw_fill_mask", "fill_mask_widget"]


def _ids(sentence: object, vocab: Vocab) -> list[int]:
    """The sentence's ids, each ``<mask>`` in its text one ``<mask>`` token."""
    if not isinstance(sentence, str) or MASK not in sentence:
        fail("sentence", "a sentence with {mask} in it", repr(sentence)[:80],
             "For example: the {mask} sleeps.", mask=MASK)  # fmt: skip
    ids = []
    for k, part in enumerate(sentence.split(MASK)):
        if k:
            ids.append(vocab[MASK])
        ids += vocab.encode(tokenize(part))
    return ids


def fill_mask(
    model: EncoderOnlyModel, vocab: Vocab, sentence: str, k: int = 5
) -> list[list[tuple[str, float]]]:
    """For each ``<mask>`` of ``sentence``, left to right: the ``k`` likeliest tokens and
    their probabilities (the softmax of the model's logits at that position; specials are
    never proposed). Words the vocabulary lacks read as ``<unk>``."""
    if not isinstance(model, EncoderOnlyModel):
        fail("model", "a transformer_lib.EncoderOnlyModel", type(model).__name__, error=TypeError)
    check_int("k", k, minimum=1)
    ids = _ids(sentence, vocab)
    tokens = torch.tensor([ids], device=next(model.parameters()).device)  # (1, L)
    with eval_no_grad(model):
        logits = model(tokens)[0].float().cpu()  # (1, L, V) -> (L, V)
    words = [i for i, token in enumerate(vocab.tokens) if not token.startswith("<")]
    blanks = []
    for position in (tokens[0] == vocab[MASK]).nonzero().flatten().tolist():
        p = torch.softmax(logits[position, words], dim=-1)  # over the real tokens
        top = p.topk(min(k, len(words)))
        blanks.append([(vocab.tokens[words[i]], float(q)) for q, i in zip(*top, strict=True)])
    return blanks


def draw_fill_mask(fig: Figure, model: EncoderOnlyModel, vocab: Vocab, sentence: str,
                   k: int = 5) -> list[list[tuple[str, float]]]:  # fmt: skip
    """One bar chart per ``<mask>``: the ``k`` likeliest tokens (:func:`fill_mask`)."""
    blanks = fill_mask(model, vocab, sentence, k)
    fig.clear()
    axes = fig.subplots(1, len(blanks), squeeze=False).ravel()
    unknown = [w for w in tokenize(sentence.replace(MASK, " ")) if vocab[w] == vocab[UNK]]
    for n, (ax, top) in enumerate(zip(axes, blanks, strict=True), start=1):
        names, probabilities = zip(*top, strict=True)
        ax.barh(range(len(top))[::-1], probabilities, color="tab:blue")
        ax.set_yticks(range(len(top))[::-1], names)
        ax.set_xlim(0, 1)
        ax.set_xlabel("p")
        ax.set_title(f"{MASK} {n}")
    if unknown:
        fig.suptitle(f"{UNK}: {' '.join(unknown)}")
    return blanks


def fill_mask_widget(model: EncoderOnlyModel, vocab: Vocab, sentence: str, k: int = 5) -> Panel:
    """A text box for a sentence with ``<mask>`` in it, and the model's top ``k`` tokens
    for each blank, redrawn when the text is submitted (Enter)."""
    _ids(sentence, vocab)  # the first sentence is checked here, not in the widget
    controls = {
        "sentence": widgets.Text(
            value=sentence,
            description=_("sentence"),
            continuous_update=False,
            style=LABEL_STYLE,
            layout=widgets.Layout(width="95%"),
        )
    }

    def render(sentence: str) -> Figure:
        fig = Figure(figsize=(7, 2.6), layout="constrained")
        draw_fill_mask(fig, model, vocab, sentence, k)
        return fig

    return panel(_("fill-in-the-blank box"), render, controls)
