"""Exercises of notebooks 00 introduction, 01 embeddings and 02 positional encoding: other
right answers students write, and what a wrong answer outside the catalogue is told.

The catalogues themselves (each mistake gets its own hint) are tested for every check in
``tests/test_exercises.py``.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from transformer_lib import Transformer
from transformer_lib.model.embeddings import sinusoidal_positional_encoding
from transformer_lib.teaching import exercises as ex


def shape_by_running_the_model(config, batch_size, src_len, tgt_len):
    src = torch.zeros(batch_size, src_len, dtype=torch.long)
    tgt = torch.zeros(batch_size, tgt_len, dtype=torch.long)
    with torch.no_grad():
        return Transformer(config).eval()(src, tgt).shape  # a torch.Size


def stable_softmax(logits):
    shifted = logits - logits.max(dim=-1, keepdim=True).values  # (B, T, V), max 0 per row
    return shifted.exp() / shifted.exp().sum(dim=-1, keepdim=True)


def pe_in_log_space(max_len, d_model):
    """The Annotated Transformer's frequencies: exp(-2i · ln 10000 / d_model)."""
    position = torch.arange(max_len).float()[:, None]  # (L, 1)
    omega = torch.exp(torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model))
    table = torch.zeros(max_len, d_model)
    table[:, 0::2] = torch.sin(position * omega)
    table[:, 1::2] = torch.cos(position * omega)
    return table


def pe_stacked(max_len, d_model):
    position = torch.arange(max_len).float()[:, None]  # (L, 1)
    angle = position / 10000 ** (torch.arange(0, d_model, 2).float() / d_model)  # (L, D/2)
    return torch.stack([angle.sin(), angle.cos()], dim=-1).reshape(max_len, d_model)


def shift_matrix(offset, d_model, sign=1.0):
    omega = 1 / 10000 ** (torch.arange(0, d_model, 2).float() / d_model)
    blocks = []
    for c, s in zip(torch.cos(offset * omega), torch.sin(offset * omega)):
        blocks.append(torch.tensor([[c, sign * s], [-sign * s, c]]))
    return torch.block_diag(*blocks)


def shift_matrix_float64(offset, d_model):
    omega = 1 / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angle = offset * omega  # (D/2,)
    matrix = torch.zeros(d_model, d_model, dtype=torch.float64)
    matrix[0::2, 0::2] = matrix[1::2, 1::2] = torch.diag(angle.cos())
    matrix[0::2, 1::2] = torch.diag(angle.sin())
    matrix[1::2, 0::2] = torch.diag(-angle.sin())
    return matrix  # float64 is as right as float32 here


CORRECT = [
    (ex.check_logits_shape, lambda c, b, s, t: (b, t, c.tgt_vocab_size)),
    (ex.check_logits_shape, lambda c, b, s, t: [b, t, c.tgt_vocab_size]),
    (ex.check_logits_shape, lambda c, b, s, t: torch.Size([b, t, c.tgt_vocab_size])),
    (ex.check_logits_shape, shape_by_running_the_model),
    (ex.check_next_token_probabilities, lambda z: F.softmax(z, dim=2)),
    (ex.check_next_token_probabilities, lambda z: z.softmax(-1)),
    (ex.check_next_token_probabilities, lambda z: F.log_softmax(z, dim=-1).exp()),
    (ex.check_next_token_probabilities, stable_softmax),
    (ex.check_embedding_lookup, lambda ids, w: F.one_hot(ids, w.size(0)).float() @ w),
    (ex.check_embedding_lookup, lambda ids, w: F.one_hot(ids, num_classes=len(w)).to(w) @ w),
    (ex.check_embedding_lookup, lambda ids, w: w[ids]),
    (ex.check_embedding_lookup, F.embedding),
    (ex.check_scaled_embedding, lambda ids, w: F.embedding(ids, w) * math.sqrt(w.size(1))),
    (ex.check_scaled_embedding, lambda ids, w: w[ids] * w.shape[-1] ** 0.5),
    (ex.check_positional_encoding, sinusoidal_positional_encoding),
    (ex.check_positional_encoding, pe_in_log_space),
    (ex.check_positional_encoding, pe_stacked),
    (ex.check_pe_relative_shift, shift_matrix),
    (ex.check_pe_relative_shift, shift_matrix_float64),
]


