"""Checkpoints without pickle: safetensors for every tensor, JSON for everything else.

A checkpoint is a folder::

    model.safetensors     the weights (a tied or shared matrix is stored once)
    training.safetensors  optimizer state tensors and RNG states (when an optimizer is given)
    checkpoint.json       config, vocabularies, step/epoch/history, optimizer settings,
                          scheduler state, and the size and SHA-256 of both tensor files

It is written under a temporary name and renamed into place, so an interrupted save
never leaves a half-written checkpoint where a good one was. Loading checks sizes and
hashes first: a truncated, corrupted or mismatched checkpoint gives a clear error.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors
from safetensors.torch import save as save_tensors
from torch import nn

from transformer_lib._checks import fail
from transformer_lib.config import TransformerConfig
from transformer_lib.vocab import Vocab

FORMAT = "transformer_lib.checkpoint/1"
MODEL_FILE, TRAINING_FILE, META_FILE = (
    "model.safetensors",
    "training.safetensors",
    "checkpoint.json",
)


@dataclass
class TrainState:
    """Where a training run stands; ``train`` updates it in place and checkpoints store it."""

    step: int = 0  # optimizer updates done
    epoch: int = 0  # epochs completed (the current epoch's index)
    batch_in_epoch: int = 0  # batches of the current epoch already used
    tokens: int = 0  # target tokens trained on
    seconds: float = 0.0  # training time, callbacks and checkpoints excluded
    history: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class Checkpoint:
    """What :func:`load_checkpoint` found (``model`` is the one it loaded into)."""

    model: nn.Module
    config: TransformerConfig | None
    src_vocab: Vocab | None
    tgt_vocab: Vocab | None
    state: TrainState
    path: Path


def _weights(model: nn.Module) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """State-dict tensors with shared storage kept once, plus {alias: stored name}."""
    tensors, aliases, seen = {}, {}, {}
    for name, tensor in model.state_dict().items():
        key = (tensor.data_ptr(), tuple(tensor.shape), tensor.stride(), tensor.dtype)
        if tensor.numel() and key in seen:  # tied embedding / output matrix
            aliases[name] = seen[key]
            continue
        seen[key] = name
        tensors[name] = tensor.detach().to("cpu").contiguous()
    return tensors, aliases


def _training_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict, dict]:
    """Optimizer state split into tensors (safetensors) and everything else (JSON)."""
    state_dict = optimizer.state_dict()
    tensors, scalars = {"rng/torch": torch.get_rng_state()}, {}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for i, rng in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng/cuda/{i}"] = rng
    for index, param_state in state_dict["state"].items():
        for name, value in param_state.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optimizer/{index}/{name}"] = value.detach().to("cpu").contiguous()
            else:
                scalars[f"{index}/{name}"] = value
    groups = [
        {k: list(v) if isinstance(v, tuple) else v for k, v in group.items()}
        for group in state_dict["param_groups"]
    ]
    return tensors, {"param_groups": groups, "scalars": scalars}


def _write(folder: Path, name: str, data: bytes) -> dict:
    with open(folder / name, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def save_checkpoint(
    path: str | Path,
    model: nn.Module,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    *,
    state: TrainState | None = None,
    vocabs: tuple[Vocab, Vocab] | None = None,
    config: TransformerConfig | None = None,
) -> Path:
    """Write ``model`` (and optionally the training state) to the folder ``path``, atomically.

    ``config`` defaults to ``model.config``; ``vocabs`` is (src_vocab, tgt_vocab).
    Returns the folder's path.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        fail("path", "a folder for the checkpoint", f"the file {path}", error=FileExistsError)
    config = config if config is not None else getattr(model, "config", None)
    tensors, aliases = _weights(model)
    meta = {
        "format": FORMAT,
        "config": config.to_dict() if config is not None else None,
        "aliases": aliases,
        "state": asdict(state if state is not None else TrainState()),
        "src_vocab": vocabs[0].to_dict() if vocabs else None,
        "tgt_vocab": vocabs[1].to_dict() if vocabs else None,
        "files": {},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.parent / f".{path.name}.tmp-{uuid.uuid4().hex[:8]}"
    temp.mkdir()
    try:
        meta["files"][MODEL_FILE] = _write(temp, MODEL_FILE, save_tensors(tensors))
        if optimizer is not None:
            training, meta["optimizer"] = _training_tensors(optimizer)
            meta["files"][TRAINING_FILE] = _write(temp, TRAINING_FILE, save_tensors(training))
            meta["scheduler"] = scheduler.state_dict() if scheduler is not None else None
        try:
            text = json.dumps(meta, ensure_ascii=False, indent=1, allow_nan=False)
        except (TypeError, ValueError) as error:
            fail(
                "scheduler",
                "a scheduler whose state_dict() is JSON-serialisable",
                str(error),
                "Use make_scheduler() (a LambdaLR with NoamSchedule).",
                error=TypeError,
            )
        _write(temp, META_FILE, text.encode("utf-8"))  # written last: it vouches for the rest
        old = path.parent / f".{path.name}.old-{uuid.uuid4().hex[:8]}"
        if path.exists():
            os.replace(path, old)
        os.replace(temp, path)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return path


def _read_meta(path: Path) -> dict:
    meta_path = path / META_FILE
    if not meta_path.is_file():
        fail(
            "path",
            f"a checkpoint folder containing {META_FILE}",
            f"{path}{'' if path.exists() else ' (does not exist)'}",
            "Write one with save_checkpoint() or train(checkpoint_dir=...).",
            error=FileNotFoundError,
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        fail(
            str(meta_path),
            "valid JSON",
            f"a corrupted file ({error})",
            "The checkpoint is damaged; save it again.",
        )
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        fail(str(meta_path), f"a checkpoint in the format {FORMAT!r}", repr(got))
    return meta


def _read_tensors(path: Path, name: str, meta: dict) -> dict[str, torch.Tensor]:
    expected = meta["files"].get(name)
    file = path / name
    if expected is None or not file.is_file():
        fail(
            str(file),
            "present (listed in checkpoint.json)" if expected else "in this checkpoint",
            "nothing",
            "It was saved without an optimizer: pass one to save_checkpoint() to resume training.",
            error=FileNotFoundError,
        )
    data = file.read_bytes()
    if len(data) != expected["bytes"]:
        fail(
            str(file),
            f"{expected['bytes']} bytes long",
            f"{len(data)} bytes",
            "The file is truncated; the checkpoint cannot be used.",
        )
    if hashlib.sha256(data).hexdigest() != expected["sha256"]:
        fail(
            str(file),
            "the file recorded in checkpoint.json (same SHA-256)",
            "different contents",
            "The file is corrupted or from another checkpoint.",
        )
    try:
        return load_tensors(data)
    except SafetensorError as error:
        fail(str(file), "a valid safetensors file", f"an unreadable one ({error})")


def _check_compatible(model: nn.Module, weights: dict, saved_config: dict | None) -> None:
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
    hint = "Build the model from the checkpoint's config: load_checkpoint(path) without a model."
    config = getattr(model, "config", None)
    if saved_config and isinstance(config, TransformerConfig):
        diff = [
            f"{k}={v} (model has {getattr(config, k)})"
            for k, v in saved_config.items()
            if getattr(config, k, v) != v
        ]
        hint = f"It was saved with {', '.join(diff)}. " * bool(diff) + hint
    fail(
        "model",
        "the architecture the checkpoint was saved from",
        f"{len(problems)} mismatches: {'; '.join(problems[:3])}",
        hint,
    )


def _load_training(path: Path, meta: dict, optimizer, scheduler, restore_rng: bool) -> None:
    tensors = _read_tensors(path, TRAINING_FILE, meta)
    saved = meta["optimizer"]
    state: dict[int, dict] = {}
    for key, value in [*tensors.items(), *saved["scalars"].items()]:
        if key.startswith("optimizer/"):
            key = key.removeprefix("optimizer/")
        elif key.startswith("rng/"):
            continue
        index, name = key.split("/", 1)
        state.setdefault(int(index), {})[name] = value
    current = optimizer.state_dict()["param_groups"]
    if [len(g["params"]) for g in current] != [len(g["params"]) for g in saved["param_groups"]]:
        fail(
            "optimizer",
            "one over the same parameters the checkpoint was saved with",
            f"{sum(len(g['params']) for g in current)} parameters vs "
            f"{sum(len(g['params']) for g in saved['param_groups'])} saved",
        )
    groups = [
        {k: tuple(v) if isinstance(now.get(k), tuple) else v for k, v in group.items()}
        for group, now in zip(saved["param_groups"], current)
    ]
    optimizer.load_state_dict({"state": state, "param_groups": groups})
    if scheduler is not None and meta.get("scheduler") is not None:
        scheduler.load_state_dict(meta["scheduler"])
    if restore_rng:
        torch.set_rng_state(tensors["rng/torch"])
        cuda = [tensors[k] for k in sorted(tensors) if k.startswith("rng/cuda/")]
        if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda)


def load_checkpoint(
    path: str | Path,
    model: nn.Module | None = None,
    optimizer: torch.optim.Optimizer | None = None,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    *,
    device: torch.device | str | None = None,
    restore_rng: bool = False,
) -> Checkpoint:
    """Load a folder written by :func:`save_checkpoint`.

    Without ``model`` a ``Transformer`` is built from the saved config (on ``device``,
    default CPU). With ``optimizer``/``scheduler`` their state is restored too, and with
    ``restore_rng`` the random-number generators (for an exact resume).
    """
    from transformer_lib.model import Transformer  # here: model imports nothing from us

    path = Path(path)
    meta = _read_meta(path)
    weights = _read_tensors(path, MODEL_FILE, meta)
    for alias, name in meta["aliases"].items():
        if name in weights:
            weights[alias] = weights[name]
    config = TransformerConfig(**meta["config"]) if meta.get("config") else None
    if model is None:
        if config is None:
            fail("model", "given (this checkpoint has no config to build one from)", "None")
        model = Transformer(config).to(device or "cpu")
    _check_compatible(model, weights, meta.get("config"))
    model.load_state_dict(weights)
    if optimizer is not None:
        _load_training(path, meta, optimizer, scheduler, restore_rng)
    vocabs = [Vocab.from_dict(meta[k]) if meta.get(k) else None for k in ("src_vocab", "tgt_vocab")]
    return Checkpoint(model, config, vocabs[0], vocabs[1], TrainState(**meta["state"]), path)


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
