"""transformer_lib.train: loss, schedule, optimizer, the loop."""

import json

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from transformer_lib.train import (
    TrainState,
    label_smoothed_cross_entropy,
    make_optimizer,
    make_scheduler,
    train,
    transformer_lr,
)
from transformer_lib.train.loop import _loss

# Tiny models gain nothing from a second thread (see conftest.one_thread).
pytestmark = pytest.mark.usefixtures("one_thread")


# -- loss --------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("epsilon", [0.0, 0.1, 0.3])
def test_loss_equals_torch_cross_entropy_forward_and_backward(epsilon, reduction):
    # train() computes the loss with F.cross_entropy; the taught one must be the same loss
    logits = torch.randn(3, 5, 7, requires_grad=True)
    target = torch.randint(1, 7, (3, 5))
    target[0, 3:] = 0  # padding
    target[2, 1:] = 0
    ours = label_smoothed_cross_entropy(logits, target, epsilon, pad_id=0, reduction=reduction)
    (grad_ours,) = torch.autograd.grad(ours, logits)
    theirs = F.cross_entropy(
        logits.flatten(0, 1),
        target.flatten(),
        ignore_index=0,
        label_smoothing=epsilon,
        reduction=reduction,
    )
    (grad_theirs,) = torch.autograd.grad(theirs, logits)
    torch.testing.assert_close(ours, theirs)
    torch.testing.assert_close(grad_ours, grad_theirs)


@pytest.mark.parametrize("epsilon", [0.0, 0.1])
def test_the_training_loss_is_the_taught_one(tiny_model, epsilon):
    model = tiny_model(pad_id=1).eval()  # no dropout: both see the same logits
    src, tgt_in, tgt_out = torch.randint(2, 10, (3, 3, 6)).unbind()  # ids 2..9
    tgt_out[0, 4:] = tgt_out[2, 1:] = 1  # padding
    loss_sum, n_tokens = _loss(model, [src, tgt_in], tgt_out, epsilon)
    grads = torch.autograd.grad(loss_sum, list(model.parameters()))
    taught = label_smoothed_cross_entropy(
        model(src, tgt_in), tgt_out, epsilon, pad_id=1, reduction="sum"
    )
    taught_grads = torch.autograd.grad(taught, list(model.parameters()))
    torch.testing.assert_close(loss_sum, taught)
    for (name, _), grad, taught_grad in zip(model.named_parameters(), grads, taught_grads):
        torch.testing.assert_close(grad, taught_grad, msg=name)
    assert n_tokens == 18 - 2 - 5
    with pytest.raises(ValueError, match=r"`label_smoothing` must be a float in \[0, 1\)"):
        _loss(model, [src, tgt_in], tgt_out, 1.5)


def test_loss_without_padding_sum_and_per_token():
    logits, target = torch.randn(10, 6), torch.randint(0, 6, (10,))
    plain = F.cross_entropy(logits, target, label_smoothing=0.1, reduction="sum")
    ours = label_smoothed_cross_entropy(logits, target, 0.1, pad_id=None, reduction="sum")
    torch.testing.assert_close(ours, plain)
    per_token = label_smoothed_cross_entropy(logits, target, 0.1, pad_id=None, reduction="none")
    assert per_token.shape == (10,)
    torch.testing.assert_close(per_token.sum(), plain)


def test_smoothing_raises_the_loss_of_a_confident_right_answer():
    logits = torch.tensor([[10.0, 0.0, 0.0, 0.0]])
    target = torch.tensor([0])
    sharp = label_smoothed_cross_entropy(logits, target, 0.0, pad_id=None)
    smooth = label_smoothed_cross_entropy(logits, target, 0.1, pad_id=None)
    assert smooth > sharp  # over-confidence is penalised


def test_loss_errors():
    logits = torch.randn(2, 3, 5)
    with pytest.raises(ValueError, match="`target` must be the shape of logits"):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 4, dtype=torch.long))
    with pytest.raises(TypeError, match="`target` must be an integer tensor"):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 3))
    with pytest.raises(ValueError, match="`epsilon` must be a float in"):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 3, dtype=torch.long), 1.5)
    with pytest.raises(ValueError, match=r"`target` must be token ids in \[0, 5\)"):
        label_smoothed_cross_entropy(logits, torch.full((2, 3), 9))


# -- schedule and optimizer ---------------------------------------------------------------------


def test_transformer_lr_matches_the_formula_and_peaks_at_warmup():
    d_model, warmup = 512, 4000
    for step in (1, 100, 4000, 10000):
        expected = d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)
        assert transformer_lr(step, d_model, warmup) == pytest.approx(expected)
    lrs = [transformer_lr(s, d_model, warmup) for s in range(1, 20001, 50)]
    peak = max(range(len(lrs)), key=lrs.__getitem__)
    assert abs(1 + 50 * peak - warmup) <= 50
    assert transformer_lr(2, 64, 10, factor=2.0) == pytest.approx(2 * transformer_lr(2, 64, 10))
    with pytest.raises(ValueError, match="`step` must be an int >= 1"):
        transformer_lr(0, 512)


def test_scheduler_follows_transformer_lr_from_step_one(tiny_model):
    model = tiny_model()
    optimizer = make_optimizer(model)
    scheduler = make_scheduler(optimizer, 16, warmup=5)
    seen = []
    for _ in range(8):
        seen.append(optimizer.param_groups[0]["lr"])  # the rate the next update uses
        optimizer.step()
        scheduler.step()
    assert seen == pytest.approx([transformer_lr(k, 16, 5) for k in range(1, 9)])
    optimizer = make_optimizer(model)
    scheduler = make_scheduler(optimizer, 16, warmup=5, peak_lr=1e-3)
    lrs = [scheduler.lr_lambdas[0](index) for index in range(20)]
    assert max(lrs) == pytest.approx(1e-3) and lrs.index(max(lrs)) == 4  # step 5 = warmup
    assert "factor" in scheduler.state_dict()["lr_lambdas"][0]  # settings saved, not code
    json.dumps(scheduler.state_dict())  # checkpoints store it as JSON
    scheduler = make_scheduler(make_optimizer(model), 16, warmup=5)
    assert repr(scheduler.lr_lambdas[0]) == "_TransformerLR(d_model=16, warmup=5, factor=1.0)"


