"""``nn.Transformer``'s stacks between our embeddings and output layer, with the contract
and calling convention of ``model.Transformer``.

Shapes:
    B batch, S source length, T target length, D d_model, H heads, V vocabulary.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import torch
from torch import nn

from transformer_lib._checks import check_mask
from transformer_lib.model.attention import AttentionWeights
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import ModelContract
from transformer_lib.model.masks import causal_mask, padding_mask
from transformer_lib.model.reference.layers import (
    to_torch_attn_mask,
    to_torch_decoder_layer,
    to_torch_encoder_layer,
    to_torch_padding_mask,
)
from transformer_lib.model.transformer import (
    Decoder,
    Encoder,
    Transformer,
    embeddings,
    init_parameters,
    tie_output,
)


def _ask_for_weights(module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    # nn.Transformer*Layer calls its attention with need_weights=False; we override that
    return args, {**kwargs, "need_weights": True, "average_attn_weights": False}


def _keep_weights(weights: list, module: nn.Module, args: tuple, output: tuple) -> None:
    weights.append(output[1])  # (B, H, T, S)


@contextmanager
def _recording(model: TorchTransformer, attention: AttentionWeights | None) -> Iterator[None]:
    """Inside the block, each attention's per-head weights go to its list in ``attention``.

    The hooks exist only while recording, so the model is stock PyTorch otherwise
    (hooks switch off the encoder layer's fused fast path).
    """
    if attention is None:
        yield
        return
    targets = [(layer.self_attn, attention.encoder) for layer in model.encoder.layers]
    for layer in model.decoder.layers:
        targets += [
            (layer.self_attn, attention.decoder_self),
            (layer.multihead_attn, attention.cross),
        ]
    handles = []
    for module, weights in targets:
        handles.append(module.register_forward_pre_hook(_ask_for_weights, with_kwargs=True))
        handles.append(module.register_forward_hook(partial(_keep_weights, weights)))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def _torch_norm(norm: nn.Module) -> nn.LayerNorm | None:
    """A copy of our final norm; post-norm stacks have none (``nn.Identity``)."""
    return copy.deepcopy(norm) if isinstance(norm, nn.LayerNorm) else None


def _torch_encoder(ours: Encoder) -> nn.TransformerEncoder:
    """Our encoder stack as ``nn.TransformerEncoder``, every weight copied."""
    layers = [to_torch_encoder_layer(layer) for layer in ours.layers]
    theirs = nn.TransformerEncoder(
        layers[0], len(layers), norm=_torch_norm(ours.norm), enable_nested_tensor=False
    )
    theirs.layers = nn.ModuleList(layers)  # the copies, not N clones of the first
    return theirs


def _torch_decoder(ours: Decoder) -> nn.TransformerDecoder:
    """Our decoder stack as ``nn.TransformerDecoder``, every weight copied."""
    layers = [to_torch_decoder_layer(layer) for layer in ours.layers]
    theirs = nn.TransformerDecoder(layers[0], len(layers), norm=_torch_norm(ours.norm))
    theirs.layers = nn.ModuleList(layers)
    return theirs


class _Ends(nn.Module):
    """What ``TorchTransformer`` takes of our model: the token embeddings, the positional
    encoding and the output layer, started (and shared, tied) as ``Transformer`` starts
    them."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.src_embed, self.tgt_embed, self.positional = embeddings(config)
        self.output = nn.Linear(config.d_model, config.tgt_vocab_size)
        init_parameters(self, config)
        tie_output(self, config)


class TorchTransformer(ModelContract):
    """``nn.Transformer``'s two stacks between our embeddings, positional encoding and
    output layer, with the contract and calling convention of ``model.Transformer``
    (our masks, ``AttentionWeights``, ``pad_id``, ``max_len``, vocabulary sizes).

    ``TorchTransformer(config)`` is stock ``nn.Transformer`` (its initialisation, final
    LayerNorms, attention dropout), what the benchmarks compare against, between our
    embeddings and output layer built for it alone. ``TorchTransformer(config,
    Transformer(config))`` takes them from one of our models instead, so that with the same
    seed both start from identical ones (the studies compare that way). ``from_model``
    mirrors one of our models exactly. Its ``forward`` is the contract's
    (``ModelContract.forward``).

    Shapes: src (B, S), tgt (B, T) -> logits (B, T, V).
    """

    def __init__(
        self,
        config: TransformerConfig,
        base: Transformer | None = None,
        encoder: nn.TransformerEncoder | None = None,
        decoder: nn.TransformerDecoder | None = None,
    ) -> None:
        """``base`` (a ``Transformer``, or a module holding only these four) lends its
        ``src_embed``, ``tgt_embed``, ``positional`` and ``output``; by default they are
        built for this model alone. (A ``Transformer`` draws them between its stacks'
        weights, so only a whole one built with seed s has seed s's embeddings.)
        ``encoder``/``decoder`` replace ``nn.Transformer(config)``'s stacks."""
        super().__init__()
        self.config = c = config
        base = _Ends(config) if base is None else base
        self.src_embed, self.tgt_embed = base.src_embed, base.tgt_embed
        self.positional, self.output = base.positional, base.output
        if encoder is None or decoder is None:
            stack = nn.Transformer(
                c.d_model,
                c.n_heads,
                c.n_encoder_layers,
                c.n_decoder_layers,
                c.d_ff,
                c.dropout,
                c.activation,
                layer_norm_eps=c.layer_norm_eps,
                batch_first=True,
                norm_first=c.norm_first,
            )
            encoder, decoder = stack.encoder, stack.decoder
        self.encoder, self.decoder = encoder, decoder
        self.encoder.use_nested_tensor = False  # a prototype fast path; it warns

    @classmethod
    def from_model(cls, model: Transformer) -> TorchTransformer:
        """An independent copy of ``model`` with PyTorch's stacks, every weight copied.

        Shared and tied embeddings stay shared; a stack with a final norm (pre-norm, or
        ``final_norm=True``) gets a copy of ours, one without gets none (``nn.Transformer``
        always adds one); the attention dropout is copied.
        """
        ends = nn.ModuleDict(  # what is not a stack; one deepcopy keeps shares and ties
            {
                name: getattr(model, name)
                for name in ("src_embed", "tgt_embed", "positional", "output")
            }
        )
        mirror = cls(
            model.config,
            copy.deepcopy(ends),
            _torch_encoder(model.encoder),
            _torch_decoder(model.decoder),
        )
        return mirror.train(model.training)

    def encode(
        self,
        src: torch.Tensor,
        src_mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: src (B, S) ids, src_mask (B, 1, 1, S) -> memory (B, S, D).
        ``src_mask`` defaults to the padding mask of ``src``."""
        if src_mask is None:
            src_mask = padding_mask(src, self.pad_id)
        check_mask("src_mask", src_mask, (src.size(0), 1, 1, src.size(1)), "(B, 1, 1, S)")
        x = self.positional(self.src_embed(src, "src"))  # (B, S) -> (B, S, D)
        with _recording(self, attention):
            return self.encoder(x, src_key_padding_mask=to_torch_padding_mask(src_mask))

    def decode(
        self,
        tgt: torch.Tensor,
        memory: torch.Tensor,
        src_mask: torch.Tensor | None,
        tgt_mask: torch.Tensor | None = None,
        attention: AttentionWeights | None = None,
    ) -> torch.Tensor:
        """Shapes: tgt (B, T) ids, memory (B, S, D), src_mask (B, 1, 1, S), tgt_mask
        (B, 1, T, T) -> logits (B, T, V). ``tgt_mask`` defaults to causal AND padding;
        ``src_mask`` must be passed (None: no source padding), as in ``Transformer.decode``."""
        B, T = tgt.shape
        check_mask("tgt_mask", tgt_mask, (B, 1, T, T), "(B, 1, T, T)")
        check_mask("src_mask", src_mask, (B, 1, 1, memory.size(1)), "(B, 1, 1, S)")
        if tgt_mask is None:  # PyTorch takes causal and padding apart
            blocked = ~causal_mask(T, device=tgt.device)[0, 0]  # (T, T)
            tgt_padding = tgt == self.pad_id  # (B, T)
        else:
            blocked, tgt_padding = to_torch_attn_mask(tgt_mask, self.config.n_heads), None
        x = self.positional(self.tgt_embed(tgt, "tgt"))  # (B, T) -> (B, T, D)
        with _recording(self, attention):
            hidden = self.decoder(
                x,
                memory,
                tgt_mask=blocked,
                tgt_key_padding_mask=tgt_padding,
                memory_key_padding_mask=to_torch_padding_mask(src_mask),
            )
        return self.output(hidden)  # (B, T, D) -> (B, T, V)
