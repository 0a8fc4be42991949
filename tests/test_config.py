import dataclasses
import typing

import pytest

from transformer_lib.model import config as config_module
from transformer_lib.model.config import TransformerConfig


def test_defaults_are_the_paper_base_model():
    c = TransformerConfig()
    assert (c.d_model, c.n_heads, c.d_ff, c.n_encoder_layers, c.dropout) == (512, 8, 2048, 6, 0.1)
    assert c.d_k == 64 and not c.norm_first


def test_small_preset_and_frozen():
    c = TransformerConfig.small(100, 120)
    assert (c.d_model, c.n_heads, c.n_encoder_layers, c.n_decoder_layers) == (128, 4, 2, 2)
    assert not c.share_embeddings  # vocabularies differ
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.d_model = 64
    assert c.replace(dropout=0.0).dropout == 0.0
    assert TransformerConfig(**c.to_dict()) == c


def test_small_shares_embeddings_only_when_asked():
    """Two vocabularies of the same size are still two vocabularies: equal sizes alone
    must not make them share one embedding matrix."""
    assert not TransformerConfig.small(100).share_embeddings
    assert not TransformerConfig.small(100, 100).share_embeddings
    assert TransformerConfig.small(100, share_embeddings=True).share_embeddings
    with pytest.raises(ValueError, match=r"`share_embeddings` must be False when the vocab"):
        TransformerConfig.small(100, 120, share_embeddings=True)


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"n_heads": 0}, ValueError, r"`n_heads` must be an int >= 1; got 0"),
        ({"d_model": "512"}, TypeError, r"`d_model` must be an int; got str '512'"),
        ({"d_model": 100, "n_heads": 8}, ValueError, r"`d_model` must be divisible by n_heads=8"),
        (
            {"d_model": 129, "n_heads": 3},
            ValueError,
            r"`d_model` must be even for sinusoidal positions .*; got 129",
        ),
        ({"dropout": 1.5}, ValueError, r"`dropout` must be a float in \[0, 1\); got 1.5"),
        ({"dropout": -0.1}, ValueError, r"`dropout` must be a float in \[0, 1\); got -0.1"),
        (
            {"tgt_vocab_size": 10},
            ValueError,
            r"`share_embeddings` must be False when the vocabularies differ; got True with "
            r"src_vocab_size=37000, tgt_vocab_size=10",
        ),
        ({"pad_id": -1}, ValueError, r"`pad_id` must be an int >= 0; got -1"),
        (
            {"attention_dropout": 1.0},
            ValueError,
            r"`attention_dropout` must be a float in \[0, 1\); got 1.0",
        ),
        (
            {"attention_init": "xavier"},
            ValueError,
            r"`attention_init` must be one of \('separate', 'fused'\); got 'xavier'",
        ),
    ],
)
def test_invalid_config_is_named(changes, error, match):
    with pytest.raises(error, match=match):
        TransformerConfig(**changes)


def test_attention_init_is_a_literal_of_the_starts_it_names():
    hints = typing.get_type_hints(TransformerConfig, vars(config_module))
    assert typing.get_args(hints["attention_init"]) == config_module.ATTENTION_INITS
    assert set(config_module.ATTENTION_INITS) == {"fused", "separate"}
    with pytest.raises(
        ValueError, match=r"`attention_init` must be one of \('separate', 'fused'\)"
    ):
        TransformerConfig(attention_init="xavier")
