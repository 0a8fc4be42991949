"""Optimizer, scheduler and RNG state: tensors to ``training.safetensors``, the rest to JSON."""

from __future__ import annotations

from pathlib import Path

import torch
from torch.optim.lr_scheduler import LRScheduler

from transformer_lib._checks import fail
from transformer_lib.train.checkpoint._files import META_FILE, entry


def training_tensors(optimizer: torch.optim.Optimizer) -> tuple[dict, dict]:
    """Optimizer state and RNG states split into tensors (safetensors) and the rest (JSON)."""
    state_dict = optimizer.state_dict()
    tensors, scalars = {"rng/torch": torch.get_rng_state()}, {}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        for i, rng in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng/cuda/{i}"] = rng
    for index, param_state in state_dict["state"].items():
        for name, value in param_state.items():
            if isinstance(value, torch.Tensor):
                tensors[f"optimizer/{index}/{name}"] = value.contiguous()  # safetensors: to CPU
            else:
                scalars[f"{index}/{name}"] = value
    groups = [
        {k: list(v) if isinstance(v, tuple) else v for k, v in group.items()}
        for group in state_dict["param_groups"]
    ]
    return tensors, {"param_groups": groups, "scalars": scalars}


def load_training(
    path: Path,
    meta: dict,
    tensors: dict[str, torch.Tensor],
    optimizer: torch.optim.Optimizer,
    scheduler: LRScheduler | None,
    restore_rng: bool,
) -> None:
    """Restore the optimizer (and scheduler, and with ``restore_rng`` the RNGs) in place from
    the save in the folder ``path``: its ``meta`` and the ``tensors`` of training.safetensors."""
    saved = entry(path / META_FILE, ("optimizer",), meta, "an object")
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
