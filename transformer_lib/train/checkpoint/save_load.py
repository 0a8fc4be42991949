"""Saving a model (and its training state) to a checkpoint folder, loading it, resuming."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from safetensors.torch import save as save_tensors
from torch import nn

from transformer_lib._checks import fail
from transformer_lib.data.vocab import Vocab
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import check_course_model
from transformer_lib.model.encoder_only import EncoderOnlyModel
from transformer_lib.model.language_model import LanguageModel
from transformer_lib.model.transformer import Transformer
from transformer_lib.train.checkpoint import _store
from transformer_lib.train.checkpoint._files import (
    DAMAGED,
    FORMAT,
    META_FILE,
    MODEL_FILE,
    TRAINING_FILE,
    meta_bytes,
    read_meta,
    read_tensors,
    record,
)
from transformer_lib.train.checkpoint._training import load_training, training_tensors
from transformer_lib.train.state import TrainState

__all__ = ["Checkpoint", "save_checkpoint", "load_checkpoint", "resume"]

_READS = 20  # how often a load follows LATEST to a newer save before it gives up


@dataclass
class Checkpoint:
    """What :func:`load_checkpoint` found (``model`` is the one it loaded into)."""

    model: nn.Module
    config: TransformerConfig
    src_vocab: Vocab | None
    tgt_vocab: Vocab | None
    state: TrainState
    path: Path


def _aliases(model: nn.Module) -> dict[str, str]:
    """{state-dict name: the first name sharing its storage} (a tied or shared matrix)."""
    aliases, seen = {}, {}
    for name, tensor in model.state_dict().items():
        key = (tensor.data_ptr(), tuple(tensor.shape), tensor.stride(), tensor.dtype)
        if tensor.numel() and key in seen:
            aliases[name] = seen[key]
        else:
            seen[key] = name
    return aliases


def _weights(model: nn.Module) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """State-dict tensors with shared storage kept once, plus {alias: stored name}."""
    aliases = _aliases(model)
    tensors = {
        name: tensor.detach().to("cpu").contiguous()
        for name, tensor in model.state_dict().items()
        if name not in aliases
    }
    return tensors, aliases


def save_checkpoint(
    path: str | Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    *,
    state: TrainState | None = None,
    vocabs: tuple[Vocab, Vocab] | None = None,
) -> Path:
    """Write ``model`` (and optionally the training state) to the folder ``path``, atomically.

    The model's ``config`` is stored with it, so :func:`load_checkpoint` can rebuild it;
    ``vocabs`` is (src_vocab, tgt_vocab). Returns this save's folder inside ``path``: it
    holds the checkpoint's files and loads like ``path`` until two later saves to ``path``
    have replaced it (``path`` always loads the latest).
    """
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():
        fail("path", "a folder for the checkpoint", f"the file {path}", error=FileExistsError)
    if _store.is_save(path):
        fail(
            "path",
            "a checkpoint folder, not one of the saves inside it",
            str(path),
            "Save to {folder}.",
            folder=path.parent,
        )
    check_course_model("model", model)
    tensors, aliases = _weights(model)
    meta = {
        "format": FORMAT,
        "config": model.config.to_dict(),
        "aliases": aliases,
        "state": asdict(state if state is not None else TrainState()),
        "src_vocab": vocabs[0].to_dict() if vocabs else None,
        "tgt_vocab": vocabs[1].to_dict() if vocabs else None,
    }
    return _store.publish(path, _contents(meta, tensors, optimizer, scheduler))


def _contents(meta: dict, tensors: dict, optimizer, scheduler) -> dict[str, bytes]:
    """{file name: content} of the checkpoint; checkpoint.json records the others' hashes."""
    files = {MODEL_FILE: save_tensors(tensors)}
    if optimizer is not None:
        training, meta["optimizer"] = training_tensors(optimizer)
        files[TRAINING_FILE] = save_tensors(training)
        meta["scheduler"] = scheduler.state_dict() if scheduler is not None else None
    meta["files"] = {name: record(data) for name, data in files.items()}
    try:
        files[META_FILE] = meta_bytes(meta)
    except (TypeError, ValueError) as error:
        fail(
            "scheduler",
            "a scheduler whose state_dict() is JSON-serialisable",
            str(error),
            "Use train.make_scheduler().",
            error=TypeError,
        )
    return files


def _config_differences(model: nn.Module, saved: dict, ignore: tuple[str, ...] = ()) -> list[str]:
    """``"key=saved (model has current)"`` for each config value that differs."""
    current = model.config.to_dict()
    return [
        f"{key}={value!r} (model has {current.get(key)!r})"
        for key, value in saved.items()
        if key not in ignore and current.get(key) != value
    ]


