"""A save's files: their names, the format tag, reading them and checking them.

Every file is covered by a SHA-256 checked on load: ``checkpoint.json`` records the size
and SHA-256 of each tensor file, and its own entry ``"sha256"`` is the SHA-256 of the rest
of its content (serialised canonically: sorted keys, no spaces), so a changed value, key
or hash is an error, never a silently different checkpoint.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import fields
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load as load_tensors

from transformer_lib._catalogue import error_text
from transformer_lib._checks import fail
from transformer_lib.i18n import N_
from transformer_lib.train.state import TrainState

# The format tags are names on disk, not module paths: they stay when the package moves
# (checkpoint/ became train/checkpoint/), or no earlier checkpoint would load.
FORMAT = "transformer_lib.checkpoint/2"  # /2 adds the JSON's own checksum
LEGACY_FORMAT = "transformer_lib.checkpoint/1"  # still loaded; its JSON is unchecked
MODEL_FILE, TRAINING_FILE, META_FILE = (
    "model.safetensors",
    "training.safetensors",
    "checkpoint.json",
)
FILES = (MODEL_FILE, TRAINING_FILE, META_FILE)
DAMAGED = N_("The checkpoint is damaged or was not written by save_checkpoint(); save it again.")
# What an entry of checkpoint.json may be: its kind, as an error names it, and its types.
_KINDS = {
    N_("an object"): dict,
    N_("an object or null"): (dict, type(None)),
    N_("a list"): list,
    N_("a string"): str,
    N_("an int"): int,
    N_("a number"): (int, float),
}


def record(data: bytes) -> dict:
    """A tensor file's entry in checkpoint.json: its size and SHA-256."""
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def content_sha256(meta: dict) -> str:
    """SHA-256 of ``meta`` without its ``"sha256"`` entry, serialised canonically."""
    rest = {k: v for k, v in meta.items() if k != "sha256"}
    text = json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def meta_bytes(meta: dict) -> bytes:
    """``checkpoint.json``'s bytes: ``meta`` plus the SHA-256 of its content.

    Raises ``TypeError``/``ValueError`` for what JSON cannot hold (the caller names it).
    """
    sealed = {**meta, "sha256": content_sha256(meta)}
    return json.dumps(sealed, ensure_ascii=False, indent=1, allow_nan=False).encode("utf-8")


def entry(meta_path: Path, keys: tuple, container, kind: str, required: bool = True):
    """``container[keys[-1]]`` (a dict or list) once it is present and ``kind``; an error
    names the file and the entry."""
    name = str(meta_path) + "".join(f"[{key!r}]" for key in keys)
    key = keys[-1]
    if key not in container if isinstance(container, dict) else key >= len(container):
        if not required:
            return None
        got = "nothing (the entry is missing)"
        fail(name, "present ({kind})", got, DAMAGED, kind=error_text(kind))
    value = container[key]
    if isinstance(value, bool) or not isinstance(value, _KINDS[kind]):
        fail(name, kind, f"{type(value).__name__} {str(value)[:40]!r}", DAMAGED)
    return value


def read_meta(path: Path) -> dict:
    """``checkpoint.json`` of the folder ``path``: valid JSON in our format, unchanged since it
    was written (its SHA-256) and with every entry present and of the right type."""
    meta_path = path / META_FILE
    if not meta_path.is_file():
        fail(
            "path",
            "a checkpoint folder containing {file}",
            f"{path}{'' if path.exists() else ' (does not exist)'}",
            "Write one with save_checkpoint() or train(checkpoint_dir=...).",
            error=FileNotFoundError,
            file=META_FILE,
        )
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        fail(str(meta_path), "valid JSON", f"a corrupted file ({error})", DAMAGED)
    if not isinstance(meta, dict) or meta.get("format") not in (FORMAT, LEGACY_FORMAT):
        got = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        expected = "a checkpoint in the format {format}"
        fail(str(meta_path), expected, repr(got), DAMAGED, format=repr(FORMAT))
    if meta["format"] == FORMAT:
        if entry(meta_path, ("sha256",), meta, "a string") != content_sha256(meta):
            fail(
                str(meta_path),
                "the content its entry 'sha256' vouches for",
                "different content",
                "The file is corrupted or was edited; the checkpoint cannot be used.",
            )
    _check_structure(meta_path, meta)
    return meta


def _check_structure(meta_path: Path, meta: dict) -> None:
    """Every entry that loading reads is present and of the right type."""
    for key in ("config", "aliases", "state", "files"):
        entry(meta_path, (key,), meta, "an object")
    for key in ("src_vocab", "tgt_vocab"):
        entry(meta_path, (key,), meta, "an object or null")
    entry(meta_path, ("optimizer",), meta, "an object", required=False)
    entry(meta_path, ("scheduler",), meta, "an object or null", required=False)
    for alias in meta["aliases"]:
        entry(meta_path, ("aliases", alias), meta["aliases"], "a string")
    unknown = sorted(set(meta["files"]) - {MODEL_FILE, TRAINING_FILE})
    if unknown:
        expected = "entries for {model} and {training} only"
        got = f"an entry {unknown[0]!r}"
        fail(
            f"{meta_path}['files']",
            expected,
            got,
            DAMAGED,
            model=MODEL_FILE,
            training=TRAINING_FILE,
        )
    for name in (MODEL_FILE, TRAINING_FILE):
        file = entry(meta_path, ("files", name), meta["files"], "an object", name == MODEL_FILE)
        if file is not None:
            entry(meta_path, ("files", name, "bytes"), file, "an int")
            entry(meta_path, ("files", name, "sha256"), file, "a string")
    for field in fields(TrainState):
        name = field.name
        kind = "an object" if name == "history" else "a number" if name == "seconds" else "an int"
        entry(meta_path, ("state", name), meta["state"], kind)
    if "optimizer" in meta:
        optimizer = meta["optimizer"]
        groups = entry(meta_path, ("optimizer", "param_groups"), optimizer, "a list")
        entry(meta_path, ("optimizer", "scalars"), optimizer, "an object")
        for index, group in enumerate(groups):
            entry(meta_path, ("optimizer", "param_groups", index), groups, "an object")
            entry(meta_path, ("optimizer", "param_groups", index, "params"), group, "a list")


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
            "{n} bytes long",
            f"{len(data)} bytes",
            "The file is truncated; the checkpoint cannot be used.",
            n=expected["bytes"],
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
