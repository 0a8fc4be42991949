"""The encoder-only model (notebook 10): PyTorch's equal, both directions under the padding
mask, the contract (training, perplexity, accuracy, checkpoints), the sentence classifier,
the subject-number task against the generator's own parse, the bag-of-words baseline, and
the errors."""

import copy
import hashlib
import importlib.util
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from transformer_lib import (
    EncoderOnlyModel,
    LanguageModel,
    SentenceClassifier,
    Transformer,
    TransformerConfig,
)
from transformer_lib.data import (
    SPLITS,
    classification_batches,
    encoder_vocab,
    load_split,
    masked_token_batches,
    subject_number_task,
    tokenize,
)
from transformer_lib.inference.cache import IncrementalDecoder
from transformer_lib.inference.generation import generate
from transformer_lib.model.contract import check_course_model
from transformer_lib.model.encoder_only import accuracy, mean_over_tokens
from transformer_lib.model.language_model import perplexity
from transformer_lib.model.reference import TorchEncoderOnlyModel
from transformer_lib.train import make_optimizer, train
from transformer_lib.train.bag_of_words import bag_of_words_accuracy, fit_bag_of_words
from transformer_lib.train.checkpoint import load_checkpoint

pytestmark = pytest.mark.usefixtures("one_thread")

V = 40
SIZES = dict(d_model=32, n_heads=4, d_ff=64, n_encoder_layers=2, max_len=24, dropout=0.0)
GENERATOR = Path(__file__).resolve().parents[1] / "data" / "generate.py"


def small_model(seed: int = 0, **changes) -> EncoderOnlyModel:
    torch.manual_seed(seed)
    return EncoderOnlyModel(TransformerConfig.encoder_only(V, **{**SIZES, **changes}))


def padded_batch() -> torch.Tensor:
    tokens = torch.randint(5, V, (3, 9), generator=torch.Generator().manual_seed(1))
    tokens[0, 6:] = 0  # padding at the end of two rows
    tokens[1, 8:] = 0
    return tokens


def grads_as_weights(model: nn.Module) -> nn.Module:
    """A copy of ``model`` whose parameters hold its gradients, so that mirroring it maps
    each gradient to its PyTorch parameter exactly as the weights were mapped."""
    grads = copy.deepcopy(model)
    with torch.no_grad():
        for param, original in zip(grads.parameters(), model.parameters(), strict=True):
            param.copy_(original.grad)
    return grads


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_equal_to_torch_transformer_encoder_without_a_causal_mask(norm_first):
    ours = small_model(norm_first=norm_first).double()
    with torch.no_grad():  # nn.LayerNorm starts at 1 and 0: random values test the copy
        for module in ours.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.normal_()
                module.bias.normal_()
    theirs = TorchEncoderOnlyModel.from_model(ours)
    tokens = padded_batch()
    ours_out, theirs_out = ours(tokens), theirs(tokens)
    torch.testing.assert_close(ours_out, theirs_out, rtol=1e-10, atol=1e-10)
    (ours_out**2).sum().backward()
    (theirs_out**2).sum().backward()
    mirrored = dict(TorchEncoderOnlyModel.from_model(grads_as_weights(ours)).named_parameters())
    assert len(mirrored) == len(list(theirs.parameters())) > 20
    for name, param in theirs.named_parameters():
        torch.testing.assert_close(param.grad, mirrored[name], rtol=1e-9, atol=1e-10, msg=name)
    assert (theirs.encoder.norm is not None) == norm_first  # pre-norm: the final norm copied
    with torch.no_grad():  # the comparison notices one weight that differs
        theirs.encoder.layers[1].self_attn.in_proj_weight[0, 0] += 0.1
    assert not torch.allclose(ours(tokens), theirs(tokens))


def test_every_position_reads_the_later_ones_and_never_the_padding():
    model = small_model().eval()
    tokens = padded_batch()
    changed = tokens.clone()
    changed[2, 5] = 5 if tokens[2, 5] != 5 else 6
    first, second = model(tokens), model(changed)
    assert not torch.allclose(first[2, :5], second[2, :5])  # no causal mask: 5 is read by 0-4
    torch.testing.assert_close(first[:2], second[:2])  # other sentences untouched
    row = tokens[1:2, :8]  # row 1 without its padding
    torch.testing.assert_close(model(row), first[1:2, :8], rtol=1e-5, atol=1e-6)