def _check_compatible(model: nn.Module, weights: dict, saved_config: dict) -> None:
    """Fail with the mismatched weights and config values when ``weights`` do not fit ``model``."""
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in weights.items()}
    if expected == got:
        return
    problems = [f"missing {k}" for k in expected if k not in got]
    problems += [f"unexpected {k}" for k in got if k not in expected]
    problems += [
        f"{k} is {got[k]} here vs {expected[k]} in the model"
        for k in expected
        if k in got and got[k] != expected[k]
    ]
    diff = _config_differences(model, saved_config)
    hint = (
        "It was saved with {diff}. Build the model from the checkpoint's config: "
        "load_checkpoint(path) without a model."
        if diff
        else "Build the model from the checkpoint's config: load_checkpoint(path) without a model."
    )
    fail(
        "model",
        "the architecture the checkpoint was saved from",
        f"{len(problems)} mismatches: {'; '.join(problems[:3])}",
        hint,
        diff=", ".join(diff),
    )


def load_checkpoint(
    path: str | Path,
    model: nn.Module | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    *,
    device: torch.device | str | None = None,
    restore_rng: bool = False,
) -> Checkpoint:
    """Load the checkpoint at ``path``: a folder given to :func:`save_checkpoint`, or the save
    folder it returned.

    Without ``model`` a ``Transformer`` (a ``LanguageModel`` for a config with
    ``n_encoder_layers=0``, an ``EncoderOnlyModel`` for one with ``n_decoder_layers=0``) is
    built from the saved config (on ``device``, default CPU). A given ``model`` must have
    the saved config (dropout aside) and the same tied weights. With ``optimizer``/``scheduler`` their state is restored too, and
    with ``restore_rng`` the random-number generators (for an exact resume).
    """
    path = Path(path).expanduser()
    folder, meta, weights, training = _read(path, optimizer is not None)
    for alias, name in meta["aliases"].items():
        if name in weights:
            weights[alias] = weights[name]
    config = _built(folder, "config", TransformerConfig, **meta["config"])
    if model is None:  # the stacks the config has say which of the three families
        model = _model_for(config).to(device or "cpu")
    else:
        check_course_model("model", model)
    _check_compatible(model, weights, meta["config"])
    _check_same_model(model, meta)
    model.load_state_dict(weights)
    if optimizer is not None:
        load_training(folder, meta, training, optimizer, scheduler, restore_rng)
    vocabs = [
        _built(folder, key, Vocab.from_dict, meta[key]) if meta[key] else None
        for key in ("src_vocab", "tgt_vocab")
    ]
    state = _built(folder, "state", TrainState, **meta["state"])
    return Checkpoint(model, config, vocabs[0], vocabs[1], state, path)


def _model_for(config: TransformerConfig) -> nn.Module:
    """The model a saved config describes: no encoder, notebook 09's language model; no
    decoder, notebook 10's encoder-only model; both, the encoder-decoder."""
    if config.n_encoder_layers == 0:
        return LanguageModel(config)
    if config.n_decoder_layers == 0:
        return EncoderOnlyModel(config)
    return Transformer(config)


def _read(path: Path, with_training: bool) -> tuple[Path, dict, dict, dict | None]:
    """The current save's folder, checkpoint.json, weights and (``with_training``) training
    tensors, each file checked. A save to ``path`` may remove the folder while it is read:
    then ``LATEST`` names a newer save, read instead. A failure without that is the error."""
    folder = _store.current_folder(path)
    for attempt in range(_READS):
        try:
            meta = read_meta(folder)
            weights = read_tensors(folder, MODEL_FILE, meta)
            training = read_tensors(folder, TRAINING_FILE, meta) if with_training else None
            return folder, meta, weights, training
        except (OSError, ValueError):
            newer = _store.current_folder(path)
            if newer == folder or attempt == _READS - 1:
                raise
            folder = newer


def _built(folder: Path, key: str, build, *args, **kwargs):
    """``build(*args, **kwargs)`` from checkpoint.json's entry ``key``; a failure names it."""
    try:
        return build(*args, **kwargs)
    except (TypeError, ValueError) as error:
        fail(f"{folder / META_FILE}[{key!r}]", "a valid entry", f"{error}", DAMAGED)


def _check_same_model(model: nn.Module, meta: dict) -> None:
    """Same config (dropout aside) and the same tied weights as the checkpoint."""
    diff = _config_differences(model, meta["config"], ignore=("dropout",))
    if diff:
        fail(
            "model",
            "built with the config the checkpoint was saved with (dropout may differ)",
            f"a model with other values: saved with {', '.join(diff)}",
            "Build the model from the checkpoint's config: load_checkpoint(path) without a model.",
        )
    mine = _aliases(model)
    if mine != meta["aliases"]:
        fail(
            "model",
            "tied like the checkpoint (shared weights: {aliases})"
            if meta["aliases"]
            else "tied like the checkpoint (shared weights: none)",
            f"a model with shared weights {mine or 'none'}",
            "Loading would merge or split weights; build the model from the checkpoint's "
            "config: load_checkpoint(path) without a model.",
            aliases=meta["aliases"],
        )


def resume(
    path: str | Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
) -> TrainState:
    """Restore weights, optimizer, scheduler and RNG state; returns the ``TrainState`` to
    pass to ``train(..., state=...)``, which then continues exactly where the run stopped."""
    if optimizer is None:
        fail(
            "optimizer",
            "the optimizer to restore (resuming needs its state)",
            "None",
            error=TypeError,
        )
    return load_checkpoint(path, model, optimizer, scheduler, restore_rng=True).state
