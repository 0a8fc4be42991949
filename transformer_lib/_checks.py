"""Input validation shared by the public entry points.

Every message follows one template: what the argument must be, what arrived,
and (where it helps) a hint. Example::

    `src_mask` must be bool (True = may attend) broadcastable to (B, 1, 1, S)=(2, 1, 1, 7);
    got float32 (2, 7). Build it with masks.padding_mask().

The template, what an argument must be and the hint are read from the library's catalogue,
so the Chinese edition shows them in Chinese (:mod:`transformer_lib.i18n`)::

    `src_mask`必须是可广播到(B, 1, 1, S)=(2, 1, 1, 7)的bool张量（True表示可以关注）；
    实际得到float32 (2, 7)。请用masks.padding_mask()构建。
"""

from __future__ import annotations

import math
import numbers
from typing import NoReturn

import torch

# _(): an error's part in the course's language (English while COURSE_LANG names none)
from transformer_lib._catalogue import error_text as _


def _describe(x: torch.Tensor) -> str:
    return f"{str(x.dtype).removeprefix('torch.')} {tuple(x.shape)}"


def fail(
    name: str,
    expected: str,
    got: str,
    hint: str = "",
    error: type[Exception] = ValueError,
    **values: object,
) -> NoReturn:
    """Raise ``error`` with the house template, in the course's language.

    ``expected`` (what ``name`` must be) and ``hint`` are string literals: templates whose
    ``{fields}`` ``values`` fill after the lookup, so that one catalogue entry serves every
    value (``tools/i18n_notebooks.py library`` collects them; an f-string could not be
    looked up): ``fail("d_model", "divisible by n_heads={n_heads}", "7", n_heads=2)``.
    ``got`` says what arrived as the code sees it (a repr, a dtype and shape): not translated.
    """
    parts = {"name": name, "expected": _(expected).format(**values), "got": got}
    if not hint:
        raise error(_("`{name}` must be {expected}; got {got}.").format(**parts))
    hint = _(hint).format(**values)
    raise error(_("`{name}` must be {expected}; got {got}. {hint}").format(**parts, hint=hint))


