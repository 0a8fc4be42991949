"""Model hyper-parameters in one frozen, validated dataclass (paper §3, Table 3)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Literal, get_args

from transformer_lib._checks import (
    check_even_width,
    check_heads,
    check_int,
    check_probability,
    fail,
)

AttentionInit = Literal["separate", "fused"]  # how W^Q, W^K, W^V start: see below
ATTENTION_INITS = get_args(AttentionInit)
Activation = Literal["relu", "gelu"]  # the FFN's non-linearity (layers.FeedForward)
ACTIVATIONS = get_args(Activation)


@dataclass(frozen=True)
class TransformerConfig:
    """Hyper-parameters of the encoder–decoder Transformer.

    Defaults are the paper's *base* model (Table 3). ``TransformerConfig.small()``
    is the size the notebooks train on a laptop CPU.
    """

    # WMT14 En-De used a shared byte-pair vocabulary of about 37000 tokens (§5.1).
    src_vocab_size: int = 37000
    tgt_vocab_size: int = 37000
    d_model: int = 512  # width of every residual stream vector (§3)
    n_heads: int = 8  # h = 8, so d_k = d_v = 64 (§3.2.2)
    d_ff: int = 2048  # inner width of the position-wise FFN, 4 x d_model (§3.3)
    n_encoder_layers: int = 6  # N = 6 (§3.1); 0 for a decoder-only model (notebook 09)
    n_decoder_layers: int = 6  # 0 for an encoder-only model (notebook 10)
    dropout: float = 0.1  # P_drop = 0.1 for the base model (§5.4)
    max_len: int = 512  # longest sequence the positional table covers
    pad_id: int = 0  # id of <pad>; masks are derived from it
    norm_first: bool = False  # paper: post-norm, LayerNorm(x + Sublayer(x)) (§3.1)
    share_embeddings: bool = True  # one matrix for source and target embeddings (§3.4)
    tie_output: bool = True  # the pre-softmax linear layer reuses the target embedding (§3.4)
    learned_positions: bool = False  # §3.5: learned positions "nearly identical" results
    activation: Activation = "relu"  # the FFN's max(0, ·) (§3.3); GPT-2 uses "gelu" (notebook 09)
    layer_norm_eps: float = 1e-5  # nn.LayerNorm's default
    # Three places where nn.Transformer does what the paper's text does not describe
    # (notebook 08, section 5; benchmarks/ablations.py measures each). We follow the text:
    # §5.4 names dropout on sub-layer outputs and on the embedding sums, not on attention
    # weights (nn.Transformer drops them), and §3.1 describes no LayerNorm after the last
    # post-norm layer of a stack (nn.Transformer: always one); with three seeds, notebook 08
    # shows no difference on `valid` from adding either. How W^Q, W^K, W^V start, the paper
    # does not say: "fused" (nn.MultiheadAttention's Xavier bound for one (3D, D) matrix,
    # zero attention biases) beat "separate" (three (D, D) Xavier matrices) on `valid` and on
    # the longer split, on every seed, in the former recipe's study, so it is the default.
    attention_dropout: float = 0.0
    final_norm: bool = False  # pre-norm stacks always end with one
    attention_init: AttentionInit = "fused"

    def __post_init__(self) -> None:
        for name in (
            "src_vocab_size",
            "tgt_vocab_size",
            "d_model",
            "n_heads",
            "d_ff",
            "max_len",
        ):
            check_int(name, getattr(self, name), minimum=1)
        check_int("n_encoder_layers", self.n_encoder_layers, minimum=0)
        check_int("n_decoder_layers", self.n_decoder_layers, minimum=0)
        if self.n_encoder_layers == self.n_decoder_layers == 0:
            fail(
                "n_decoder_layers",
                "at least 1 when n_encoder_layers=0 (a model needs one stack)",
                "0",
                "Decoder-only: TransformerConfig.decoder_only(); encoder-only: "
                "TransformerConfig.encoder_only().",
            )
        check_int("pad_id", self.pad_id, minimum=0)
        check_probability("dropout", self.dropout)
        check_probability("attention_dropout", self.attention_dropout)
        if self.attention_init not in ATTENTION_INITS:
            given = repr(self.attention_init)
            fail("attention_init", "one of {choices}", given, choices=ATTENTION_INITS)
        if self.activation not in ACTIVATIONS:
            fail("activation", "one of {choices}", repr(self.activation), choices=ACTIVATIONS)
        check_heads(self.d_model, self.n_heads)
        if not self.learned_positions:
            check_even_width(self.d_model)
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            fail(
                "share_embeddings",
                "False when the vocabularies differ",
                f"True with src_vocab_size={self.src_vocab_size}, "
                f"tgt_vocab_size={self.tgt_vocab_size}",
            )
        if self.pad_id >= min(self.src_vocab_size, self.tgt_vocab_size):
            fail("pad_id", "a valid id in both vocabularies", str(self.pad_id))

    @property
    def d_k(self) -> int:
        """Width of one head: d_k = d_v = d_model / h (§3.2.2)."""
        return self.d_model // self.n_heads

    @classmethod
    def small(
        cls,
        src_vocab_size: int = 1000,
        tgt_vocab_size: int | None = None,
        share_embeddings: bool = False,
        **overrides,
    ) -> TransformerConfig:
        """A model that trains in about a minute on a laptop CPU (notebooks).

        ``tgt_vocab_size`` defaults to ``src_vocab_size``. Source and target share one
        embedding matrix only when ``share_embeddings=True``: two vocabularies of the same
        size are still two vocabularies (id 7 is a different word in each), so equal sizes
        alone must not tie them together.
        """
        tgt_vocab_size = src_vocab_size if tgt_vocab_size is None else tgt_vocab_size
        values = dict(
            d_model=128,
            n_heads=4,
            d_ff=512,
            n_encoder_layers=2,
            n_decoder_layers=2,
            max_len=128,
            share_embeddings=share_embeddings,
        )
        values.update(overrides)
        return cls(src_vocab_size=src_vocab_size, tgt_vocab_size=tgt_vocab_size, **values)

    @classmethod
    def decoder_only(cls, vocab_size: int = 1000, **overrides) -> TransformerConfig:
        """A decoder-only language model (notebook 09) of :meth:`small`'s width: one
        vocabulary for what it reads and what it predicts (``vocab_size``), no encoder
        (``n_encoder_layers=0``), and ``n_decoder_layers`` layers, 4 unless overridden."""
        values = dict(n_encoder_layers=0, n_decoder_layers=4, share_embeddings=True)
        values.update(overrides)
        return cls.small(vocab_size, vocab_size, **values)

    @classmethod
    def encoder_only(cls, vocab_size: int = 1000, **overrides) -> TransformerConfig:
        """An encoder-only (BERT-style) model (notebook 10) of :meth:`small`'s width: one
        vocabulary for what it reads and what it predicts (``vocab_size``), no decoder
        (``n_decoder_layers=0``), and ``n_encoder_layers`` layers, 4 unless overridden."""
        values = dict(n_encoder_layers=4, n_decoder_layers=0, share_embeddings=True)
        values.update(overrides)
        return cls.small(vocab_size, vocab_size, **values)

    def replace(self, **changes) -> TransformerConfig:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)