def test_the_contract_the_head_and_no_generation():
    config = TransformerConfig.encoder_only(V)
    assert (config.n_encoder_layers, config.n_decoder_layers, config.d_model) == (4, 0, 128)
    model = small_model()
    check_course_model("model", model)
    assert model.output.weight is model.embed.embedding.weight
    assert small_model(tie_output=False).output.weight is not model.embed.embedding.weight
    assert model.generation_stack() is None
    with pytest.raises(TypeError, match=r"`model` must be a model with a cached step"):
        IncrementalDecoder(model)
    with pytest.raises(TypeError, match=r"`model` must be a transformer_lib.LanguageModel"):
        generate(model, torch.tensor([[5, 6]]), 3)
    assert (model.pad_id, model.max_len, model.vocab_size, model.ignore_index) == (0, 24, V, 0)
    outputs = model.eval().layer_outputs(padded_batch())
    assert [tuple(x.shape) for x in outputs] == [(3, 9, 32)] * 2
    torch.testing.assert_close(model.encode(padded_batch()), outputs[-1])  # post-norm: no norm


def test_pretraining_lowers_the_masked_token_loss_and_a_checkpoint_round_trips(tmp_path):
    vocab = encoder_vocab([[f"w{k}" for k in range(V - 5)]])
    sequences = [[5 + (i + k) % 8 for k in range(4 + i % 6)] for i in range(64)]

    def batches(epoch):  # masked anew every epoch
        return masked_token_batches(sequences, vocab, max_tokens=96, shuffle=True, seed=epoch)

    model = small_model()
    before = perplexity(model, batches(100))
    history = train(model, batches, make_optimizer(model, lr=3e-3), steps=60, log_every=20,
                    label_smoothing=0.0, checkpoint_dir=tmp_path)  # fmt: skip
    after = perplexity(model, batches(100))
    assert history["loss"][-1] < history["loss"][0] and after < before / 2
    assert accuracy(model, batches(100)) > 0.2  # chance: 1 in 35; the 8 words come in turn
    restored = load_checkpoint(tmp_path).model  # built from the saved config
    assert isinstance(restored, EncoderOnlyModel)
    assert restored.output.weight is restored.embed.embedding.weight
    tokens = padded_batch()
    torch.testing.assert_close(restored.eval()(tokens), model.eval()(tokens))


def test_the_sentence_vector_is_the_mean_over_real_tokens_however_much_padding():
    hidden = torch.randn(2, 4, 3)
    tokens = torch.tensor([[7, 8, 0, 0], [7, 8, 9, 6]])
    vectors = mean_over_tokens(hidden, tokens, pad_id=0)
    torch.testing.assert_close(vectors[0], hidden[0, :2].mean(dim=0))
    torch.testing.assert_close(vectors[1], hidden[1].mean(dim=0))
    classifier = SentenceClassifier(small_model(), 3).eval()
    alone = classifier(torch.tensor([[7, 8, 9]]))
    padded = classifier(torch.tensor([[7, 8, 9, 0, 0, 0], [5, 6, 7, 8, 9, 10]]))
    assert padded.shape == (2, 3)
    torch.testing.assert_close(padded[:1], alone, rtol=1e-5, atol=1e-6)


def test_a_classifier_trains_reports_accuracy_and_round_trips(tmp_path):
    # the class: is token 5 before token 6? (a bag of words sees the same two either way)
    rows = torch.randint(7, V, (64, 6), generator=torch.Generator().manual_seed(0)).tolist()
    labels = [i % 2 for i in range(64)]
    for row, label in zip(rows, labels, strict=True):
        row[1], row[4] = (5, 6) if label else (6, 5)
    batches = classification_batches(rows, labels, 2, batch_size=16, shuffle=True)
    classifier = SentenceClassifier(small_model(), 2)
    assert classifier.ignore_index == -100  # class 0 is a real target, not padding
    train(classifier, batches, make_optimizer(classifier, lr=3e-3), steps=40,
          label_smoothing=0.0, checkpoint_dir=tmp_path)  # fmt: skip
    assert accuracy(classifier, batches) > 0.9
    again = SentenceClassifier(small_model(seed=1), 2)
    load_checkpoint(tmp_path, again)
    assert accuracy(again, batches) == accuracy(classifier, batches)


# -- the subject-number task --------------------------------------------------------------


