"""transformer_lib.train.checkpoint: safetensors + JSON checkpoints and an exact resume."""

import json
import random
from pathlib import Path

import pytest
import torch
from torch import nn

from transformer_lib.train import TrainState, train
from transformer_lib.train.checkpoint import load_checkpoint, resume, save_checkpoint
from transformer_lib.train.checkpoint._files import content_sha256

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
    )  # this save's folder inside ckpt
    assert sorted(p.name for p in path.iterdir()) == [
        "checkpoint.json",
        "model.safetensors",
        "training.safetensors",
    ]
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt"]  # no temporary folders left
    meta = json.loads((path / "checkpoint.json").read_text())
    assert meta["format"] == "transformer_lib.checkpoint/2"  # what earlier versions wrote
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
    save_checkpoint(tmp_path / "ckpt", model)  # overwriting an existing checkpoint is fine
    assert load_checkpoint(tmp_path / "ckpt").state.step == 0
    assert load_checkpoint(path).state.step == 3  # the earlier save, unchanged


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
    with pytest.raises(
        TypeError, match=r"`model` must be a CourseModel \(transformer_lib.Transformer"
    ):
        save_checkpoint(tmp_path / "linear", nn.Linear(2, 2))


def test_no_pickle_anywhere_in_the_library():
    sources = sorted(LIB.rglob("*.py"))  # subpackages (train/, checkpoint/, ...) included
    assert LIB / "train" / "checkpoint" / "save_load.py" in sources
    for source in sources:
        text = source.read_text()
        where = source.relative_to(LIB).as_posix()
        assert "torch.load(" not in text and "import pickle" not in text, where


# -- corruption, mismatches ----------------------------------------------------------------------


def _same(a, b) -> bool:
    """Two loaded checkpoints hold the same config, vocabularies, state and weights."""
    same = (a.config, a.src_vocab, a.tgt_vocab, a.state) == (
        b.config,
        b.src_vocab,
        b.tgt_vocab,
        b.state,
    )
    weights = zip(a.model.state_dict().values(), b.model.state_dict().values())
    return same and all(torch.equal(x, y) for x, y in weights)


def test_a_flipped_bit_anywhere_in_checkpoint_json_is_an_error(
    tmp_path, fresh_training, src_vocab, tgt_vocab
):
    model, optimizer, scheduler = fresh_training()
    state = TrainState(step=3, epoch=1, history={"loss": [1.5]})
    path = save_checkpoint(
        tmp_path / "c", model, optimizer, scheduler, state=state, vocabs=(src_vocab, tgt_vocab)
    )
    original = load_checkpoint(path, optimizer=fresh_training()[1])
    meta = path / "checkpoint.json"
    data = meta.read_bytes()
    rng = random.Random(0)
    for bit in rng.sample(range(8 * len(data)), 300):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        meta.write_bytes(bytes(flipped))
        try:
            loaded = load_checkpoint(path, optimizer=fresh_training()[1])
        except ValueError as error:  # the clear error, naming the file
            assert "checkpoint.json" in str(error), (bit, str(error))
        else:
            assert _same(loaded, original), bit  # a harmless flip (impossible by design)
    meta.write_bytes(data)
    assert _same(load_checkpoint(path), original)


