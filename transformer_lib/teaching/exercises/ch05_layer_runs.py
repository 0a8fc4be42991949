"""How :func:`~transformer_lib.teaching.exercises.ch05_attention_layer.check_multi_head_attention`
runs a layer: the student's class (or a catalogued mistake) and ``nn.MultiheadAttention``
get the same weights and inputs, run forward and backward, and the first part of the run
that differs (the output, then each gradient) is named.

Shapes:
    B batch, T query length, S key/value length, D d_model, H heads, Dh = D / H.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from transformer_lib.i18n import N_, _
from transformer_lib.model.attention import MultiHeadAttention
from transformer_lib.model.masks import causal_mask, padding_mask
from transformer_lib.model.reference import to_torch_attention, to_torch_attn_mask
from transformer_lib.teaching.exercises._compare import _diagnose, _same, _tensor
from transformer_lib.teaching.exercises._core import ExerciseFailed, _call, _generator

__all__ = ["cases", "check_layer", "explain", "runner", "torch_run"]

D_MODEL, N_HEADS = 32, 4  # Dh = 8, neither T = 5 nor S = 7: a mixed-up axis cannot hide
PROJECTIONS = ("w_q", "w_k", "w_v", "w_o")
PARAMETERS = tuple(f"{name}.{p}" for name in PROJECTIONS for p in ("weight", "bias"))


@dataclass(frozen=True)
class _Case:
    """One run of a layer: inputs (query is key is value for self-attention), the mask,
    the mode, the weights every layer gets, and the output's weights in the loss."""

    what: str
    inputs: tuple[torch.Tensor, ...]  # (x,) for self-attention, else (query, key, value)
    mask: torch.Tensor | None
    training: bool
    state: dict[str, torch.Tensor]
    grad: torch.Tensor  # (B, T, D): loss = (output * grad).sum()

    def leaves(self) -> tuple[torch.Tensor, ...]:
        return tuple(x.clone().requires_grad_() for x in self.inputs)

    def sources(self) -> tuple[str, ...]:
        """The inputs and parameters whose gradients follow the output in a run."""
        inputs = ("x",) if len(self.inputs) == 1 else ("query", "key", "value")
        return inputs + PARAMETERS


