"""Training: label-smoothed loss, the warm-up schedule, Adam and the loop (paper §5.3, §5.4).

The loop takes a model with the contract of ``model.Transformer`` (``pad_id`` and
``forward(src, tgt_in) -> logits (B, T, V)``), reports progress through a callback and
returns a history. Where a run stands is a :class:`TrainState`; writing it to disk and
resuming from it is :mod:`transformer_lib.train.checkpoint`'s job.

Shapes:
    B batch, S source length, T target length, V target vocabulary.

Modules: ``loss`` (label smoothing), ``schedule`` (the learning rate and Adam), ``loop``
(``train``), ``progress`` (its timing, log and callback) and ``bag_of_words`` (notebook 10's
baseline: logistic regression on word counts); ``TrainState`` lives in
:mod:`transformer_lib.train.state`, below this package and ``checkpoint``.
"""

from transformer_lib.train.state import TrainState

__all__ = [
    "TrainState",
    "label_smoothed_cross_entropy",
    "transformer_lr",
    "make_optimizer",
    "make_scheduler",
    "train",
]


def __getattr__(name: str):
    """The names above, each imported from its module on first use (PEP 562): the loss or
    the schedule alone (notebook 07's checks) loads neither the loop nor ``checkpoint``."""
    if name == "train":
        from transformer_lib.train.loop import train as value
    elif name == "label_smoothed_cross_entropy":
        from transformer_lib.train.loss import label_smoothed_cross_entropy as value
    elif name in ("transformer_lr", "make_optimizer", "make_scheduler"):
        from transformer_lib.train import schedule

        value = getattr(schedule, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