def test_optimizer_is_the_papers_adam(tiny_model):
    model = tiny_model()
    group = make_optimizer(model).param_groups[0]
    assert (group["betas"], group["eps"], group["lr"]) == ((0.9, 0.98), 1e-9, 1.0)
    with pytest.raises(ValueError, match="`optimizer` must be built with lr=1.0"):
        make_scheduler(torch.optim.Adam(model.parameters(), lr=1e-3), 16)
    with pytest.raises(TypeError, match="`model` must be an nn.Module"):
        make_optimizer([torch.zeros(1)])


# -- the loop ----------------------------------------------------------------------------------


def test_train_learns_the_copy_task_and_reports_progress(fresh_training, copy_batches):
    model, optimizer, scheduler = fresh_training(dropout=0.0, d_model=32, d_ff=64)
    records = []
    history = train(
        model, copy_batches, optimizer, scheduler, steps=120, log_every=20, callback=records.append
    )
    assert history["step"] == [20, 40, 60, 80, 100, 120]
    assert [r["step"] for r in records] == history["step"]
    assert set(records[0]) >= {
        "step",
        "epoch",
        "loss",
        "lr",
        "grad_norm",
        "tokens_per_s",
        "seconds",
    }
    assert history["loss"][-1] < 0.6 * history["loss"][0]
    assert history["seconds"] == sorted(history["seconds"])
    assert model.training  # the mode it was in before


def test_train_stops_on_callback_epochs_and_accepts_tuples(fresh_training, copy_batches):
    model, optimizer, scheduler = fresh_training()
    history = train(
        model,
        copy_batches,
        optimizer,
        scheduler,
        steps=100,
        log_every=1,
        callback=lambda record: record["step"] >= 3,
    )
    assert history["step"][-1] == 3
    state = TrainState()
    tuples = [(b.src, b.tgt_in, b.tgt_out) for b in copy_batches(0)]
    train(model, tuples, optimizer, epochs=2, state=state)
    assert (state.step, state.epoch, state.batch_in_epoch) == (8, 2, 0)
    with pytest.raises(ValueError, match="`steps/epochs` must be given"):
        train(model, tuples, optimizer)
    with pytest.raises(TypeError, match="`batches` must be data.Batch objects"):
        train(model, [torch.zeros(2)], optimizer, steps=1)
    with pytest.raises(ValueError, match="`batches` must be a non-empty iterable"):
        train(model, [], optimizer, steps=1)
    with pytest.raises(
        TypeError, match=r"`model` must be a CourseModel \(transformer_lib.Transformer"
    ):
        train(nn.Linear(2, 2), tuples, optimizer, steps=1)


def test_train_pads_with_the_models_pad_id(tiny_model, copy_batches):
    # pad id 1 (<unk>): the 0s that collate pads with become real target tokens
    model = tiny_model(pad_id=1)
    state = TrainState()
    train(model, copy_batches, make_optimizer(model), steps=1, state=state)
    assert state.tokens == sum(b.tgt_out.numel() for b in copy_batches(0)[:1])


def test_a_nan_loss_stops_training_before_it_reaches_the_checkpoint(
    tmp_path, fresh_training, copy_batches
):
    from transformer_lib.train.checkpoint import load_checkpoint

    model, optimizer, scheduler = fresh_training()
    calls = []

    def poison(module, inputs, logits):  # the 5th forward pass (step 5) gives NaN logits
        calls.append(1)
        return logits * float("nan") if len(calls) == 5 else logits

    model.register_forward_hook(poison)
    state, path = TrainState(), tmp_path / "run"
    with pytest.raises(FloatingPointError, match="`loss` must be finite; got nan"):
        train(
            model,
            copy_batches,
            optimizer,
            scheduler,
            steps=10,
            log_every=3,  # the check does not wait for the log
            state=state,
            checkpoint_dir=path,
            checkpoint_every=1,
        )
    assert state.step == 4
    saved = load_checkpoint(path)
    assert saved.state.step == 4
    for name, value in saved.model.state_dict().items():
        assert torch.isfinite(value).all(), name
        assert torch.equal(value, model.state_dict()[name]), name  # step 5 never applied


def test_weights_gone_non_finite_are_never_checkpointed(tmp_path, tiny_model, copy_batches):
    from transformer_lib.train.checkpoint import load_checkpoint

    model = tiny_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    updates = []

    def overflow(optimizer, args, kwargs):  # the 3rd update overflows one weight
        updates.append(1)
        if len(updates) == 3:
            model.output.bias.data[0] = float("inf")

    optimizer.register_step_post_hook(overflow)
    path = tmp_path / "run"
    with pytest.raises(FloatingPointError, match="`model` must be finite weights before a"):
        train(model, copy_batches, optimizer, steps=10, checkpoint_dir=path, checkpoint_every=1)
    saved = load_checkpoint(path)
    assert saved.state.step == 2
    assert all(torch.isfinite(value).all() for value in saved.model.state_dict().values())


def test_checkpoint_every_needs_a_checkpoint_dir(tiny_model, copy_batches):
    model = tiny_model()
    with pytest.raises(ValueError, match="`checkpoint_every` must be given together with"):
        train(model, copy_batches, make_optimizer(model), steps=2, checkpoint_every=1)
