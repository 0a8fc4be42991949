"""Deliberately wrong versions of each exercise, used by ``exercises`` to name a mistake.

Each function takes the same inputs as the exercise and returns ``(hint, wrong_output)``
pairs: when a student's answer equals ``wrong_output``, the check shows ``hint``.
These are the mistakes well-known tutorial code makes; keep the hints short and say the fix.

Shapes: as in the matching checks in ``exercises``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F

Mistakes = list[tuple[str, torch.Tensor]]


# -- 01 embeddings -------------------------------------------------------------------------


def scaled_embedding(ids: torch.Tensor, weight: torch.Tensor) -> Mistakes:
    V, D = weight.shape
    L = ids.size(1)
    lookup = weight[ids]  # (B, L) -> (B, L, D)
    return [
        ("you forgot the scaling: multiply the looked-up vectors by √d_model (§3.4).", lookup),
        (
            "divide → multiply: the paper multiplies the embeddings by √d_model.",
            lookup / math.sqrt(D),
        ),
        ("scale by the square root √d_model, not by d_model itself.", lookup * D),
        (
            "d_model is the embedding width weight.size(1), not the vocabulary size "
            "weight.size(0).",
            lookup * math.sqrt(V),
        ),
        (
            "d_model is the embedding width weight.size(1), not the sequence length ids.size(1).",
            lookup * math.sqrt(L),
        ),
    ]


# -- 02 positional encoding ----------------------------------------------------------------


def _pe(
    max_len: int,
    d_model: int,
    *,
    swap: bool = False,
    concat: bool = False,
    exponent: str = "2i",
    start: int = 0,
    multiply: bool = False,
) -> torch.Tensor:
    position = torch.arange(start, start + max_len, dtype=torch.float32)[:, None]  # (L, 1)
    if exponent == "2i":
        power = torch.arange(0, d_model, 2, dtype=torch.float32) / d_model  # (D/2,)
    else:  # "i": forgot the factor 2
        power = torch.arange(d_model // 2, dtype=torch.float32) / d_model
    frequency = 10000.0**power
    angle = position * frequency if multiply else position / frequency  # (L, D/2)
    first, second = (
        (torch.cos(angle), torch.sin(angle)) if swap else (torch.sin(angle), torch.cos(angle))
    )
    if concat:
        return torch.cat([first, second], dim=1)  # (L, D/2) + (L, D/2) -> (L, D)
    table = torch.empty(max_len, d_model)
    table[:, 0::2], table[:, 1::2] = first, second
    return table


def _pe_own_frequency(max_len: int, d_model: int) -> torch.Tensor:
    """Every column j with its own exponent j/d_model instead of sharing one per pair."""
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    angle = position / 10000.0 ** (torch.arange(d_model, dtype=torch.float32) / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, torch.sin(angle), torch.cos(angle))


def positional_encoding(max_len: int, d_model: int) -> Mistakes:
    return [
        (
            "sin and cos are swapped: even columns 2i hold sin, odd columns 2i+1 hold cos.",
            _pe(max_len, d_model, swap=True),
        ),
        (
            "that is the concatenated layout [sin | cos] (tensor2tensor); the paper interleaves: "
            "table[:, 0::2] = sin, table[:, 1::2] = cos.",
            _pe(max_len, d_model, concat=True),
        ),
        (
            "the exponent is 2i/d_model where 2i is the even column index: build it with "
            "torch.arange(0, d_model, 2), not torch.arange(d_model // 2).",
            _pe(max_len, d_model, exponent="i"),
        ),
        (
            "columns 2i and 2i+1 share one frequency 1/10000^(2i/d_model); you gave each column "
            "its own.",
            _pe_own_frequency(max_len, d_model),
        ),
        (
            "divide the position by 10000^(2i/d_model); you multiplied.",
            _pe(max_len, d_model, multiply=True),
        ),
        (
            "positions start at 0: use torch.arange(max_len), not arange(1, max_len + 1).",
            _pe(max_len, d_model, start=1),
        ),
    ]


def pe_rotation(offset: int, d_model: int, sign: float) -> torch.Tensor:
    frequency = 1.0 / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    cos, sin = torch.cos(offset * frequency), torch.sin(offset * frequency)
    matrix = torch.zeros(d_model, d_model, dtype=torch.float64)
    matrix[0::2, 0::2] = torch.diag(cos)
    matrix[1::2, 1::2] = torch.diag(cos)
    matrix[0::2, 1::2] = torch.diag(sign * sin)
    matrix[1::2, 0::2] = torch.diag(-sign * sin)
    return matrix.float()


def pe_shift(offset: int, d_model: int) -> Mistakes:
    return [
        (
            "your matrix shifts backwards, to pos - offset: flip the sign of the sin terms "
            "(or transpose each 2×2 block).",
            pe_rotation(offset, d_model, -1.0),
        ),
        (
            "the matrix must mix each (sin, cos) pair: a diagonal of cos(offset·ω) alone is "
            "not enough, add the ±sin(offset·ω) terms.",
            torch.diag(torch.cos(offset / 10000.0 ** (torch.arange(d_model) // 2 * 2 / d_model))),
        ),
    ]


# -- 03 attention --------------------------------------------------------------------------


def softmax(x: torch.Tensor, dim: int) -> Mistakes:
    dim = dim % x.dim()
    exp = torch.exp(x - x.max())
    wrong = [
        (
            f"you normalised over dim={d}; use the `dim` argument you were given.",
            torch.softmax(x, dim=d),
        )
        for d in range(x.dim())
        if d != dim
    ]
    try:  # without keepdim the sum broadcasts against the *last* axis
        no_keepdim = exp / exp.sum(dim)
        wrong.append(("sum with keepdim=True so the sum broadcasts back along `dim`.", no_keepdim))
    except RuntimeError:
        pass
    wrong.append(
        (
            "divide by the sum along `dim` only (keepdim=True), not by the sum of all entries.",
            exp / exp.sum(),
        )
    )
    return wrong


def _attention(
    q, k, v, mask=None, scale=None, dim=-1, fill=float("-inf"), after=False
) -> tuple[torch.Tensor, torch.Tensor]:
    scores = q @ k.transpose(-2, -1)  # (..., T, d_k) @ (..., d_k, S) -> (..., T, S)
    scores = scores / (math.sqrt(q.size(-1)) if scale is None else scale)
    if mask is not None and not after:
        scores = scores.masked_fill(~mask, fill)
    weights = torch.softmax(scores, dim=dim)
    if mask is not None and after:
        weights = weights * mask
    return weights @ v, weights


def attention_scores(q: torch.Tensor, k: torch.Tensor) -> Mistakes:
    d_k, length = q.size(-1), k.size(-2)
    raw = q @ k.transpose(-2, -1)  # (..., T, S)
    return [
        ("you forgot to divide by √d_k (§3.2.1).", raw),
        ("divide by √d_k, the square root of d_k = q.size(-1), not by d_k itself.", raw / d_k),
        ("divide by √d_k, don't multiply.", raw * math.sqrt(d_k)),
        (
            "d_k is the last dimension q.size(-1); q.size(-2) / k.size(-2) are lengths.",
            raw / math.sqrt(length),
        ),
    ]


def attention(q, k, v, mask=None) -> Mistakes:
    """Wrong (output, weights) pairs; the checks compare the weights first."""
    d_k, d_v = q.size(-1), v.size(-1)
    variants: list[tuple[str, tuple[torch.Tensor, torch.Tensor]]] = [
        (
            "you forgot to divide the scores by √d_k (§3.2.1): without it softmax saturates "
            "as d_k grows.",
            _attention(q, k, v, mask, scale=1.0),
        ),
        ("divide the scores by √d_k, not by d_k.", _attention(q, k, v, mask, scale=d_k)),
        (
            "divide the scores by √d_k, don't multiply.",
            _attention(q, k, v, mask, scale=1 / math.sqrt(d_k)),
        ),
        (
            "scale by √d_k with d_k = q.size(-1), not by v's width d_v.",
            _attention(q, k, v, mask, scale=math.sqrt(d_v)),
        ),
        (
            "scale by √d_k with d_k = q.size(-1), not by a sequence length.",
            _attention(q, k, v, mask, scale=math.sqrt(k.size(-2))),
        ),
        (
            "softmax over the wrong axis: each query's weights over the keys must sum to 1, "
            "so use dim=-1 (you normalised over the queries, dim=-2).",
            _attention(q, k, v, mask, dim=-2),
        ),
    ]
    if mask is not None:
        variants += [
            (
                "your mask is inverted: True means 'may attend', so fill the scores where the "
                "mask is False: scores.masked_fill(~mask, float('-inf')).",
                _attention(q, k, v, ~mask),
            ),
            (
                "you ignored the mask: fill the scores where mask is False with -inf before "
                "the softmax.",
                _attention(q, k, v),
            ),
            (
                "apply the mask to the scores before the softmax; multiplying the weights "
                "afterwards leaves rows that no longer sum to 1.",
                _attention(q, k, v, mask, after=True),
            ),
            (
                "masked scores must be -inf (so exp gives 0), not 0.",
                _attention(q, k, v, mask, fill=0.0),
            ),
        ]
    return variants


def attention_weights(q, k, v, mask=None) -> Mistakes:
    return [(hint, weights) for hint, (_, weights) in attention(q, k, v, mask)]


# -- 04 masking ----------------------------------------------------------------------------


def causal_mask(size: int) -> Mistakes:
    ones = torch.ones(size, size, dtype=torch.bool)
    return [
        (
            "your mask is inverted: True must mean 'may attend', so the lower triangle "
            "(the past and the position itself) is True.",
            ~torch.tril(ones),
        ),
        (
            "diagonal excluded: a position may attend to itself, so keep the diagonal: "
            "torch.tril(ones) (diagonal=0), not tril(ones, diagonal=-1).",
            torch.tril(ones, -1),
        ),
        (
            "that is the upper triangle: position t would see the future. Use torch.tril.",
            torch.triu(ones),
        ),
        ("nothing is masked: position t must not see positions after t.", ones),
    ]


def padding_mask(tokens: torch.Tensor, pad_id: int) -> Mistakes:
    key_mask = tokens != pad_id  # (B, S)
    return [
        (
            "your mask is inverted: True must mean 'may attend', i.e. tokens != pad_id.",
            (tokens == pad_id)[:, None, None, :],
        ),
        ("use the pad_id argument, not a hard-coded 0.", (tokens != 0)[:, None, None, :]),
        (
            "padding is a property of the keys: the S axis goes last, (B, 1, 1, S), so it masks "
            "columns of the (T, S) scores.",
            key_mask[:, None, :, None],
        ),
    ]


def target_mask(tgt: torch.Tensor, pad_id: int) -> Mistakes:
    T = tgt.size(1)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]  # (1, 1, T, T)
    keys = (tgt != pad_id)[:, None, None, :]  # (B, 1, 1, T)
    queries = (tgt != pad_id)[:, None, :, None]  # (B, 1, T, 1)
    shape = (tgt.size(0), 1, T, T)
    return [
        (
            "only the causal part: also block the padded keys (AND with the padding mask).",
            causal.expand(shape),
        ),
        (
            "only the padding part: also block the future (AND with the causal mask).",
            keys.expand(shape),
        ),
        (
            "combine with AND (&): a key must be both in the past and not padding; OR lets "
            "too much through.",
            (causal | keys).expand(shape),
        ),
        (
            "mask padded keys (columns), not padded queries (rows): padding_mask goes to "
            "(B, 1, 1, T).",
            (causal & queries).expand(shape),
        ),
        (
            "mask only the padded keys: masking the padded query rows too leaves fully masked "
            "rows (NaN after softmax).",
            (causal & keys & queries).expand(shape),
        ),
    ]


# -- 05 multi-head attention ---------------------------------------------------------------


def split_heads(x: torch.Tensor, n_heads: int) -> Mistakes:
    B, L, D = x.shape
    Dh = D // n_heads
    return [
        (
            "heads split with the wrong view: x.view(B, n_heads, L, Dh) mixes positions. Cut "
            "each position's D features into heads first, x.view(B, L, n_heads, Dh), then "
            ".transpose(1, 2).",
            x.reshape(B, n_heads, L, Dh),
        ),
        (
            "features cut in the wrong order: view(B, L, n_heads, Dh) gives head h the "
            "contiguous slice h*Dh:(h+1)*Dh; view(B, L, Dh, n_heads) interleaves them.",
            x.reshape(B, L, Dh, n_heads).permute(0, 3, 1, 2),
        ),
    ]


def merge_heads(x: torch.Tensor) -> Mistakes:
    B, H, L, Dh = x.shape
    return [
        (
            "transpose(1, 2) back to (B, L, H, Dh) before reshaping to (B, L, D); reshaping "
            "(B, H, L, Dh) directly mixes positions.",
            x.reshape(B, L, H * Dh),
        ),
        (
            "concatenate head after head: the D features must be ordered (H, Dh), i.e. "
            "x.transpose(1, 2).reshape(B, L, D).",
            x.permute(0, 2, 3, 1).reshape(B, L, H * Dh),
        ),
    ]


def mha_parameter_count(d_model: int, n_heads: int) -> list[tuple[str, int]]:
    D = d_model
    return [
        ("count the biases too: each of the 4 nn.Linear(D, D) layers has D of them.", 4 * D * D),
        ("there are 4 projections: W^Q, W^K, W^V and the output W^O.", 3 * (D * D + D)),
        (
            "the heads share the D×D matrices: H heads of width D/H together have D×D per "
            "projection, so n_heads does not change the count.",
            n_heads * 4 * (D * D + D),
        ),
    ]


# -- 06 encoder and decoder ----------------------------------------------------------------


def _layer_norm(
    x, gamma, beta, eps, unbiased=False, std_eps=False, dim=-1, affine=True
) -> torch.Tensor:
    mean = x.mean(dim, keepdim=True)
    var = x.var(dim, keepdim=True, unbiased=unbiased)
    scale = var.sqrt() + eps if std_eps else torch.sqrt(var + eps)
    normed = (x - mean) / scale
    return normed * gamma + beta if affine else normed


def layer_norm(x, gamma, beta, eps) -> Mistakes:
    return [
        (
            "unbiased variance: torch.var and torch.std divide by D-1 by default; nn.LayerNorm "
            "divides by D. Use x.var(-1, unbiased=False, keepdim=True).",
            _layer_norm(x, gamma, beta, eps, unbiased=True),
        ),
        (
            "eps goes inside the square root: (x - mean) / sqrt(var + eps), not / (std + eps).",
            _layer_norm(x, gamma, beta, eps, std_eps=True),
        ),
        (
            "two mistakes from a well-known tutorial: unbiased std and std + eps. Use "
            "(x - mean) / sqrt(var(unbiased=False) + eps).",
            _layer_norm(x, gamma, beta, eps, unbiased=True, std_eps=True),
        ),
        (
            "normalise over the last dimension (the features of one position), not over the "
            "batch: that is BatchNorm.",
            _layer_norm(x, gamma, beta, eps, dim=0),
        ),
        (
            "apply the learned scale and shift after normalising: * gamma + beta.",
            _layer_norm(x, gamma, beta, eps, affine=False),
        ),
        (
            "use the eps argument you were given, not a fixed 1e-5.",
            _layer_norm(x, gamma, beta, 1e-5),
        ),
    ]


def feed_forward(x, w1, b1, w2, b2) -> Mistakes:
    return [
        (
            "apply ReLU between the two linear maps: FFN(x) = max(0, x W1 + b1) W2 + b2.",
            F.linear(F.linear(x, w1, b1), w2, b2),
        ),
        (
            "no activation after the second linear map: ReLU only on the inner layer.",
            torch.relu(F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)),
        ),
        ("the paper uses ReLU, not GELU (§3.3).", F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)),
    ]


def residual_post_norm(x, sublayer: Callable, norm: Callable) -> Mistakes:
    return [
        (
            "that is pre-norm, x + Sublayer(LayerNorm(x)); the paper's post-norm is "
            "LayerNorm(x + Sublayer(x)) (§3.1).",
            x + sublayer(norm(x)),
        ),
        ("you forgot the residual connection: add x before the norm.", norm(sublayer(x))),
        ("apply the LayerNorm after the sum.", x + sublayer(x)),
        (
            "normalise the sum x + Sublayer(x), not only the sub-layer's output.",
            x + norm(sublayer(x)),
        ),
    ]


def residual_pre_norm(x, sublayer: Callable, norm: Callable) -> Mistakes:
    return [
        (
            "that is post-norm, LayerNorm(x + Sublayer(x)); pre-norm is "
            "x + Sublayer(LayerNorm(x)).",
            norm(x + sublayer(x)),
        ),
        ("you forgot the residual connection: add x to the sub-layer's output.", sublayer(norm(x))),
        (
            "add the un-normalised x: x + Sublayer(LayerNorm(x)), not LayerNorm(x) + ...",
            norm(x) + sublayer(norm(x)),
        ),
        ("apply the LayerNorm to the sub-layer's input, before the sub-layer.", x + sublayer(x)),
    ]
