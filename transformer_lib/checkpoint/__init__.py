"""Checkpoints without pickle: safetensors for every tensor, JSON for everything else.

A checkpoint is a folder::

    model.safetensors     the weights (a tied or shared matrix is stored once)
    training.safetensors  optimizer state tensors and RNG states (when an optimizer is given)
    checkpoint.json       config, vocabularies, step/epoch/history, optimizer settings,
                          scheduler state, and the size and SHA-256 of both tensor files

It is written under a temporary name and renamed into place, so an interrupted save
never leaves a half-written checkpoint where a good one was. Loading checks sizes and
hashes first: a truncated, corrupted or mismatched checkpoint gives a clear error.

Modules: ``save_load`` (the public functions), ``_files`` (the files and their checks),
``_training`` (optimizer, scheduler and RNG state).
"""

from transformer_lib.checkpoint.save_load import (
    Checkpoint,
    load_checkpoint,
    resume,
    save_checkpoint,
)

__all__ = ["Checkpoint", "save_checkpoint", "load_checkpoint", "resume"]
