"""transformer_lib: the small library behind the Transformer course.

Its folders are its layers, each importing only those before it:

- ``_checks``, ``i18n``, ``_catalogue``, ``device``: argument checks and the house error,
  the edition's language, the catalogue of messages both read, the device;
- ``model``: config, embeddings, attention, masks, layers, the models and their contract;
- ``data``: vocabularies, the corpus, batches;
- ``inference``: the key/value cache, greedy and beam search, generation, translation;
- ``train``: the loss, schedule and loop, the run's state, checkpoints, evaluation;
- ``teaching``: exercises, figures, widgets, the playground, the studies.

The notebooks import from here: the model's classes by name
(``from transformer_lib import Transformer``) and the modules they use by their short names
(``from transformer_lib import masks, viz``), each loaded on first use.
Masks are bool, True = may attend.
"""

import importlib

from transformer_lib.device import get_device
from transformer_lib.model import (
    AttentionWeights,
    Decoder,
    DecoderLayer,
    Encoder,
    EncoderLayer,
    EncoderOnlyModel,
    FeedForward,
    LanguageModel,
    MultiHeadAttention,
    PositionalEncoding,
    SentenceClassifier,
    TokenEmbedding,
    Transformer,
    TransformerConfig,
    causal_mask,
    count_parameters,
    padding_mask,
    scaled_dot_product_attention,
    sinusoidal_positional_encoding,
    target_mask,
)

# short name -> the module it stands for
MODULES = {
    "config": "model.config",
    "embeddings": "model.embeddings",
    "attention": "model.attention",
    "masks": "model.masks",
    "layers": "model.layers",
    "contract": "model.contract",
    "reference": "model.reference",
    "data": "data",
    "vocab": "data.vocab",
    "decode": "inference.decode",
    "generation": "inference.generation",
    "translate": "inference.translate",
    "train": "train",
    "checkpoint": "train.checkpoint",
    "evaluate": "train.evaluate",
    "exercises": "teaching.exercises",
    "viz": "teaching.viz",
    "widgets": "teaching.widgets",
    "playground": "teaching.playground",
    "studies": "teaching.studies",
}


def __getattr__(name: str):
    """``transformer_lib.model.masks`` and the other short names above, imported on first use
    (PEP 562), so ``import transformer_lib`` loads only the model."""
    if name not in MODULES:
        raise AttributeError(f"module 'transformer_lib' has no attribute {name!r}")
    module = importlib.import_module(f"transformer_lib.{MODULES[name]}")
    globals()[name] = module
    return module


__all__ = [
    "AttentionWeights",
    "MultiHeadAttention",
    "scaled_dot_product_attention",
    "TransformerConfig",
    "get_device",
    "PositionalEncoding",
    "TokenEmbedding",
    "sinusoidal_positional_encoding",
    "DecoderLayer",
    "EncoderLayer",
    "FeedForward",
    "causal_mask",
    "padding_mask",
    "target_mask",
    "Decoder",
    "Encoder",
    "Transformer",
    "count_parameters",
    "LanguageModel",
    "EncoderOnlyModel",
    "SentenceClassifier",
]
__version__ = "0.1.0"
