"""Our modules as PyTorch's, with copied weights: the one bridge to ``torch.nn``.

Tests, benchmarks and notebooks 05/06 compare our modules with ``nn.MultiheadAttention``,
``nn.TransformerEncoderLayer``/``nn.TransformerDecoderLayer`` and ``nn.Transformer``;
notebook 09's ``LanguageModel`` with ``nn.TransformerEncoder`` under a causal mask
(``TorchLanguageModel``); notebook 10's ``EncoderOnlyModel`` with ``nn.TransformerEncoder``
under the padding mask alone (``TorchEncoderOnlyModel``).
Names differ only here: ``w_q, w_k, w_v`` are stacked in ``in_proj_weight``, ``w_o`` is
``out_proj``, ``cross_attn`` is ``multihead_attn``, ``feed_forward.linear1`` is ``linear1``.

Masks: ours are bool with True = "may attend" (see ``masks``); PyTorch's are bool with
True = "blocked", split into ``key_padding_mask`` (B, S) and ``attn_mask`` (T, S).

Shapes:
    B batch, S source length, T target length, D d_model, H heads, V vocabulary.
"""

from transformer_lib.model.reference.encoder_only import TorchEncoderOnlyModel
from transformer_lib.model.reference.language_model import TorchLanguageModel
from transformer_lib.model.reference.layers import (
    copy_attention_from_torch,
    copy_attention_to_torch,
    to_torch_attention,
    to_torch_attn_mask,
    to_torch_decoder_layer,
    to_torch_encoder_layer,
    to_torch_padding_mask,
)
from transformer_lib.model.reference.transformer import TorchTransformer

__all__ = [
    "copy_attention_from_torch",
    "copy_attention_to_torch",
    "to_torch_attention",
    "to_torch_attn_mask",
    "to_torch_decoder_layer",
    "to_torch_encoder_layer",
    "to_torch_padding_mask",
    "TorchTransformer",
    "TorchLanguageModel",
    "TorchEncoderOnlyModel",
]