def _rewrite(path: Path, change) -> None:
    """Edit checkpoint.json with ``change(meta)`` and seal it again, as another program could."""
    meta = json.loads((path / "checkpoint.json").read_text())
    change(meta)
    if "sha256" in meta:  # (one case removes it)
        meta["sha256"] = content_sha256(meta)
    (path / "checkpoint.json").write_text(json.dumps(meta))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda m: m.pop("files"), r"checkpoint.json\['files'\]` must be present"),
        (lambda m: m.pop("state"), r"checkpoint.json\['state'\]` must be present"),
        (lambda m: m["state"].pop("step"), r"\['state'\]\['step'\]` must be present"),
        (lambda m: m.update(state=[]), r"\['state'\]` must be an object; got list"),
        (lambda m: m["state"].update(step="3"), r"\['state'\]\['step'\]` must be an int"),
        (lambda m: m.update(aliases=None), r"\['aliases'\]` must be an object"),
        (
            lambda m: m["files"]["model.safetensors"].pop("sha256"),
            r"\['files'\]\['model.safetensors'\]\['sha256'\]` must be present",
        ),
        (lambda m: m["config"].update(d_model="16"), r"\['config'\]` must be a valid entry"),
        (lambda m: m["config"].update(colour=1), r"\['config'\]` must be a valid entry"),
        (lambda m: m["state"].update(colour=1), r"\['state'\]` must be a valid entry"),
        (lambda m: m.update(src_vocab={"t": 1}), r"\['src_vocab'\]` must be a valid entry"),
        (lambda m: m.pop("optimizer"), r"\['optimizer'\]` must be present"),
        (lambda m: m.pop("sha256"), r"\['sha256'\]` must be present"),
        (
            lambda m: m["files"].update({"../../x": m["files"]["model.safetensors"]}),
            r"\['files'\]` must be entries for model.safetensors and training.safetensors "
            r"only; got an entry '\.\./\.\./x'",
        ),
        (lambda m: m.update(format=5), "must be a checkpoint in the format"),
    ],
)
def test_a_wrong_entry_in_checkpoint_json_is_named(tmp_path, fresh_training, change, message):
    model, optimizer, scheduler = fresh_training()
    path = save_checkpoint(tmp_path / "c", model, optimizer, scheduler)
    _rewrite(path, change)
    with pytest.raises(ValueError, match=message):
        resume(path, *fresh_training())


def test_an_edited_checkpoint_json_is_rejected_and_a_format_1_one_still_loads(
    tmp_path, fresh_training
):
    model, optimizer, _ = fresh_training()
    path = save_checkpoint(tmp_path / "c", model, optimizer, state=TrainState(step=4))
    text = (path / "checkpoint.json").read_text()
    (path / "checkpoint.json").write_text(text.replace('"step": 4', '"step": 5'))
    with pytest.raises(ValueError, match="must be the content its entry 'sha256' vouches for"):
        load_checkpoint(path)
    legacy = json.loads(text)  # written by the previous version: no checksum of its own
    del legacy["sha256"]
    legacy["format"] = "transformer_lib.checkpoint/1"  # a name on disk, not the module's
    (path / "checkpoint.json").write_text(json.dumps(legacy))
    assert load_checkpoint(path).state.step == 4


def test_tie_and_config_mismatches_are_errors(tmp_path, tiny_model):
    untied = tiny_model(share_embeddings=False, tie_output=False)
    tied = tiny_model()  # the same shapes
    path = save_checkpoint(tmp_path / "untied", untied)
    with pytest.raises(ValueError, match=r"saved with share_embeddings=False \(model has True\)"):
        load_checkpoint(path, tied)
    with pytest.raises(ValueError, match=r"saved with share_embeddings=True \(model has False\)"):
        load_checkpoint(save_checkpoint(tmp_path / "tied", tied), untied)
    # the same config, but the weights were untied by hand
    untied_by_hand = tiny_model()
    untied_by_hand.output.weight = nn.Parameter(untied_by_hand.output.weight.detach().clone())
    path = save_checkpoint(tmp_path / "by-hand", untied_by_hand)
    with pytest.raises(ValueError, match="must be tied like the checkpoint"):
        load_checkpoint(path, tiny_model())
    with pytest.raises(ValueError, match=r"saved with pad_id=0 \(model has 1\)"):
        load_checkpoint(save_checkpoint(tmp_path / "tied", tied), tiny_model(pad_id=1))
    load_checkpoint(tmp_path / "tied", tiny_model(dropout=0.0))  # dropout may differ
