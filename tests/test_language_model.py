"""The decoder-only language model (notebook 09): PyTorch's equal, generation, errors,
training, and translation as language modelling."""

import pytest
import torch
from test_reference import _with_grads_as_weights

from transformer_lib import LanguageModel, Transformer, TransformerConfig
from transformer_lib.data import SEP, joint_vocab, language_model_batches
from transformer_lib.inference.cache import IncrementalDecoder
from transformer_lib.inference.decode import beam_search, greedy_decode
from transformer_lib.inference.generation import generate, sample_next
from transformer_lib.model.attention import AttentionWeights
from transformer_lib.model.language_model import perplexity
from transformer_lib.model.lm_translation import LanguageModelTranslator
from transformer_lib.model.reference import TorchLanguageModel
from transformer_lib.train import make_optimizer, train
from transformer_lib.train.checkpoint import load_checkpoint
from transformer_lib.train.loss import label_smoothed_cross_entropy

V = 40
SIZES = dict(d_model=32, n_heads=4, d_ff=64, n_decoder_layers=2, max_len=24, dropout=0.0)


def small_model(seed: int = 0, **changes) -> LanguageModel:
    torch.manual_seed(seed)
    return LanguageModel(TransformerConfig.decoder_only(V, **{**SIZES, **changes}))


def padded_batch() -> torch.Tensor:
    tokens = torch.randint(4, V, (3, 9), generator=torch.Generator().manual_seed(1))
    tokens[0, 6:] = 0  # padding at the end of two rows
    tokens[1, 8:] = 0
    return tokens


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_equal_to_torch_transformer_encoder_with_a_causal_mask(norm_first, activation):
    ours = small_model(norm_first=norm_first, activation=activation).double()
    theirs = TorchLanguageModel.from_model(ours)
    tokens = padded_batch()
    real = tokens != 0  # padded positions' outputs are never used
    ours_out, theirs_out = ours(tokens), theirs(tokens)
    torch.testing.assert_close(ours_out[real], theirs_out[real], rtol=1e-10, atol=1e-10)
    (ours_out[real] ** 2).sum().backward()
    (theirs_out[real] ** 2).sum().backward()
    # every parameter's gradient, mapped to PyTorch's parameters as the weights were
    mirrored = dict(TorchLanguageModel.from_model(_with_grads_as_weights(ours)).named_parameters())
    assert len(mirrored) == len(list(theirs.parameters())) > 20
    for name, param in theirs.named_parameters():
        torch.testing.assert_close(param.grad, mirrored[name], rtol=1e-9, atol=1e-10, msg=name)


def test_a_position_never_reads_a_later_one():
    model = small_model().eval()
    tokens = padded_batch()
    changed = tokens.clone()
    changed[:, 5] = (changed[:, 5] + 1) % (V - 4) + 4
    a, b = model(tokens), model(changed)
    torch.testing.assert_close(a[:, :5], b[:, :5])
    assert not torch.allclose(a[2, 5:], b[2, 5:])


