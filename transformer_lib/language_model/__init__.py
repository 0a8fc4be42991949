"""A decoder-only (GPT-style) language model built from the course's pieces (notebook 09).

What goes, from notebook 06's encoder-decoder: the encoder, and with it cross-attention.
What stays: token embeddings and positions, a stack of layers of masked self-attention
and feed-forward, the output layer to logits. Each layer here is an ``EncoderLayer`` run
under the causal (and padding) mask: a decoder layer without its cross-attention is
exactly that computation (self-attention, then the FFN, each with its residual and
LayerNorm), and it is the layer ``nn.TransformerEncoder(..., is_causal=True)`` uses, so
``reference.TorchLanguageModel`` mirrors this model layer for layer. The loss predicts
the next token at every position: targets are the inputs shifted by one.

Generation reads a prompt and appends one token per step, greedily or by sampling
(temperature, top-k, a seed for reproducible samples); with ``cache=True`` (the default)
each step runs only the newest position (:class:`IncrementalLanguageModel`, with
``incremental``'s key/value pieces).

The config is the encoder-decoder's (``TransformerConfig.decoder_only()``): one vocabulary
(``src_vocab_size == tgt_vocab_size``), ``n_encoder_layers=0``, ``n_decoder_layers`` layers.

Modules: ``model`` (``LanguageModel``, ``next_token_distribution``,
``language_model_batches``, ``perplexity``) and ``generation`` (``sample_next``,
``generate``, ``IncrementalLanguageModel``); every name is importable from here.

Shapes:
    B batch, L sequence length, P prompt length, D d_model, H heads, V vocabulary.
"""

from transformer_lib.language_model.generation import (
    IncrementalLanguageModel,
    generate,
    sample_next,
)
from transformer_lib.language_model.model import (  # noqa: F401 (check_trainable: train, checkpoint)
    LanguageModel,
    check_trainable,
    language_model_batches,
    next_token_distribution,
    perplexity,
)

__all__ = [
    "LanguageModel",
    "generate",
    "next_token_distribution",
    "sample_next",
    "IncrementalLanguageModel",
    "language_model_batches",
    "perplexity",
]
