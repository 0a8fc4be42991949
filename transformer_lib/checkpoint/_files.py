"""The checkpoint folder's files: their names, the format tag, and writing and reading them
with the size and SHA-256 that ``checkpoint.json`` records for each tensor file."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors

from transformer_lib._checks import fail

FORMAT = "transformer_lib.checkpoint/1"
MODEL_FILE, TRAINING_FILE, META_FILE = (
    "model.safetensors",
    "training.safetensors",
    "checkpoint.json",
)


def write_file(folder: Path, name: str, data: bytes) -> dict:
    """Write ``data`` to ``folder/name`` and flush it to disk; returns its size and SHA-256."""
    with open(folder / name, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def read_meta(path: Path) -> dict:
    """``checkpoint.json`` of the folder ``path``, checked to be valid JSON in our format."""
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


def read_tensors(path: Path, name: str, meta: dict) -> dict[str, torch.Tensor]:
    """The tensors of ``path/name``, once its size and SHA-256 match those in ``meta``."""
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
