"""Input validation shared by the public entry points.

Every message follows one template: what the argument must be, what arrived,
and (where it helps) a hint. Example::

    `src_mask` must be bool (True = may attend) broadcastable to (B, 1, 1, S)=(2, 1, 1, 7);
    got float32 (2, 7). Build it with masks.padding_mask().
"""

from __future__ import annotations

import math
import numbers
from typing import NoReturn

import torch


def _describe(x: torch.Tensor) -> str:
    return f"{str(x.dtype).removeprefix('torch.')} {tuple(x.shape)}"


def fail(
    name: str, expected: str, got: str, hint: str = "", error: type[Exception] = ValueError
) -> NoReturn:
    """Raise ``error`` with the house template."""
    message = f"`{name}` must be {expected}; got {got}."
    raise error(f"{message} {hint}".strip())


def check_int(name: str, value: object, minimum: int | None = None) -> None:
    """An int (not a bool), at least ``minimum`` when given."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        fail(name, "an int", f"{type(value).__name__} {value!r}", error=TypeError)
    if minimum is not None and value < minimum:
        fail(name, f"an int >= {minimum}", repr(value))


def check_real(name: str, value: object, minimum: float | None = None, hint: str = "") -> None:
    """A finite real number (not a bool), at least ``minimum`` when given."""
    expected = "a finite float" + (f" >= {minimum}" if minimum is not None else "")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        fail(name, expected, f"{type(value).__name__} {value!r}", hint, error=TypeError)
    if not math.isfinite(value) or (minimum is not None and value < minimum):
        fail(name, expected, repr(value), hint)


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
    shape_text = f" of shape {shape_hint}" if shape_hint else ""
    if not isinstance(x, torch.Tensor):
        fail(name, f"a torch.Tensor{shape_text}", type(x).__name__, error=TypeError)
    if ndim is not None and x.dim() != ndim:
        fail(name, f"a {ndim}-D tensor{shape_text}", f"{x.dim()}-D {_describe(x)}")
    if integer and x.dtype not in (torch.int64, torch.int32):  # what nn.Embedding takes
        fail(
            name,
            f"an integer tensor of token ids (int64 or int32){shape_text}",
            _describe(x),
            "Convert with .long().",
            error=TypeError,
        )
    if floating and not x.dtype.is_floating_point:
        fail(
            name,
            f"a floating-point tensor{shape_text}",
            _describe(x),
            "Convert with .float().",
            error=TypeError,
        )


def check_mask(
    name: str, mask: object, shape: tuple[int, ...], letters: str, same_rank: bool = True
) -> None:
    """Check a bool mask that must broadcast to ``shape`` (named by ``letters``).

    With ``same_rank`` the mask must have as many dimensions as ``shape``: a (B, S)
    mask would otherwise broadcast silently against the wrong axes.
    """
    if mask is None:
        return
    expected = f"bool (True = may attend) broadcastable to {letters}={tuple(shape)}"
    if not isinstance(mask, torch.Tensor):
        fail(name, expected, type(mask).__name__, error=TypeError)
    hint = "Build it with transformer_lib.masks (padding_mask, causal_mask, target_mask)."
    if mask.dtype != torch.bool:
        fail(name, expected, _describe(mask), hint, error=TypeError)
    try:
        rank_ok = mask.dim() == len(shape) if same_rank else mask.dim() <= len(shape)
        ok = rank_ok and torch.broadcast_shapes(mask.shape, shape) == shape
    except RuntimeError:
        ok = False
    if not ok:
        fail(name, expected, _describe(mask), hint)


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
            f"at least {min_length} position(s) long, {shape_hint}",
            f"shape {tuple(tokens.shape)}",
            "Start the target with <bos>.",
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
            f"token ids in [0, {vocab_size}) (the vocabulary size)",
            f"ids in [{low}, {high}]",
            "Check the vocabulary used to encode the text.",
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
            f"class ids in [0, {n_classes}) (n_classes={n_classes})",
            f"ids in [{low}, {high}]",
            "Number the classes 0, 1, ..., n_classes - 1.",
        )


def check_output_length(name: str, max_len: int, room: int, model_max_len: int) -> None:
    """How many tokens a search may generate: the decoder reads ``<bos>`` and all but the
    last generated token, so at most the ``room`` positions the model's table of
    ``model_max_len`` has for an output (all of them for an encoder-decoder)."""
    check_int(name, max_len, minimum=1)
    if max_len > room:
        fail(
            name,
            f"at most {room}, the positions the model's table (max_len={model_max_len}) "
            "has for an output",
            repr(max_len),
            "Leave it None (2·S + 10, within the table) or build the model with a larger max_len.",
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
        fail(name, f"of width d_model={d_model} in its last dimension", f"shape {tuple(x.shape)}")


def check_length(name: str, length: int, max_len: int) -> None:
    """A sequence must fit the positional table (``max_len`` positions)."""
    if length > max_len:
        fail(
            name,
            f"at most max_len={max_len} positions long",
            f"length {length}",
            "Raise max_len in the config or shorten the input.",
        )


def check_heads(d_model: int, n_heads: int) -> None:
    """Each of the h heads gets d_model / h dimensions (§3.2.2)."""
    if d_model % n_heads:
        fail(
            "d_model",
            f"divisible by n_heads={n_heads}",
            str(d_model),
            "Each head gets d_model / n_heads dimensions.",
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