def check_int(name: str, value: object, minimum: int | None = None) -> None:
    """An int (not a bool), at least ``minimum`` when given."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        fail(name, "an int", f"{type(value).__name__} {value!r}", error=TypeError)
    if minimum is not None and value < minimum:
        fail(name, "an int >= {minimum}", repr(value), minimum=minimum)


def check_real(name: str, value: object, minimum: float | None = None, hint: str = "") -> None:
    """A finite real number (not a bool), at least ``minimum`` when given; ``hint`` is a
    template too (a string literal, as ``fail``'s)."""
    expected = "a finite float" if minimum is None else "a finite float >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        got = f"{type(value).__name__} {value!r}"
        fail(name, expected, got, hint, error=TypeError, minimum=minimum)
    if not math.isfinite(value) or (minimum is not None and value < minimum):
        fail(name, expected, repr(value), hint, minimum=minimum)


def check_probability(name: str, value: object) -> None:
    """A real number in [0, 1), e.g. a dropout rate or label smoothing."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        fail(name, "a float in [0, 1)", f"{type(value).__name__} {value!r}", error=TypeError)
    if not 0.0 <= value < 1.0:
        fail(name, "a float in [0, 1)", repr(value))


def check_tensor(
    name: str,
    x: object,
    ndim: int | None = None,
    integer: bool = False,
    floating: bool = False,
    shape_hint: str = "",
) -> None:
    """Check type, rank and dtype kind of a tensor argument."""
    shape = {"shape": shape_hint}  # named in the message when given: "... of shape (B, S)"
    if not isinstance(x, torch.Tensor):
        expected = "a torch.Tensor of shape {shape}" if shape_hint else "a torch.Tensor"
        fail(name, expected, type(x).__name__, error=TypeError, **shape)
    if ndim is not None and x.dim() != ndim:
        expected = "a {ndim}-D tensor of shape {shape}" if shape_hint else "a {ndim}-D tensor"
        fail(name, expected, f"{x.dim()}-D {_describe(x)}", ndim=ndim, **shape)
    if integer and x.dtype not in (torch.int64, torch.int32):  # what nn.Embedding takes
        expected = (
            "an integer tensor of token ids (int64 or int32) of shape {shape}"
            if shape_hint
            else "an integer tensor of token ids (int64 or int32)"
        )
        fail(name, expected, _describe(x), "Convert with .long().", TypeError, **shape)
    if floating and not x.dtype.is_floating_point:
        expected = (
            "a floating-point tensor of shape {shape}" if shape_hint else "a floating-point tensor"
        )
        fail(name, expected, _describe(x), "Convert with .float().", TypeError, **shape)


def check_mask(
    name: str, mask: object, shape: tuple[int, ...], letters: str, same_rank: bool = True
) -> None:
    """Check a bool mask that must broadcast to ``shape`` (named by ``letters``).

    With ``same_rank`` the mask must have as many dimensions as ``shape``: a (B, S)
    mask would otherwise broadcast silently against the wrong axes.
    """
    if mask is None:
        return
    expected = "bool (True = may attend) broadcastable to {letters}={shape}"
    shapes = {"letters": letters, "shape": tuple(shape)}
    if not isinstance(mask, torch.Tensor):
        fail(name, expected, type(mask).__name__, error=TypeError, **shapes)
    hint = "Build it with transformer_lib.masks (padding_mask, causal_mask, target_mask)."
    if mask.dtype != torch.bool:
        fail(name, expected, _describe(mask), hint, TypeError, **shapes)
    try:
        rank_ok = mask.dim() == len(shape) if same_rank else mask.dim() <= len(shape)
        ok = rank_ok and torch.broadcast_shapes(mask.shape, shape) == shape
    except RuntimeError:
        ok = False
    if not ok:
        fail(name, expected, _describe(mask), hint, **shapes)


def check_token_ids(
    name: str,
    tokens: object,
    vocab_size: int | None,
    shape_hint: str,
    ndim: int | None = 2,
    min_length: int = 0,
) -> None:
    """A tensor of ids: integer dtype, rank, at least ``min_length`` long in its last dim,
    and in [0, vocab_size) (see :func:`check_id_range`). ``vocab_size=None`` leaves the
    range to the embedding that looks the ids up (``TokenEmbedding(ids, name)``), so that
    a model's forward reads its ids once."""
    check_tensor(name, tokens, ndim=ndim, integer=True, shape_hint=shape_hint)
    if tokens.dim() and tokens.size(-1) < min_length:
        fail(
            name,
            "at least {min_length} position(s) long, {shape}",
            f"shape {tuple(tokens.shape)}",
            "Start the target with <bos>.",
            min_length=min_length,
            shape=shape_hint,
        )
    if vocab_size is not None:
        check_id_range(name, tokens, vocab_size)


def check_id_range(name: str, tokens: torch.Tensor, vocab_size: int) -> None:
    """Ids in [0, vocab_size), checked on the CPU only.

    Reading the ids of a tensor on an accelerator makes the host wait for the device, at
    every forward pass; there, ids are in range by construction (``Vocab.encode``,
    ``data.make_batches``).
    """
    if tokens.device.type != "cpu" or not tokens.numel():
        return
    low, high = int(tokens.min()), int(tokens.max())
    if low < 0 or high >= vocab_size:
        fail(
            name,
            "token ids in [0, {vocab_size}) (the vocabulary size)",
            f"min {low}, max {high}",
            "Check the vocabulary used to encode the text.",
            vocab_size=vocab_size,
        )


def check_labels(name: str, labels: object, n_classes: int) -> None:
    """Class ids: a 1-D integer tensor with values in [0, n_classes), the range checked on
    the CPU only (as :func:`check_id_range`, for the same reason)."""
    check_tensor(name, labels, ndim=1, integer=True, shape_hint="(B,)")
    if labels.device.type != "cpu" or not labels.numel():
        return
    low, high = int(labels.min()), int(labels.max())
    if low < 0 or high >= n_classes:
        fail(
            name,
            "class ids in [0, {n_classes}) (n_classes={n_classes})",
            f"min {low}, max {high}",
            "Number the classes 0, 1, ..., n_classes - 1.",
            n_classes=n_classes,
        )


def check_output_length(name: str, max_len: int, room: int, model_max_len: int) -> None:
    """How many tokens a search may generate: the decoder reads ``<bos>`` and all but the
    last generated token, so at most the ``room`` positions the model's table of
    ``model_max_len`` has for an output (all of them for an encoder-decoder)."""
    check_int(name, max_len, minimum=1)
    if max_len > room:
        fail(
            name,
            "at most {room}, the positions the model's table (max_len={max_len}) has for an output",
            repr(max_len),
            "Leave it None (2·S + 10, within the table) or build the model with a larger max_len.",
            room=room,
            max_len=model_max_len,
        )


def check_alpha(alpha: object) -> None:
    """GNMT's length-penalty exponent α (decode.length_penalty): finite and >= 0."""
    check_real(
        "alpha", alpha, minimum=0.0, hint="0 switches the length penalty off; §6.1 uses 0.6."
    )


def check_width(name: str, x: object, d_model: int, shape_hint: str) -> None:
    """A (B, L, D) floating-point tensor of width d_model."""
    check_tensor(name, x, ndim=3, floating=True, shape_hint=shape_hint)
    if x.size(-1) != d_model:
        got = f"shape {tuple(x.shape)}"
        fail(name, "of width d_model={d_model} in its last dimension", got, d_model=d_model)


def check_length(name: str, length: int, max_len: int) -> None:
    """A sequence must fit the positional table (``max_len`` positions)."""
    if length > max_len:
        fail(
            name,
            "at most max_len={max_len} positions long",
            f"length {length}",
            "Raise max_len in the config or shorten the input.",
            max_len=max_len,
        )


def check_heads(d_model: int, n_heads: int) -> None:
    """Each of the h heads gets d_model / h dimensions (§3.2.2)."""
    if d_model % n_heads:
        fail(
            "d_model",
            "divisible by n_heads={n_heads}",
            str(d_model),
            "Each head gets d_model / n_heads dimensions.",
            n_heads=n_heads,
        )


def check_even_width(d_model: int) -> None:
    """Sinusoidal positions fill one sin and one cos column per frequency (§3.5)."""
    if d_model % 2:
        fail(
            "d_model",
            "even for sinusoidal positions (each frequency fills a sin and a cos column)",
            str(d_model),
            "Use learned positions for odd widths.",
        )
