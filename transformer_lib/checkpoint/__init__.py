"""Checkpoints without pickle: safetensors for every tensor, JSON for everything else.

A checkpoint is a folder::

    model.safetensors     the weights (a tied or shared matrix is stored once)
    training.safetensors  optimizer state tensors and RNG states (when an optimizer is given)
    checkpoint.json       config, vocabularies, step/epoch/history, optimizer settings,
                          scheduler state, the size and SHA-256 of both tensor files,
                          and the SHA-256 of its own content

It is written into a temporary folder beside ``path``, which then takes the old one's
place in one atomic exchange: an interrupt or a kill at any moment leaves ``path`` holding
the old or the new checkpoint, complete, and the next save removes what a killed one left
(see ``_swap``). Loading checks every file's hash and every entry of checkpoint.json
first: a truncated, corrupted or mismatched checkpoint gives a clear error.

Modules: ``save_load`` (the public functions), ``_files`` (the files and their checks),
``_swap`` (putting a new checkpoint in place), ``_training`` (optimizer, scheduler and RNG
state).
"""

from transformer_lib.checkpoint.save_load import (
    Checkpoint,
    load_checkpoint,
    resume,
    save_checkpoint,
)

__all__ = ["Checkpoint", "save_checkpoint", "load_checkpoint", "resume"]