def generator_parse() -> dict[str, tuple[int, int]]:
    """Every English sentence of the corpus with a main and a subordinate clause -> (main,
    subordinate) subject plural?, as the seeded generator's own parse trees say: the
    generator runs again with its clauses recorded (nothing written to disk)."""
    spec = importlib.util.spec_from_file_location("corpus_generator_parse", GENERATOR)
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen  # dataclasses look their module up while being built
    spec.loader.exec_module(gen)
    sample, render, rendered, parse = gen.sample_sentence, gen.render_clause, [], {}

    def recording_render(clause, order, atoms):
        rendered.append((clause, order))
        return render(clause, order, atoms)

    def recording_sample(*args, **kwargs):
        rendered.clear()
        en, de = sample(*args, **kwargs)
        words = [word for word, _ in en]
        if any(w in words for w in ("because", "although", "when")):
            (first, order), (second, _) = rendered
            main, sub = (second, first) if order == "sub" else (first, second)
            plural = [int(gen.person_of(c.subject) == "pl") for c in (main, sub)]
            parse[gen._join(words)] = tuple(plural)
        return en, de

    gen.render_clause, gen.sample_sentence = recording_render, recording_sample
    rng = gen.random.Random(gen.SEED)  # generate()'s draws, in generate()'s order
    gen.sample_pairs(rng, sum(gen.SIZES.values()), {}, {}, gen.MIN_LEN, gen.MAX_LEN)
    gen.sample_pairs(rng, gen.N_LONGER, {}, {}, gen.MAX_LEN + 1, 10 * gen.MAX_LEN,
                     style=gen.RICH, inner=gen.RICH)  # fmt: skip
    del sys.modules[spec.name]
    return parse


@pytest.mark.slow
def test_the_task_labels_are_the_generators_own_parse_in_every_split():
    parse = generator_parse()
    total = 0
    for split in SPLITS:
        sentences, labels = subject_number_task(split)
        expected = [
            (ex.src, main)
            for ex in load_split(split)
            if ex.src in parse and (main := parse[ex.src][0]) != parse[ex.src][1]
        ]
        assert list(zip(sentences, labels, strict=True)) == expected, split
        assert 0.4 < sum(labels) / len(labels) < 0.6  # one subject plural, the other not
        total += len(labels)
    assert total > 2500


HAND_MADE = [  # English, German, alignment, the label (None: the task leaves it out)
    ("the dogs sleep because the man reads the books.",
     "die Hunde schlafen, weil der Mann die Bücher liest.",
     "0-0 1-1 2-2 3-4 4-5 5-6 6-9 7-7 8-8 9-10", 1),
    ("when the dogs sleep, the man reads the books.",
     "wenn die Hunde schlafen, liest der Mann die Bücher.",
     "0-0 1-1 2-2 3-3 4-4 5-6 6-7 7-5 8-8 9-9 10-10", 0),
    ("the dog sleeps because the man reads.", "der Hund schläft, weil der Mann liest.",
     "0-0 1-1 2-2 3-4 4-5 5-6 6-7 7-8", None),  # both subjects singular
    ("she says that the dogs sleep.", "sie sagt, dass die Hunde schlafen.",
     "0-0 1-1 2-3 3-4 4-5 5-6 6-7", None),  # a "that" clause
    ("we wait although the child sees the mice.", "wir warten, obwohl das Kind die Mäuse sieht.",
     "0-0 1-1 2-3 3-4 4-5 5-8 6-6 7-7 8-9", 1),  # a plural object in the other clause
    ("the men sleep when I work.", "die Männer schlafen, wenn ich arbeite.",
     "0-0 1-1 2-2 3-4 4-5 5-6 6-7", 1),
]  # fmt: skip


def test_the_task_reads_the_main_clauses_subject_whichever_clause_comes_first(tmp_path):
    lines = "".join(f"{en}\t{de}\t{links}\n" for en, de, links, _ in HAND_MADE)
    (tmp_path / "valid.tsv").write_text(lines, encoding="utf-8")
    digest = hashlib.sha256(lines.encode("utf-8")).hexdigest()
    (tmp_path / "SHA256SUMS").write_text(f"{digest}  valid.tsv\n", encoding="ascii")
    expected = [(en, label) for en, _, _, label in HAND_MADE if label is not None]
    sentences, labels = subject_number_task("valid", tmp_path)
    assert list(zip(sentences, labels, strict=True)) == expected


@pytest.fixture(scope="module")
def task_data():
    """The task's sentences as encoder-vocabulary ids: train, and valid + test."""
    vocab = encoder_vocab(tokenize(ex.src) for ex in load_split("train"))

    def ids(split):
        sentences, labels = subject_number_task(split)
        return [vocab.encode(tokenize(s)) for s in sentences], labels

    (train_ids, train_labels), valid, test = ids("train"), ids("valid"), ids("test")
    return vocab, (train_ids, train_labels), (valid[0] + test[0], valid[1] + test[1])