def test_padding_changes_no_real_position():
    model = small_model().eval()
    row = torch.randint(4, V, (1, 6), generator=torch.Generator().manual_seed(2))
    padded = torch.cat([row, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    torch.testing.assert_close(model(padded)[:, :6], model(row), rtol=1e-5, atol=1e-6)


def test_the_output_layer_is_the_embedding_when_tied():
    tied = small_model()
    assert tied.output.weight is tied.embed.embedding.weight
    untied = small_model(tie_output=False)
    assert untied.output.weight is not untied.embed.embedding.weight


@pytest.mark.parametrize("norm_first", [False, True])
def test_the_cache_gives_the_plain_loops_logits_and_tokens(norm_first):
    model = small_model(norm_first=norm_first).eval()
    prompt = torch.randint(4, V, (2, 5), generator=torch.Generator().manual_seed(3))
    cached = IncrementalDecoder(model)
    tokens = prompt
    with torch.no_grad():
        for _ in range(6):
            torch.testing.assert_close(cached.step(tokens), model(tokens)[:, -1])
            tokens = torch.cat([tokens, model(tokens)[:, -1].argmax(-1, keepdim=True)], dim=1)
    for method in ("greedy", "sample"):
        kwargs = dict(method=method, temperature=0.8, top_k=7, seed=4)
        with_cache = generate(model, prompt, 12, **kwargs)
        assert torch.equal(with_cache, generate(model, prompt, 12, cache=False, **kwargs))
        assert with_cache.shape == (2, 17) and torch.equal(with_cache[:, :5], prompt)


def test_sampling_is_reproducible_with_a_seed_and_varies_without():
    model = small_model()
    prompt = torch.full((4, 1), 2)
    first = generate(model, prompt, 10, seed=7)
    assert torch.equal(first, generate(model, prompt, 10, seed=7))
    assert not torch.equal(first, generate(model, prompt, 10, seed=8))
    assert model.training  # the mode is restored


def test_eos_ends_a_row_and_generation_stops_when_all_have_ended():
    model = small_model().eval()
    with torch.no_grad():
        model.output.bias.fill_(-50.0)
        model.output.bias[3] = 50.0  # <eos> always wins
    out = generate(model, torch.full((2, 2), 5), 10, method="greedy", eos_id=3)
    assert out.tolist() == [[5, 5, 3], [5, 5, 3]]


def test_sample_next_keeps_only_the_top_k_and_sharpens_with_low_temperature():
    logits = torch.tensor([[3.0, 2.0, 1.0, 0.0, -1.0]]).repeat(2000, 1)
    drawn = sample_next(logits, top_k=2, generator=torch.Generator().manual_seed(0))
    assert set(drawn.tolist()) == {0, 1}
    cold = sample_next(logits, temperature=0.05, generator=torch.Generator().manual_seed(0))
    assert (cold == 0).all()
    hot = sample_next(logits, temperature=5.0, generator=torch.Generator().manual_seed(0))
    assert set(hot.tolist()) == {0, 1, 2, 3, 4}


@pytest.mark.parametrize(
    "change, name",
    [
        (dict(prompt=torch.zeros(1, 0, dtype=torch.long)), "prompt"),
        (
            dict(prompt=torch.full((1, 25), 5)),
            r"`prompt` must be at most max_len=24 positions long; got length 25",
        ),
        (dict(prompt=torch.tensor([[5, V]])), "prompt"),
        (dict(prompt=torch.tensor([[5, 0]])), "prompt"),
        (dict(prompt=torch.tensor([[5.0, 6.0]])), "prompt"),
        (dict(max_new_tokens=23), "max_new_tokens"),
        (dict(max_new_tokens=0), "max_new_tokens"),
        (dict(top_k=0), "top_k"),
        (dict(top_k=V + 1), "top_k"),
        (dict(temperature=0.0), "temperature"),
        (dict(temperature=-1.0), "temperature"),
        (dict(method="beam"), "method"),
    ],
)
def test_bad_generation_arguments_are_named(change, name):
    arguments = dict(prompt=torch.tensor([[5, 6]]), max_new_tokens=5, top_k=None)
    arguments |= change
    with pytest.raises((ValueError, TypeError), match=name):
        generate(small_model(), **arguments)


def test_bad_config_is_named():
    with pytest.raises(ValueError, match="n_encoder_layers"):
        LanguageModel(TransformerConfig.small(V))
    with pytest.raises(ValueError, match="n_encoder_layers"):
        Transformer(TransformerConfig.decoder_only(V))
    with pytest.raises(ValueError, match="activation"):
        TransformerConfig.decoder_only(V, activation="swish")


def test_training_lowers_the_loss_and_perplexity_is_the_exp_of_it(tmp_path):
    torch.manual_seed(0)
    sequences = [[4 + (i + k) % 6 for k in range(3 + i % 5)] for i in range(60)]
    batches = language_model_batches(sequences, max_tokens=64, shuffle=True, seed=0)
    inputs, targets = batches[0]
    assert torch.equal(inputs[:, 1:][targets[:, :-1] != 0], targets[:, :-1][targets[:, :-1] != 0])
    model = small_model()
    before = perplexity(model, batches)
    history = train(model, batches, make_optimizer(model, lr=3e-3), steps=60, log_every=20,
                    label_smoothing=0.0, checkpoint_dir=tmp_path)  # fmt: skip
    after = perplexity(model, batches)
    assert history["loss"][-1] < history["loss"][0] and after < before / 2
    restored = load_checkpoint(tmp_path).model
    assert isinstance(restored, LanguageModel)
    assert perplexity(restored, batches) == pytest.approx(after, rel=1e-5)


def translator(seed: int = 0) -> tuple[LanguageModelTranslator, object]:
    vocab = joint_vocab([["a", "b", "c"], ["x", "y", "z"]])
    config = TransformerConfig.decoder_only(len(vocab), **SIZES)
    torch.manual_seed(seed)
    return LanguageModelTranslator(config, vocab[SEP]).eval(), vocab


def test_the_translator_reads_source_sep_target_whatever_the_padding():
    model, vocab = translator()
    src = torch.tensor([[4, 5, 6], [7, 8, 0]])
    tgt = torch.tensor([[2, 9, 10], [2, 8, 0]])  # <bos> y, padded
    logits = model(src, tgt)
    sep = vocab[SEP]
    for row, n, m in ((0, 3, 3), (1, 2, 2)):
        sequence = torch.cat([src[row, :n], torch.tensor([sep]), tgt[row, 1:m]])[None]
        alone = model.language_model(sequence)[0, n : n + m]  # from <sep> on
        torch.testing.assert_close(logits[row, :m], alone, rtol=1e-5, atol=1e-6)


def test_the_translators_loss_is_the_language_models_loss_masked_on_the_prompt():
    model, vocab = translator()
    src, tgt_in, tgt_out = torch.tensor([[4, 5, 6]]), torch.tensor([[2, 9]]), torch.tensor([[9, 3]])
    sequence = torch.tensor([[4, 5, 6, vocab[SEP], 9, 3]])
    targets = sequence[:, 1:].clone()
    targets[:, :3] = 0  # x_2, x_3 and <sep> are given, never predicted
    lm_loss = label_smoothed_cross_entropy(model.language_model(sequence[:, :-1]), targets)
    ours = label_smoothed_cross_entropy(model(src, tgt_in), tgt_out)
    torch.testing.assert_close(ours, lm_loss)


@pytest.mark.parametrize("beam_size, seed, eos_bias", [(1, 3, 1.8), (3, 1, 0.5)])
def test_the_translators_cached_searches_give_the_plain_loops(beam_size, seed, eos_bias):
    model, _ = translator(seed=seed)
    # sources of different lengths: the rows' outputs start at different positions, and
    # with <eos> likely the rows finish at different steps
    src = torch.tensor([[4, 5, 6, 7], [7, 8, 0, 0], [9, 0, 0, 0]])
    with torch.no_grad():
        model.language_model.output.bias[3] = eos_bias  # <eos> likelier: rows end early
    plain = beam_search(model, src, beam_size=beam_size, max_len=12, cache=False)
    cached = beam_search(model, src, beam_size=beam_size, max_len=12, cache=True)
    assert torch.equal(plain[0], cached[0])
    torch.testing.assert_close(plain[1], cached[1])
    lengths = (plain[0] != 0).sum(dim=1)
    assert len(set(lengths.tolist())) > 1  # the rows did finish at different steps


def test_the_translators_cache_equals_its_decode_at_every_step():
    model, _ = translator(seed=1)
    src = torch.tensor([[4, 5, 6, 7], [7, 8, 0, 0]])
    tgt = torch.tensor([[2, 9, 10, 4, 5], [2, 8, 3, 0, 0]])  # row 1 finished: padding
    with torch.no_grad():
        full = model.decode(tgt, model.encode(src), None)  # (B, T, V)
        decoder = IncrementalDecoder(model, model.encode(src))
        for t in range(1, tgt.size(1) + 1):
            step = decoder.step(tgt[:, :t])
            torch.testing.assert_close(step[0], full[0, t - 1], rtol=1e-5, atol=1e-6)
            if t <= 3:  # row 1's real tokens
                torch.testing.assert_close(step[1], full[1, t - 1], rtol=1e-5, atol=1e-6)


def test_the_translator_refuses_an_impossible_max_len_before_searching(monkeypatch):
    model, _ = translator()
    src = torch.full((1, 20), 4)  # 20 source tokens: 4 of the 24 positions are left
    monkeypatch.setattr(model, "encode", lambda *a, **k: pytest.fail("the search started"))
    for search in (greedy_decode, beam_search):
        with pytest.raises(
            ValueError,
            match=r"`max_len` must be at most 4, the positions the model's table \(max_len=24\) has for "
            r"an output",
        ):
            search(model, src, max_len=5)


def test_the_translator_names_attention_it_cannot_show():
    model, vocab = translator()
    src = torch.tensor([[4, 5, 6]])
    with pytest.raises(ValueError, match=r"`attention` must be None: a decoder-only model has "
                       r"no cross-attention to record"):  # fmt: skip
        model(src, torch.tensor([[2, 9]]), attention=AttentionWeights())


def test_the_searches_take_the_translator_and_bad_input_is_named():
    model, _ = translator()
    src = torch.tensor([[4, 5, 6], [7, 8, 0]])
    tokens, _ = greedy_decode(model, src, max_len=5)
    beams, _ = beam_search(model, src, beam_size=3, max_len=5)
    assert tokens.size(0) == beams.size(0) == 2
    with pytest.raises(ValueError, match="src"):
        model(torch.tensor([[4, 0, 6]]), torch.tensor([[2]]))
    with pytest.raises(ValueError, match="source \\+ target"):
        model(torch.full((1, 20), 4), torch.full((1, 5), 4))
    with pytest.raises(ValueError, match="sep_id"):
        LanguageModelTranslator(model.config, 10_000)
