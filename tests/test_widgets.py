"""widgets: the draw functions react to their parameters; the builders wire real controls."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import ipywidgets  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from transformer_lib.model.embeddings import sinusoidal_positional_encoding  # noqa: E402
from transformer_lib.teaching import widgets  # noqa: E402
from transformer_lib.teaching.widgets import _common  # noqa: E402

TOKENS = ["the", "cat", "sat", "down"]


def _figure() -> Figure:
    return Figure(figsize=(8, 4))


def _controls(box) -> dict[str, ipywidgets.Widget]:
    """Every control in the box, by description."""
    found, stack = {}, [box]
    while stack:
        widget = stack.pop()
        stack.extend(getattr(widget, "children", ()))
        if isinstance(widget, ipywidgets.ValueWidget):
            found[widget.description] = widget
    return found


# -- PE explorer (02) -----------------------------------------------------------------------


def test_pe_explorer_draws_table_curves_and_the_chosen_vector():
    heat, curves, vector = widgets.draw_pe_explorer(_figure(), 16, position=5, dims=[0, 1, 6])
    table = sinusoidal_positional_encoding(100, 16)
    assert heat.images[0].get_array().shape == (100, 16)
    labels = [line.get_label() for line in curves.lines[:3]]
    assert labels == ["column 0 (pair 0, sin)", "column 1 (pair 0, cos)", "column 6 (pair 3, sin)"]
    assert vector.get_xlabel() == "column (2i: sin, 2i + 1: cos)"  # i is the pair index
    heights = [bar.get_height() for bar in vector.patches]
    np.testing.assert_allclose(heights, table[5].numpy(), rtol=1e-6)


def test_pe_explorer_changes_with_position_and_width():
    *_, at_5 = widgets.draw_pe_explorer(_figure(), 16, position=5, dims=[0])
    *_, at_9 = widgets.draw_pe_explorer(_figure(), 16, position=9, dims=[0])
    assert [b.get_height() for b in at_5.patches] != [b.get_height() for b in at_9.patches]
    heat, *_ = widgets.draw_pe_explorer(_figure(), 32, position=5, dims=[0])
    assert heat.images[0].get_array().shape == (100, 32)
    with pytest.raises(ValueError, match="`position` must be an int < max_len=100"):
        widgets.draw_pe_explorer(_figure(), 16, position=100, dims=[0])


def test_pe_explorer_widget_has_its_sliders_and_redraws():
    box = widgets.pe_explorer_widget(d_model=32)
    assert isinstance(box, ipywidgets.VBox)
    assert any(isinstance(child, ipywidgets.Output) for child in box.children)
    controls = _controls(box)
    assert {"d_model", "position", "dimension pair a", "dimension pair b"} <= set(controls)
    first = box.figure
    controls["position"].value = 40
    assert box.figure is not first
    assert box.figure.axes[2].get_title() == "the vector PE[40]"
    controls["d_model"].value = 16  # the dimension sliders follow the new width
    assert controls["dimension pair b"].max == 14 and controls["dimension pair b"].value <= 14


# -- attention temperature (03) -------------------------------------------------------------


def test_attention_temperature_sharpens_and_flattens():
    scores = torch.randn(4, 4, generator=torch.Generator().manual_seed(0)) * 4
    sharp = widgets.draw_attention_temperature(_figure().add_subplot(), scores, 0.5, TOKENS, TOKENS)
    flat = widgets.draw_attention_temperature(_figure().add_subplot(), scores, 50.0)
    assert sharp.max(-1).values.mean() > flat.max(-1).values.mean()
    torch.testing.assert_close(flat.sum(-1), torch.ones(4))
    ax = _figure().add_subplot()
    weights = widgets.draw_attention_temperature(ax, scores, 2.0, TOKENS, TOKENS)
    np.testing.assert_allclose(ax.images[0].get_array(), weights.numpy(), rtol=1e-6)
    assert "temperature 2" in ax.get_title()
    with pytest.raises(ValueError, match="`temperature` must be a number > 0"):
        widgets.draw_attention_temperature(ax, scores, 0.0)


def test_attention_temperature_widget_redraws_on_the_slider():
    box = widgets.attention_temperature_widget(d_k=16)
    slider = _controls(box)["temperature"]
    assert slider.value == pytest.approx(4.0)  # √d_k: the paper's scaling
    before = box.figure.axes[0].images[0].get_array().copy()
    slider.value = 0.5
    after = box.figure.axes[0].images[0].get_array()
    assert after.max(axis=1).mean() > before.max(axis=1).mean()


def test_attention_temperature_widget_takes_given_scores_and_tokens():
    box = widgets.attention_temperature_widget(torch.zeros(2, 3), ["a", "b"], ["x", "y", "z"])
    ax = box.figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y", "z"]
    np.testing.assert_allclose(ax.images[0].get_array(), 1 / 3, rtol=1e-6)


# -- mask builder (04) ----------------------------------------------------------------------


def test_mask_builder_combines_padding_and_causal():
    both = widgets.draw_mask_builder(_figure(), [3, 2], causal=True, pad=True)
    assert both.shape == (2, 3, 3) and both.dtype == torch.bool
    assert both[1].tolist() == [[True, False, False], [True, True, False], [True, True, False]]
    pad_only = widgets.draw_mask_builder(_figure(), [3, 2], causal=False, pad=True)
    assert pad_only[1].tolist() == [[True, True, False]] * 3
    causal_only = widgets.draw_mask_builder(_figure(), [3, 2], causal=True, pad=False)
    assert torch.equal(causal_only[1], torch.tril(torch.ones(3, 3, dtype=torch.bool)))
    assert widgets.draw_mask_builder(_figure(), [2], causal=False, pad=False).all()


def test_mask_builder_draws_one_panel_per_sequence_with_pad_labels():
    fig = _figure()
    masks = widgets.draw_mask_builder(fig, [3, 1, 2])
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 3
    assert [t.get_text() for t in panels[1].get_xticklabels()] == ["t0", "<pad>", "<pad>"]
    assert panels[1].images[0].get_array().tolist() == masks[1].float().tolist()
    with pytest.raises(TypeError, match="`lengths` must be an int"):
        widgets.draw_mask_builder(_figure(), [2.5])


def test_mask_builder_widget_has_checkboxes_and_length_sliders():
    box = widgets.mask_builder_widget(lengths=(4, 2))
    controls = _controls(box)
    assert {"padding mask", "causal mask", "length of sequence 0", "length of sequence 1"} <= set(
        controls
    )
    panel = box.figure.axes[0]
    assert "padding AND causal" in panel.get_title()
    controls["causal mask"].value = False
    assert "causal" not in box.figure.axes[0].get_title()
    controls["length of sequence 1"].value = 4
    assert box.figure.axes[1].images[0].get_array().all()


# -- head picker (05) -----------------------------------------------------------------------


@pytest.mark.parametrize("n_heads", [1, 3, 8])
def test_head_picker_draws_the_chosen_head_of_any_count(n_heads):
    weights = torch.softmax(torch.randn(1, n_heads, 4, 4), dim=-1)
    ax = _figure().add_subplot()
    drawn = widgets.draw_head_picker(ax, weights, n_heads - 1, TOKENS, TOKENS)
    torch.testing.assert_close(drawn, weights[0, -1])
    np.testing.assert_allclose(ax.images[0].get_array(), weights[0, -1].numpy(), rtol=1e-6)
    assert ax.get_title() == f"head {n_heads - 1} of {n_heads}"
    with pytest.raises(ValueError, match=f"`head` must be an int < n_heads={n_heads}"):
        widgets.draw_head_picker(ax, weights, n_heads)


def test_head_picker_widget_switches_heads_and_layers():
    layers = [torch.softmax(torch.randn(1, 2, 3, 5), dim=-1) for _ in range(3)]
    box = widgets.head_picker_widget(layers, TOKENS[:3], ["a", "b", "c", "d", "e"])
    controls = _controls(box)
    assert controls["head"].max == 1 and controls["layer"].max == 2
    controls["layer"].value, controls["head"].value = 2, 1
    np.testing.assert_allclose(box.figure.axes[0].images[0].get_array(), layers[2][0, 1].numpy())
    single = widgets.head_picker_widget(layers[0][0])
    assert "layer" not in _controls(single)


# -- every widget ---------------------------------------------------------------------------

ALL_WIDGETS = {
    "positional-encoding explorer": lambda: widgets.pe_explorer_widget(d_model=16),
    "attention temperature slider": lambda: widgets.attention_temperature_widget(d_k=4),
    "mask builder": lambda: widgets.mask_builder_widget(lengths=(2, 3)),
    "head picker": lambda: widgets.head_picker_widget(torch.ones(2, 2, 2) / 2),
}


@pytest.mark.parametrize("name", ALL_WIDGETS)
def test_every_label_is_shown_whole(name):
    for description, control in _controls(ALL_WIDGETS[name]()).items():
        if isinstance(control, ipywidgets.Checkbox):  # label beside the box, no 80 px indent
            assert control.indent is False, description
        else:  # the default cuts labels to 80 px ("temperat…")
            assert control.style.description_width == "initial", description


@pytest.mark.parametrize("name", ALL_WIDGETS)
def test_the_plain_text_form_names_the_widget(name):
    # What a notebook shows before it runs: ipywidgets puts repr() in text/plain.
    bundle = ALL_WIDGETS[name]()._repr_mimebundle_()
    text = bundle["text/plain"]
    assert text.startswith(f"Interactive widget ({name}") and "run the cell" in text
    assert text.endswith(".") and len(text) <= 110  # ipywidgets cuts it at 110 characters
    assert "application/vnd.jupyter.widget-view+json" in bundle


# -- what every panel shares ----------------------------------------------------------------


def test_a_panel_shows_its_figure_and_an_error_on_a_change_in_its_place():
    """The Output's contents are set, not captured (see _common.live_output); a control moved
    to a value the drawing refuses shows the error where the figure was, not a traceback
    in the server's log."""

    def render(n: int) -> Figure:
        if n > 3:
            raise ValueError(f"`n` must be <= 3; got {n}")
        return _figure()

    size = ipywidgets.IntSlider(value=2, min=0, max=5)
    box = _common.panel("test", render, {"n": size})
    out = next(child for child in box.children if isinstance(child, ipywidgets.Output))
    (shown,) = out.outputs
    assert shown["output_type"] == "display_data" and "text/plain" in shown["data"]
    size.value = 5
    assert out.outputs == (
        {
            "output_type": "stream",
            "name": "stderr",
            "text": "ValueError: `n` must be <= 3; got 5\n",
        },
    )
    size.value = 1
    assert out.outputs[0]["output_type"] == "display_data"
