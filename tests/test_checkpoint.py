"""transformer_lib.checkpoint: safetensors + JSON checkpoints and an exact resume."""

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from transformer_lib.checkpoint import load_checkpoint, resume, save_checkpoint
from transformer_lib.train import TrainState, train

# Tiny models gain nothing from a second thread (see conftest.one_thread).
pytestmark = pytest.mark.usefixtures("one_thread")


LIB = Path(__file__).resolve().parents[1] / "transformer_lib"


def test_resume_gives_the_same_weights_as_one_uninterrupted_run(
    tmp_path, fresh_training, copy_batches
):
    # dropout on, data reshuffled each epoch, the break in the middle of an epoch
    model, optimizer, scheduler = fresh_training()
    train(model, copy_batches, optimizer, scheduler, steps=10)
    reference = {k: v.clone() for k, v in model.state_dict().items()}

    model, optimizer, scheduler = fresh_training()
    train(model, copy_batches, optimizer, scheduler, steps=6, checkpoint_dir=tmp_path / "run")
    torch.manual_seed(123)  # a later process: different RNG, new objects
    model, optimizer, scheduler = fresh_training(seed=7)
    state = resume(tmp_path / "run", model, optimizer, scheduler)
    assert (state.step, state.epoch, state.batch_in_epoch) == (6, 1, 2)
    train(model, copy_batches, optimizer, scheduler, steps=10, state=state)
    for name, value in model.state_dict().items():
        assert torch.equal(value, reference[name]), name


def test_train_writes_a_checkpoint_every_checkpoint_every_steps_and_at_the_end(
    tmp_path, fresh_training, copy_batches
):
    model, optimizer, scheduler = fresh_training()
    path, seen = tmp_path / "run", []

    def look(record):  # called after each step, before that step's checkpoint
        if path.exists():
            seen.append((record["step"], load_checkpoint(path).state.step))

    train(
        model,
        copy_batches,
        optimizer,
        scheduler,
        steps=6,
        log_every=1,
        callback=look,
        checkpoint_dir=path,
        checkpoint_every=4,
    )
    assert seen == [(5, 4), (6, 4)]
    assert load_checkpoint(path).state.step == 6


def test_checkpoint_round_trip_builds_the_model_from_its_config(
    tmp_path, fresh_training, src_vocab, tgt_vocab
):
    model, optimizer, scheduler = fresh_training()
    state = TrainState(step=3, history={"loss": [1.5]})
    path = save_checkpoint(
        tmp_path / "ckpt", model, optimizer, scheduler, state=state, vocabs=(src_vocab, tgt_vocab)
    )
    assert sorted(p.name for p in path.iterdir()) == [
        "checkpoint.json",
        "model.safetensors",
        "training.safetensors",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]  # no temporary folders left
    meta = json.loads((path / "checkpoint.json").read_text())
    assert meta["aliases"] == {
        "output.weight": "src_embed.embedding.weight",
        "tgt_embed.embedding.weight": "src_embed.embedding.weight",
    }
    loaded = load_checkpoint(path)
    assert loaded.config == model.config and loaded.src_vocab == src_vocab
    assert loaded.tgt_vocab == tgt_vocab
    assert loaded.state.step == 3 and loaded.state.history == {"loss": [1.5]}
    for (name, a), b in zip(model.state_dict().items(), loaded.model.state_dict().values()):
        assert torch.equal(a, b), name
    assert loaded.model.output.weight is loaded.model.src_embed.embedding.weight  # still tied
    save_checkpoint(path, model)  # overwriting an existing checkpoint is fine
    assert load_checkpoint(path).state.step == 0


def test_broken_checkpoints_give_clear_errors(tmp_path, fresh_training, tiny_model):
    model, optimizer, _ = fresh_training()
    path = save_checkpoint(tmp_path / "ckpt", model, optimizer)
    weights = path / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:-100])
    with pytest.raises(ValueError, match="is truncated"):
        load_checkpoint(path)
    weights.write_bytes(data[:50] + bytes([data[50] ^ 1]) + data[51:])
    with pytest.raises(ValueError, match="corrupted or from another checkpoint"):
        load_checkpoint(path)
    weights.write_bytes(data)
    other = tiny_model(d_model=32, d_ff=64)
    with pytest.raises(ValueError, match=r"saved with d_model=16 \(model has 32\)"):
        load_checkpoint(path, other)
    (path / "checkpoint.json").write_text("{not json")
    with pytest.raises(ValueError, match="must be valid JSON"):
        load_checkpoint(path)
    with pytest.raises(FileNotFoundError, match="a checkpoint folder containing checkpoint"):
        load_checkpoint(tmp_path / "missing")
    inference_only = save_checkpoint(tmp_path / "weights-only", model)
    with pytest.raises(FileNotFoundError, match="saved without an optimizer"):
        resume(inference_only, model, optimizer)
    with pytest.raises(TypeError, match="`model` must be a model exposing config"):
        save_checkpoint(tmp_path / "linear", nn.Linear(2, 2))


def test_no_pickle_anywhere_in_the_library():
    sources = sorted(LIB.rglob("*.py"))  # subpackages (train/, checkpoint/, ...) included
    assert LIB / "checkpoint" / "save_load.py" in sources
    for source in sources:
        text = source.read_text()
        where = source.relative_to(LIB).as_posix()
        assert "torch.load(" not in text and "import pickle" not in text, where
