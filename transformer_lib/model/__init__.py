"""The model layer: the pieces notebooks 01-06 teach and the models built from them.

``config`` (``TransformerConfig``), ``embeddings`` (tokens and positions), ``attention``,
``masks`` (bool, True = may attend), ``layers`` (the encoder and decoder layers),
``contract`` (what training, checkpoints and decoding may call on any model),
``transformer`` (the encoder-decoder), ``language_model`` (decoder-only, notebook 09),
``encoder_only`` (encoder-only, BERT-style, and its sentence classifier, notebook 10),
``lm_translation`` (a language model read as a translator) and ``reference`` (PyTorch's own
modules holding our weights). Nothing here imports data, inference, training or teaching.
"""

from transformer_lib.model.attention import (
    AttentionWeights,
    MultiHeadAttention,
    scaled_dot_product_attention,
)
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import ModelContract
from transformer_lib.model.embeddings import (
    PositionalEncoding,
    TokenEmbedding,
    sinusoidal_positional_encoding,
)
from transformer_lib.model.encoder_only import EncoderOnlyModel, SentenceClassifier
from transformer_lib.model.language_model import LanguageModel
from transformer_lib.model.layers import DecoderLayer, EncoderLayer, FeedForward
from transformer_lib.model.masks import causal_mask, padding_mask, target_mask
from transformer_lib.model.transformer import Decoder, Encoder, Transformer, count_parameters

__all__ = [
    "AttentionWeights",
    "MultiHeadAttention",
    "scaled_dot_product_attention",
    "TransformerConfig",
    "ModelContract",
    "PositionalEncoding",
    "TokenEmbedding",
    "sinusoidal_positional_encoding",
    "LanguageModel",
    "EncoderOnlyModel",
    "SentenceClassifier",
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
]