def test_a_bag_of_words_is_near_chance_on_the_task_and_not_on_a_bag_of_words_task(task_data):
    vocab, (train_ids, train_labels), (held_ids, held_labels) = task_data
    bow = fit_bag_of_words(train_ids, train_labels, len(vocab))
    assert bag_of_words_accuracy(bow, held_ids, held_labels) < 0.65
    # the same baseline on a task its words decide (is "because" in the sentence?) is right
    because = [int(vocab["because"] in ids) for ids in train_ids]
    assert 0.2 < sum(because) / len(because) < 0.8
    fitted = fit_bag_of_words(train_ids, because, len(vocab), steps=50)
    assert bag_of_words_accuracy(fitted, train_ids, because) > 0.99


@pytest.mark.slow
def test_a_small_encoder_learns_the_task_the_bag_of_words_cannot(task_data):
    vocab, (train_ids, train_labels), (held_ids, held_labels) = task_data
    torch.manual_seed(0)
    config = TransformerConfig.encoder_only(len(vocab), d_model=64, n_heads=4, d_ff=128,
                                            n_encoder_layers=2, max_len=32)  # fmt: skip
    classifier = SentenceClassifier(EncoderOnlyModel(config), 2)

    def batches(epoch):
        return classification_batches(train_ids, train_labels, 2, 32, shuffle=True, seed=epoch)

    train(classifier, batches, make_optimizer(classifier, lr=1e-3), steps=400,
          label_smoothing=0.0)  # fmt: skip
    held = classification_batches(held_ids, held_labels, 2, batch_size=64)
    encoder = accuracy(classifier, held)
    bow = bag_of_words_accuracy(fit_bag_of_words(train_ids, train_labels, len(vocab)),
                                held_ids, held_labels)  # fmt: skip
    assert encoder > 0.85 and encoder > bow + 0.25, (encoder, bow)


# -- errors ---------------------------------------------------------------------------------


def test_a_sentence_longer_than_max_len_is_named():
    message = r"^`tokens` must be at most max_len=24 positions long; got length 25\."
    with pytest.raises(ValueError, match=message):
        small_model()(torch.full((1, 25), 5))
    with pytest.raises(ValueError, match=message):
        SentenceClassifier(small_model(), 2)(torch.full((2, 25), 5))


def test_labels_out_of_range_are_named():
    message = r"^`labels` must be class ids in \[0, 2\) \(n_classes=2\); got min 0, max 2\."
    with pytest.raises(ValueError, match=message):
        classification_batches([[5, 6], [7], [8, 9]], [0, 2, 1], 2, batch_size=2)
    classifier = SentenceClassifier(small_model(), 2)
    with pytest.raises(ValueError, match=message):  # a batch made by hand
        train(classifier, [(torch.tensor([[5, 6], [7, 0]]), torch.tensor([2, 0]))],
              make_optimizer(classifier), steps=1)  # fmt: skip
    with pytest.raises(ValueError, match=r"`labels` must be one label per sequence \(3\); got 2"):
        classification_batches([[5, 6], [7], [8, 9]], [0, 1], 2, batch_size=2)


def test_bad_models_and_configs_are_named():
    with pytest.raises(ValueError, match=r"`config.n_decoder_layers` must be 0 \(an encoder-only"):
        EncoderOnlyModel(TransformerConfig.small(V, share_embeddings=True))
    with pytest.raises(ValueError, match=r"`config.n_decoder_layers` must be at least 1 for an "
                       r"encoder-decoder; got 0\. A model without a decoder is transformer_lib"
                       r"\.EncoderOnlyModel"):  # fmt: skip
        Transformer(TransformerConfig.encoder_only(V))
    with pytest.raises(ValueError, match=r"`config.n_encoder_layers` must be 0"):
        LanguageModel(TransformerConfig.encoder_only(V))
    with pytest.raises(ValueError, match=r"`n_decoder_layers` must be at least 1 when "
                       r"n_encoder_layers=0 \(a model needs one stack\)"):  # fmt: skip
        TransformerConfig(n_encoder_layers=0, n_decoder_layers=0)
    with pytest.raises(ValueError, match=r"`n_classes` must be an int >= 2; got 1"):
        SentenceClassifier(small_model(), 1)
    with pytest.raises(TypeError, match=r"`backbone` must be a transformer_lib.EncoderOnlyModel"):
        SentenceClassifier(Transformer(TransformerConfig.small(V, d_model=32, n_heads=4)), 2)
    with pytest.raises(TypeError, match=r"`batches` must be \(inputs, targets\) tuples; got "
                       r"Tensor\. Build them with data.masked_token_batches\(\)\."):  # fmt: skip
        accuracy(small_model(), [torch.zeros(2, 3, dtype=torch.long)])