@pytest.mark.parametrize(("check", "fn"), CORRECT)
def test_a_right_answer_passes_with_a_tick(check, fn, capsys):
    check(fn)
    assert capsys.readouterr().out.startswith("✓ ")


# -- wrong answers outside the catalogues get a message that still says what to look at ----

UNCATALOGUED = [
    (
        ex.check_logits_shape,
        lambda c, b, s, t: (b, t, c.tgt_vocab_size + 1),
        r"you returned \(2, 3, 12\).*T=3.*tgt_vocab_size=11",
    ),
    (ex.check_logits_shape, lambda c, b, s, t: None, r"you returned None.*\(B, T, V\)"),
    (ex.check_next_token_probabilities, lambda z: torch.softmax(2 * z, dim=-1), "sum(ming)? to 1"),
    (ex.check_next_token_probabilities, lambda z: z[..., :3], r"wrong shape.*\(B, T, V\)"),
    (ex.check_embedding_lookup, lambda ids, w: w[ids + 1], r"differs.*Row ids\[b, l\]"),
    (ex.check_embedding_lookup, lambda ids, w: w[ids].tolist(), "must be a torch.Tensor"),
    (ex.check_scaled_embedding, lambda ids, w: w[ids] * 5.0, r"at index .* expected"),
    (ex.check_positional_encoding, lambda n, d: pe_stacked(n, d).numpy(), "must be a torch.Tensor"),
    (ex.check_positional_encoding, lambda n, d: torch.zeros(n, d), r"PE\[pos, 2i\] = sin"),
    (ex.check_pe_relative_shift, lambda k, d: torch.eye(d) * 2, r"differs.*rotates by offset"),
    (
        ex.check_pe_relative_shift,
        lambda k, d: torch.eye(d // 2),
        r"wrong shape.*\(d_model, d_model\)",
    ),
]


@pytest.mark.parametrize(
    ("check", "fn", "match"), UNCATALOGUED, ids=[f"{c.__name__}-{m}" for c, _, m in UNCATALOGUED]
)
def test_an_uncatalogued_wrong_answer_gets_a_generic_message(check, fn, match):
    with pytest.raises(ex.ExerciseFailed, match=match) as info:
        check(fn)
    assert not any(mistake.hint in str(info.value) for mistake in check.mistakes)


def test_the_reference_of_the_logits_shape_runs_the_library_model():
    config = ex.check_logits_shape.__globals__["_CONFIG"]
    assert ex.check_logits_shape.reference(config, 2, 5, 3) == (2, 3, config.tgt_vocab_size)


def test_every_size_of_the_logits_shape_case_differs_so_each_mistake_is_recognisable():
    config = ex.check_logits_shape.__globals__["_CONFIG"]
    sizes = [2, 5, 3, config.d_model, config.src_vocab_size, config.tgt_vocab_size]
    assert len(set(sizes)) == len(sizes)


def test_naive_softmax_passes_ordinary_logits_and_is_caught_on_large_ones():
    def naive(logits):
        return logits.exp() / logits.exp().sum(dim=-1, keepdim=True)

    with pytest.raises(ex.ExerciseFailed, match="for large logits.*subtract each row's maximum"):
        ex.check_next_token_probabilities(naive)


def test_a_one_hot_crash_gets_the_num_classes_hint_even_when_written_differently():
    def one_hot_matmul(ids, weight):
        return torch.matmul(F.one_hot(ids).float(), weight)

    with pytest.raises(ex.ExerciseFailed, match="num_classes=weight.size\\(0\\)"):
        ex.check_embedding_lookup(one_hot_matmul)


def test_the_shift_reference_is_read_off_the_library_table():
    table = sinusoidal_positional_encoding(40, 8)  # (L, D)
    matrix = ex.check_pe_relative_shift.reference(5, 8)  # (D, D)
    torch.testing.assert_close(table[:-5] @ matrix.T, table[5:], atol=1e-5, rtol=0)


def test_a_numpy_table_is_told_to_return_a_tensor():
    with pytest.raises(ex.ExerciseFailed, match="got ndarray"):
        ex.check_positional_encoding(lambda n, d: np.zeros((n, d), dtype=np.float32))
