"""The three families of models built from the paper's blocks, side by side (notebook 10).

Each family is one of the course's models; they share the embeddings, the positions, the
attention and the layers (``model.layers``), and differ in which stacks they keep, in the
mask their self-attention reads under, and in what they are trained to predict.
:func:`families_table` prints it in the course's language.
"""

from __future__ import annotations

from dataclasses import dataclass

from transformer_lib.i18n import N_, _, display_width

__all__ = ["Family", "FAMILIES", "families_table"]


@dataclass(frozen=True)
class Family:
    """One family: its name, the course's model of it, the mask its self-attention reads
    under, what it is trained to predict, what it is for, and well-known models of it."""

    name: str
    model: str
    mask: str
    objective: str
    use: str
    examples: str


FAMILIES = (
    Family(
        N_("encoder-decoder"),
        "Transformer (07)",
        N_("source: padding only; target: causal and padding, plus cross-attention"),
        N_("the next target token, given the whole source"),
        N_("turning one text into another: translation, summaries"),
        N_("the paper's model; BART and T5, pretrained by denoising"),
    ),
    Family(
        N_("decoder-only"),
        "LanguageModel (09)",
        N_("causal and padding: each position reads itself and what came before"),
        N_("the next token"),
        N_("writing text left to right; any task posed as a continuation"),
        "GPT, GPT-2",
    ),
    Family(
        N_("encoder-only"),
        "EncoderOnlyModel (10)",
        N_("padding only: each position reads every real token, both directions"),
        N_("the tokens hidden behind <mask> (15 % of them)"),
        N_("reading a given text: a label for a sentence or for each token; it does not write"),
        "BERT",
    ),
)


def families_table() -> str:
    """The three families as lines of "field: value", one block per family."""
    fields = (
        (N_("model in the course"), "model"),
        (N_("self-attention mask"), "mask"),
        (N_("trained to predict"), "objective"),
        (N_("used for"), "use"),
        (N_("examples"), "examples"),
    )
    width = max(display_width(_(label)) for label, _field in fields)
    blocks = []
    for family in FAMILIES:
        lines = [_(family.name)]
        for label, field in fields:
            text = _(label)
            padding = " " * (width - display_width(text))
            lines.append(f"  {text}{padding}  {_(getattr(family, field))}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
