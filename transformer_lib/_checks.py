"""Input validation shared by the public entry points.

Every message follows one template: what the argument must be, what arrived,
and (where it helps) a hint. Example::

    `src_mask` must be bool (True = may attend) broadcastable to (B, 1, 1, S)=(2, 1, 1, 7);
    got float32 (2, 7). Build it with masks.padding_mask().
"""

from __future__ import annotations

import numbers

import torch


def _describe(x: torch.Tensor) -> str:
    return f"{str(x.dtype).removeprefix('torch.')} {tuple(x.shape)}"


def fail(name: str, expected: str, got: str, hint: str = "", error: type = ValueError):
    """Raise ``error`` with the house template."""
    message = f"`{name}` must be {expected}; got {got}."
    raise error(f"{message} {hint}".strip())


def check_int(name: str, value, minimum: int | None = None) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        fail(name, "an int", f"{type(value).__name__} {value!r}", error=TypeError)
    if minimum is not None and value < minimum:
        fail(name, f"an int >= {minimum}", repr(value))


def check_probability(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        fail(name, "a float in [0, 1)", f"{type(value).__name__} {value!r}", error=TypeError)
    if not 0.0 <= value < 1.0:
        fail(name, "a float in [0, 1)", repr(value))


def check_tensor(
    name: str,
    x,
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
    if integer and (x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool):
        fail(
            name,
            f"an integer tensor of token ids{shape_text}",
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
    name: str, mask, shape: tuple[int, ...], letters: str, same_rank: bool = True
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


def check_token_ids(name: str, tokens, vocab_size: int, shape_hint: str) -> None:
    """Check a (B, L) tensor of ids in [0, vocab_size)."""
    check_tensor(name, tokens, ndim=2, integer=True, shape_hint=shape_hint)
    if tokens.numel() and (tokens.min() < 0 or tokens.max() >= vocab_size):
        low, high = int(tokens.min()), int(tokens.max())
        fail(
            name,
            f"token ids in [0, {vocab_size}) (the vocabulary size)",
            f"ids in [{low}, {high}]",
            "Check the vocabulary used to encode the text.",
        )