def _qkv(leaves: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    return leaves * 3 if len(leaves) == 1 else leaves


def _backward(output, grad, leaves, params) -> tuple:
    """(output, gradient of each input and parameter for the loss (output * grad).sum());
    None where no gradient arrives."""
    wanted = (*leaves, *params)
    if not output.requires_grad:
        return (output.detach(), *(None for _ in wanted))
    loss = (output * grad).sum()
    return (output.detach(), *torch.autograd.grad(loss, wanted, allow_unused=True))


def _student_run(cls: Callable, case: _Case) -> tuple:
    """``cls(D, H)`` with the case's weights, forward and backward on the case's inputs."""
    layer = cls(D_MODEL, N_HEADS).train(case.training)
    params = tuple(layer.get_parameter(name) for name in PARAMETERS)
    with torch.no_grad():
        for param, name in zip(params, PARAMETERS, strict=True):
            param.copy_(case.state[name])
    leaves = case.leaves()
    output = layer(*_qkv(leaves), case.mask)
    if not isinstance(output, torch.Tensor) or output.shape != case.grad.shape:
        return (output,)  # not a (B, T, D) tensor: the check explains it
    if not output.is_floating_point() or output.device != case.grad.device:
        return (output,)  # no backward: the check names the dtype or the device
    return _backward(output, case.grad, leaves, params)


def torch_run(case: _Case) -> tuple:
    """The same run through ``nn.MultiheadAttention`` holding the same weights."""
    ours = MultiHeadAttention(D_MODEL, N_HEADS)
    ours.load_state_dict(case.state)
    theirs = to_torch_attention(ours).train(case.training)
    leaves = case.leaves()
    query, key, _ = _qkv(leaves)
    mask = None
    if case.mask is not None:
        T, S = query.size(1), key.size(1)
        mask = to_torch_attn_mask(case.mask.expand(case.mask.size(0), 1, T, S), N_HEADS)
    output, _ = theirs(*_qkv(leaves), attn_mask=mask, need_weights=False)
    params = (theirs.in_proj_weight, theirs.in_proj_bias, *theirs.out_proj.parameters())
    result = _backward(output, case.grad, leaves, params)
    n = len(leaves) + 1
    in_weight, in_bias, out_weight, out_bias = result[n:]
    pairs = zip(in_weight.chunk(3), in_bias.chunk(3), strict=True)  # (3D, D) -> Q, K, V
    return (*result[:n], *(g for pair in pairs for g in pair), out_weight, out_bias)


def runner(cls: Callable) -> Callable:
    """The run of ``cls`` as a one-argument function that keeps the class's name."""

    def run(case: _Case) -> tuple:
        return _student_run(cls, case)

    run.__name__ = getattr(cls, "__name__", "")
    return run


def explain(got: tuple, expected: tuple, case: _Case) -> None:
    """Name the first part of a run (output, then each gradient) that differs."""
    __tracebackhide__ = True
    if case.training:
        what = _("{case}, training mode").format(case=case.what)
    else:
        what = _("{case}, evaluation mode").format(case=case.what)
    output = _("the output of {what}").format(what=what)
    _tensor(got[0], output, tuple(case.grad.shape), "(B, T, D)")
    gradients = list(zip(case.sources(), got[1:], expected[1:], strict=True))
    for source, mine, right in gradients:
        if mine is None and right is not None:
            raise ExerciseFailed(
                _(
                    "{what}: no gradient reaches {source}; something in your forward cuts the "
                    "graph (.detach(), .data, .item(), torch.no_grad())."
                ).format(what=what, source=source)
            )
    if not _same(got[0], expected[0]):
        _diagnose(_("{what}: the output").format(what=what), got[0], expected[0])
    for source, mine, right in gradients:
        if not _same(mine, right):
            _diagnose(
                _("{what}: the gradient of {source}").format(what=what, source=source),
                mine,
                right,
                fallback=N_("The output is right; look for .detach() or in-place edits."),
            )


def cases(seed: int) -> list[_Case]:
    g = _generator(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        state = {
            k: v.detach().clone()
            for k, v in MultiHeadAttention(D_MODEL, N_HEADS).state_dict().items()
        }
    B, T, S, D = 2, 5, 7, D_MODEL
    x, y = torch.randn(B, T, D, generator=g), torch.randn(B, T, D, generator=g)
    query, key, value = (torch.randn(B, L, D, generator=g) for L in (T, S, S))
    # right- and left-padded rows, each with real tokens and pads
    pads = padding_mask(torch.tensor([[5, 6, 7, 0, 0], [0, 5, 6, 7, 8]]), 0)  # (B, 1, 1, T)
    memory_pads = padding_mask(torch.tensor([[5, 6, 7, 8, 0, 0, 0], [0, 0, 5, 6, 7, 8, 9]]), 0)
    grad = torch.randn(B, T, D, generator=g)
    return [
        _Case(_("self-attention"), (x,), None, True, state, grad),
        _Case(_("self-attention with a padding mask"), (x,), pads, True, state, grad),
        _Case(_("causal self-attention"), (y,), causal_mask(T), False, state, grad),
        _Case(
            _("cross-attention (T = {t} queries, S = {s} keys)").format(t=T, s=S),
            (query, key, value),
            memory_pads,
            True,
            state,
            grad,
        ),
    ]


def check_layer(cls: Callable) -> None:
    """The class builds a module with the library's four projections."""
    __tracebackhide__ = True
    if isinstance(cls, nn.Module):
        raise ExerciseFailed(
            _(
                "pass your class itself, e.g. check(MyMultiHeadAttention), not a layer built "
                "from it."
            )
        )
    layer = _call(cls, D_MODEL, N_HEADS)
    if not isinstance(layer, nn.Module):
        raise ExerciseFailed(
            _("{name}(d_model, n_heads) must build an nn.Module; got {type}.").format(
                name=cls.__name__, type=type(layer).__name__
            )
        )
    wrong = [
        name
        for name in PROJECTIONS
        if not isinstance(getattr(layer, name, None), nn.Linear)
        or getattr(layer, name).weight.shape != (D_MODEL, D_MODEL)
        or getattr(layer, name).bias is None
    ]
    if wrong:
        raise ExerciseFailed(
            _(
                "keep the projections of the skeleton: self.w_q, self.w_k, self.w_v, self.w_o, "
                "each nn.Linear(d_model, d_model) with a bias (the check copies weights into "
                "them); missing or different: {names}."
            ).format(names=", ".join(wrong))
        )
