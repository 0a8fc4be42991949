"""Incremental decoding gives what the full decoder gives, one position at a time."""

import pytest
import torch

from transformer_lib.inference.cache import IncrementalDecoder
from transformer_lib.model import masks
from transformer_lib.model.reference import TorchTransformer

V = 10  # conftest's toy vocabularies
SIZES = dict(d_model=32, n_heads=4, d_ff=64, n_encoder_layers=2, max_len=20)
CONFIGS = {
    "post-norm, tied output": {},
    "pre-norm, final norm": dict(norm_first=True),
    "shared embeddings": dict(share_embeddings=True),
    "untied, learned positions": dict(tie_output=False, learned_positions=True),
    "learned positions, GELU": dict(learned_positions=True, activation="gelu"),
}


def _tokens(batch: int, length: int) -> torch.Tensor:
    return torch.randint(4, V, (batch, length))


def _padded_inputs(model):
    """A source with a shorter sentence, a target with padding after a finished output."""
    src, tgt = _tokens(3, 7), _tokens(3, 6)
    src[0, 5:] = 0
    tgt[1, 4:] = 0
    src_mask = masks.padding_mask(src, 0)
    return model.encode(src, src_mask), src_mask, tgt


@pytest.mark.parametrize("overrides", CONFIGS.values(), ids=CONFIGS)
def test_each_step_equals_the_full_decoders_position(tiny_model, overrides):
    model = tiny_model(**{**SIZES, **overrides}).eval()
    with torch.no_grad():
        memory, src_mask, tgt = _padded_inputs(model)
        full = model.decode(tgt, memory, src_mask)  # (B, T, V); causal: position t sees <= t
        decoder = IncrementalDecoder(model, memory, src_mask)
        for t in range(1, tgt.size(1) + 1):
            torch.testing.assert_close(decoder.step(tgt[:, :t]), full[:, t - 1])  # (B, V)
            assert decoder.length == t


def test_reordered_rows_decode_as_those_rows_would(tiny_model):
    model = tiny_model(**SIZES).eval()
    rows = torch.tensor([2, 0, 0])  # e.g. beams: row 2, then row 0 twice
    with torch.no_grad():
        memory, src_mask, tgt = _padded_inputs(model)
        decoder = IncrementalDecoder(model, memory, src_mask)
        for t in range(1, 4):
            decoder.step(tgt[:, :t])
        decoder.reorder(rows)
        expected = model.decode(tgt[rows], memory[rows], src_mask[rows])[:, 3]
        torch.testing.assert_close(decoder.step(tgt[rows, :4]), expected)


def test_a_step_out_of_turn_is_refused(tiny_model):
    model = tiny_model(**SIZES).eval()
    memory, src_mask, tgt = _padded_inputs(model)
    decoder = IncrementalDecoder(model, memory, src_mask)
    decoder.step(tgt[:, :2])
    with pytest.raises(ValueError, match=r"`tokens` must be the sequence of the last step and "
                       r"at least one more token, > 2 positions; got 2 positions\. Start a new"):  # fmt: skip
        decoder.step(tgt[:, :2])


def test_a_step_with_other_rows_is_refused(tiny_model):
    model = tiny_model(**SIZES).eval()
    memory, src_mask, tgt = _padded_inputs(model)
    decoder = IncrementalDecoder(model, memory, src_mask)
    decoder.step(tgt[:, :1])
    with pytest.raises(ValueError, match=r"`tokens` must be the 3 rows of the earlier steps; "
                       r"got 2 rows\. Beam search changes rows with reorder\(\)"):  # fmt: skip
        decoder.step(tgt[:2, :2])


def test_several_new_tokens_in_one_step_equal_one_at_a_time(tiny_model):
    model = tiny_model(**SIZES).eval()
    with torch.no_grad():
        memory, src_mask, tgt = _padded_inputs(model)
        full = model.decode(tgt, memory, src_mask)
        decoder = IncrementalDecoder(model, memory, src_mask)
        decoder.step(tgt[:, :1])
        torch.testing.assert_close(decoder.step(tgt[:, :4]), full[:, 3])


def test_pytorchs_stacks_have_no_incremental_decoder(tiny_model):
    mirror = TorchTransformer.from_model(tiny_model(**SIZES))
    memory, src_mask, _ = _padded_inputs(mirror)
    with pytest.raises(TypeError, match=r"`model` must be a model with a cached step "
                       r"\(generation_stack\); got TorchTransformer"):  # fmt: skip
        IncrementalDecoder(mirror, memory, src_mask)
