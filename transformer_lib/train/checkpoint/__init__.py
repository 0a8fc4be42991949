"""Checkpoints without pickle: safetensors for every tensor, JSON for everything else.

A checkpoint is a folder ``path`` with one folder per save and a pointer to the current one::

    LATEST                    the name of the current save
    save-<date>-<time>-<id>/
        model.safetensors     the weights (a tied or shared matrix is stored once)
        training.safetensors  optimizer state tensors and RNG states (when an optimizer is given)
        checkpoint.json       config, vocabularies, step/epoch/history, optimizer settings,
                              scheduler state, the size and SHA-256 of both tensor files,
                              and the SHA-256 of its own content

A save writes a new folder and then replaces ``LATEST`` in one step (``os.replace``): an
interrupt or a kill at any moment leaves ``path`` holding the old or the new checkpoint,
complete, and saves or loads from other processes at the same time never make each other
fail (see ``_store``). Loading checks the hash of every file it reads and every entry of
checkpoint.json first: a truncated, corrupted or mismatched checkpoint gives a clear error.
A folder holding the files themselves (one save folder, or a checkpoint written before
``LATEST`` existed) loads too.

Modules: ``save_load`` (the public functions), ``_files`` (the files and their checks),
``_store`` (the folders on disk: saving, the pointer, clean-up), ``_training`` (optimizer,
scheduler and RNG state).
"""

from transformer_lib.train.checkpoint.save_load import (
    Checkpoint,
    load_checkpoint,
    resume,
    save_checkpoint,
)

__all__ = ["Checkpoint", "save_checkpoint", "load_checkpoint", "resume"]
