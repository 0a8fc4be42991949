"""viz: every plot labels its axes, returns its Axes and never saves or shows."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from transformer_lib.model.config import TransformerConfig  # noqa: E402
from transformer_lib.model.embeddings import sinusoidal_positional_encoding  # noqa: E402
from transformer_lib.model.masks import causal_mask, padding_mask  # noqa: E402
from transformer_lib.teaching import viz  # noqa: E402

QUERY = ["ich", "sehe", "den", "Hund"]
KEYS = ["I", "see", "the", "dog", "<eos>"]


@pytest.fixture(autouse=True)
def _no_save_or_show(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("viz must never save or show a figure")

    monkeypatch.setattr(Figure, "savefig", refuse)
    monkeypatch.setattr(plt, "show", refuse)
    yield
    plt.close("all")


def _ticks(labels) -> list[str]:
    return [label.get_text() for label in labels]


def _weights(*shape):
    return torch.softmax(torch.randn(*shape), dim=-1)


PUBLIC_NAMES = [
    "TITLE_SIZE",
    "LABEL_SIZE",
    "TICK_SIZE",
    "MASK_CMAP",
    "plot_heatmap",
    "show_heatmaps",
    "plot_attention",
    "plot_attention_heads",
    "plot_mask",
    "plot_alignment",
    "plot_positional_encoding",
    "plot_pe_curves",
    "plot_architecture",
    "plot_loss_curve",
    "plot_lr_schedule",
    "plot_seed_spread",
]


def test_the_package_keeps_every_public_name_of_the_old_module():
    assert sorted(viz.__all__) == sorted(PUBLIC_NAMES)
    for name in PUBLIC_NAMES:
        assert getattr(viz, name) is not None


def test_plot_attention_puts_keys_on_x_and_queries_on_y_with_a_colour_bar():
    ax = viz.plot_attention(_weights(4, 5), QUERY, KEYS, title="cross-attention")
    assert isinstance(ax, Axes)
    assert _ticks(ax.get_xticklabels()) == KEYS and _ticks(ax.get_yticklabels()) == QUERY
    assert "key" in ax.get_xlabel() and "query" in ax.get_ylabel()
    assert ax.get_title() == "cross-attention"
    assert len(ax.figure.axes) == 2  # the heatmap and its colour bar
    np.testing.assert_allclose(ax.images[0].get_array().sum(axis=1), 1.0, rtol=1e-6)


def test_plot_attention_draws_into_a_given_axes_and_drops_batch_and_head_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert viz.plot_attention(_weights(1, 1, 4, 5), QUERY, KEYS, ax=ax) is ax
    assert ax.images[0].get_array().shape == (4, 5)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: viz.plot_attention(_weights(2, 4, 5), QUERY, KEYS), r"`weights` must be a 2-D"),
        (lambda: viz.plot_attention(_weights(4, 5), KEYS, QUERY), r"`x_labels` must be 5 labels"),
        (lambda: viz.plot_pe_curves(torch.zeros(10, 4), [4]), r"`dims` must be column indices"),
        (lambda: viz.plot_alignment(_weights(2, 2), [(0, 2)], "ab", "cd"), r"`gold` must be"),
        (lambda: viz.show_heatmaps(torch.zeros(2, 2, 2, 3, 3)), r"`matrices` must be"),
    ],
)
def test_bad_input_raises_the_house_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("n_heads", [1, 3, 6])
def test_plot_attention_heads_draws_any_number_of_heads(n_heads):
    axes = viz.plot_attention_heads(_weights(n_heads, 4, 5), QUERY, KEYS, title="heads")
    drawn = [ax for ax in axes.ravel() if ax.images]
    assert len(drawn) == n_heads
    assert [ax.get_title() for ax in drawn] == [f"head {h}" for h in range(n_heads)]
    assert _ticks(drawn[0].get_xticklabels()) == KEYS
    assert drawn[0].figure._suptitle.get_text() == "heads"


def test_show_heatmaps_takes_any_grid_with_one_colour_scale():
    axes = viz.show_heatmaps(torch.rand(2, 3, 4, 4), titles=[f"m{i}" for i in range(6)])
    assert axes.shape == (2, 3)
    limits = {ax.images[0].get_clim() for ax in axes.ravel()}
    assert len(limits) == 1
    assert axes[1, 2].get_title() == "m5" and axes[1, 0].get_xlabel() == "key"
    ragged = viz.show_heatmaps([[torch.eye(3)], [torch.eye(3), torch.ones(3, 3)]])
    assert ragged.shape == (2, 2) and not ragged[0, 1].axison


def test_plot_heatmap_annotates_values_when_asked():
    ax = viz.plot_heatmap(torch.tensor([[0.25, 0.75]]), annotate=True, colorbar=False)
    assert [t.get_text() for t in ax.texts] == ["0.25", "0.75"]
    assert len(ax.figure.axes) == 1


def test_plot_mask_shows_true_as_may_attend_and_broadcasts_padding_masks():
    ax = viz.plot_mask(causal_mask(4), title="causal")
    assert ax.images[0].get_array().tolist() == torch.tril(torch.ones(4, 4)).tolist()
    colour_bar = ax.figure.axes[-1]
    assert "may attend" in " ".join(_ticks(colour_bar.get_yticklabels()))
    pad = padding_mask(torch.tensor([[5, 6, 0]]), pad_id=0)  # (1, 1, 1, 3)
    ax = viz.plot_mask(pad, shape=(3, 3))
    assert ax.images[0].get_array().tolist() == [[1, 1, 0]] * 3


def test_plot_mask_rejects_a_float_score_mask():
    with pytest.raises(TypeError, match="`mask` must be bool"):
        viz.plot_mask(torch.tensor([[0.0, float("-inf")]]))


def test_positional_encoding_plots_label_positions_and_dimensions():
    table = sinusoidal_positional_encoding(20, 8)
    ax = viz.plot_positional_encoding(table)
    # the x-axis counts columns; "i" is the pair index (column 2i is a sine, 2i + 1 a cosine)
    assert ax.get_ylabel() == "position pos" and ax.get_xlabel() == "column (2i: sin, 2i + 1: cos)"
    assert ax.images[0].get_clim() == (-1.0, 1.0)
    ax = viz.plot_pe_curves(table, [0, 3])
    labels = [line.get_label() for line in ax.lines]
    assert labels == ["column 0 (pair 0, sin)", "column 3 (pair 1, cos)"]
    np.testing.assert_allclose(ax.lines[1].get_ydata(), table[:, 3].numpy())


@pytest.mark.parametrize("config", [None, TransformerConfig.small()])
def test_plot_architecture_draws_both_stacks(config):
    ax = viz.plot_architecture(config=config)
    texts = " ".join(t.get_text() for t in ax.texts)
    for part in ("Masked Multi-Head", "Feed\nForward", "Add & Norm", "Softmax", "Positional"):
        assert part in texts
    assert ("2×" in texts) == (config is not None) and ("N×" in texts) == (config is None)
    assert len(ax.patches) > 20


def _drawn(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_plot_architecture_without_an_encoder_draws_one_stack_without_cross_attention():
    # notebook 09: TransformerConfig.decoder_only() has n_encoder_layers=0
    config = TransformerConfig.decoder_only(536, d_model=64, d_ff=256, n_decoder_layers=3)
    texts = _drawn(viz.plot_architecture(config=config))
    assert texts.count("Masked Multi-Head\nAttention") == 1  # one stack, self-attention only
    assert "Multi-Head\nAttention" not in texts  # no encoder self-attention, no cross-attention
    assert not any("memory" in t for t in texts)  # nothing comes from an encoder
    assert texts.count("Feed\nForward") == 1 and texts.count("Add & Norm") == 2
    assert "3×" in texts and "Softmax" in texts and "Positional\nEncoding" in texts
    assert any("d_model=64, h=4, d_k=16, d_ff=256" in t for t in texts)


def test_plot_architecture_of_an_encoder_decoder_is_unchanged_by_the_decoder_only_drawing():
    # notebook 06's drawing: both stacks, cross-attention fed by the memory
    texts = _drawn(viz.plot_architecture(config=TransformerConfig.small()))
    assert texts.count("Multi-Head\nAttention") == 2  # encoder self-attention, cross-attention
    assert texts.count("Masked Multi-Head\nAttention") == 1
    assert texts.count("Add & Norm") == 5 and "memory (keys, values)" in texts
    assert texts[-1] == "The Transformer (Vaswani et al., 2017, Figure 1)"


def test_plot_loss_curve_plots_each_series_against_the_step_series():
    history = {"step": [10, 20, 30], "loss": [3.0, 2.0, 1.5], "lr": [1e-4, 2e-4, 3e-4]}
    ax = viz.plot_loss_curve(history)
    assert ax.get_xlabel() == "step" and ax.get_ylabel() == "loss"
    assert [line.get_label() for line in ax.lines] == ["loss", "lr"]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [3.0, 2.0, 1.5])
    assert list(ax.lines[0].get_xdata()) == [10, 20, 30]


def test_plot_loss_curve_without_a_step_series_counts_from_zero():
    ax = viz.plot_loss_curve({"train loss": torch.tensor([3.0, 2.0, 1.5])}, log_scale=True)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [3.0, 2.0, 1.5])
    assert list(ax.lines[0].get_xdata()) == [0, 1, 2] and ax.get_yscale() == "log"


@pytest.mark.parametrize(
    ("history", "error", "match"),
    [
        ([3.0, 2.0, 1.5], TypeError, r"`history` must be a mapping .*; got list of float\."),
        (
            [{"step": 10, "loss": 3.0}],
            TypeError,
            r"`history` must be a mapping .*; got list of dict",
        ),
        ({"step": [10, 20]}, ValueError, r"`history` must be at least one series besides \"step\""),
        ({"loss": "3.0"}, ValueError, r"`history\['loss'\]` must be a non-empty 1-D list of num"),
        ({"loss": []}, ValueError, r"`history\['loss'\]` must be a non-empty"),
    ],
)
def test_plot_loss_curve_rejects_other_history_formats_with_a_hint(history, error, match):
    with pytest.raises(error, match=match) as raised:
        viz.plot_loss_curve(history)
    assert 'wrap a list of losses: {"loss": losses}' in str(raised.value)


def test_plot_loss_curve_needs_every_series_as_long_as_step():
    with pytest.raises(ValueError, match=r"`history\['loss'\]` must be 2 numbers .*; got 1\."):
        viz.plot_loss_curve({"step": [10, 20], "loss": [3.0]})


def test_plot_lr_schedule_marks_the_warmup():
    steps = torch.arange(1, 101)
    lrs = torch.minimum(steps**-0.5, steps * 10**-1.5)
    ax = viz.plot_lr_schedule(steps, lrs, warmup_steps=10)
    assert ax.get_ylabel() == "learning rate"
    assert any("warmup" in line.get_label() for line in ax.lines)
    with pytest.raises(ValueError, match="`lrs` must be 100 values"):
        viz.plot_lr_schedule(steps, lrs[:-1])


def test_plot_alignment_boxes_gold_pairs_in_pharaoh_order():
    src, tgt = ["I", "see", "dogs"], ["ich", "sehe", "Hunde", "."]
    ax = viz.plot_alignment(_weights(4, 3), [(0, 0), (1, 1), (2, 2)], src, tgt)
    boxes = [p for p in ax.patches if p.get_edgecolor()[:3] == (1.0, 0.0, 0.0)]
    assert [(b.get_x() + 0.5, b.get_y() + 0.5) for b in boxes] == [(0, 0), (1, 1), (2, 2)]
    assert _ticks(ax.get_xticklabels()) == src and _ticks(ax.get_yticklabels()) == tgt


def test_plot_seed_spread_draws_one_row_per_variant_with_each_seed_and_the_mean():
    results = {"notebook 07": [96.0, 97.0, 98.0], "1 head": torch.tensor([90.0, 93.0, 91.0])}
    ax = viz.plot_seed_spread(results, title="heads", baseline="notebook 07")
    assert _ticks(ax.get_yticklabels()) == ["notebook 07", "1 head"]
    seeds = [c.get_offsets() for c in ax.collections]
    assert [sorted(points[:, 0]) for points in seeds] == [[96, 97, 98], [90, 91, 93]]
    assert [list(points[:, 1]) for points in seeds] == [[0, 0, 0], [1, 1, 1]]
    lines = [line.get_xdata() for line in ax.get_lines()]
    assert [96.0, 98.0] in [list(x) for x in lines]  # the first row's min-max range
    mean_marks = [x for x in lines if len(x) == 2 and x[0] == x[1]]  # vertical: means, baseline
    assert sorted(round(x[0], 2) for x in mean_marks) == [91.33, 97.0, 97.0]
    assert ax.get_xlabel() == "valid BLEU" and ax.get_title() == "heads"


@pytest.mark.parametrize(
    ("results", "baseline", "match"),
    [
        ({}, None, r"`results` must be a non-empty mapping"),
        ({"a": []}, None, r"`results\['a'\]` must be a non-empty 1-D list of numbers"),
        ({"a": [1.0]}, "b", r"`baseline` must be one of \['a'\]; got 'b'"),
    ],
)
def test_plot_seed_spread_rejects_bad_input_with_the_house_error(results, baseline, match):
    with pytest.raises((TypeError, ValueError), match=match):
        viz.plot_seed_spread(results, baseline=baseline)
