"""No host sync in a training or a decoding step: both run on the `meta` device.

A tensor on `meta` has a shape and a dtype but no values, so anything that reads a value
on the host (``.item()``, ``.tolist()``, ``bool(tensor)``, a branch on data) raises. On a
GPU each such read would make Python wait for the device; a step that runs here has none
(the training loop adds one on purpose: its finite-loss check, see ``train.loop``).
"""

import pytest
import torch

from transformer_lib import Transformer, TransformerConfig
from transformer_lib.data.vocab import BOS_ID, EOS_ID, PAD_ID
from transformer_lib.inference.cache import IncrementalDecoder
from transformer_lib.inference.decode import _next_log_probs
from transformer_lib.model import masks
from transformer_lib.train import make_optimizer, make_scheduler
from transformer_lib.train.loop import _backward, _loss

V = 50
CONFIG = TransformerConfig.small(V, d_model=32, n_heads=4, d_ff=64, max_len=20)


def _ids(*shape: int) -> torch.Tensor:
    return torch.empty(shape, dtype=torch.long, device="meta")  # ids without values


@pytest.fixture
def model() -> Transformer:
    with torch.device("meta"):
        return Transformer(CONFIG)


def test_a_training_step_reads_no_value(model):
    optimizer = make_optimizer(model)
    scheduler = make_scheduler(optimizer, CONFIG.d_model, warmup=4)
    src, tgt_in, tgt_out = _ids(3, 7), _ids(3, 5), _ids(3, 5)
    loss_sum, n_tokens = _loss(model.train(), [src, tgt_in], tgt_out, label_smoothing=0.1)
    grad_norm = _backward(model, optimizer, loss_sum, n_tokens, clip_norm=1.0)
    optimizer.step()
    scheduler.step()
    assert grad_norm.device.type == "meta" and loss_sum.shape == ()
    assert all(p.grad is not None for p in model.parameters())


@pytest.mark.parametrize("cache", [False, True], ids=["plain", "incremental"])
def test_a_decoding_step_reads_no_value(model, cache):
    model.eval()
    src, tokens = _ids(3, 7), _ids(3, 4)
    with torch.no_grad():
        src_mask = masks.padding_mask(src, PAD_ID)
        memory = model.encode(src, src_mask)
        stepper = None
        if cache:
            stepper = IncrementalDecoder(model, memory, src_mask)
            for t in range(1, tokens.size(1)):
                stepper.step(tokens[:, :t])
        empty = torch.zeros(3, dtype=torch.bool, device="meta")
        log_probs = _next_log_probs(
            model, tokens, memory, src_mask, (PAD_ID, BOS_ID), empty, EOS_ID, stepper
        )
    assert log_probs.shape == (3, V) and log_probs.device.type == "meta"
