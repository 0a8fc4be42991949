"""transformer_lib: the small library behind the Transformer course.

One module per concept, in the order the notebooks teach them:
config, embeddings, masks, attention, layers, model and reference (the same
modules as PyTorch's); the translator pipeline (vocab, data, train, checkpoint, decode,
translate, evaluate); language_model and lm_translation (notebook 09's decoder-only
model); the teaching layer (viz, widgets, playground, exercises). Outside the
core: studies (notebook 08's experiments).
Masks are bool, True = may attend.
"""

from transformer_lib.attention import (
    AttentionWeights,
    MultiHeadAttention,
    scaled_dot_product_attention,
)
from transformer_lib.config import TransformerConfig
from transformer_lib.device import get_device
from transformer_lib.embeddings import (
    PositionalEncoding,
    TokenEmbedding,
    sinusoidal_positional_encoding,
)
from transformer_lib.language_model import LanguageModel
from transformer_lib.layers import DecoderLayer, EncoderLayer, FeedForward
from transformer_lib.masks import causal_mask, padding_mask, target_mask
from transformer_lib.model import Decoder, Encoder, Transformer, count_parameters

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
]
__version__ = "0.1.0"
