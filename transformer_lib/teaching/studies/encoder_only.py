"""Notebook 10's study: does masked-token pretraining help a sentence classifier that has
only a few labels?

An encoder-only model (:class:`~transformer_lib.model.encoder_only.EncoderOnlyModel`) of
notebook 07's widths (:data:`MODEL`) is pretrained on the corpus's English side with masked
tokens (``data.masked_token_batches``: BERT's 15 % and 80/10/10), then fine-tuned as a
``SentenceClassifier`` on the subject-number task (``data.classification``) with ``n``
labelled sentences. Against it, at equal steps and with the same labels and batches:

- ``"random start"``: the same classifier from the seed's untrained weights (the weights the
  pretraining started from), fine-tuned alone;
- ``"bag of words"``: logistic regression on word counts, fitted to the same labels.

Each is scored by accuracy on :attr:`Corpus.held_out`: task sentences of ``train`` that
neither the pretraining nor the fine-tuning sees. (``valid`` holds only 54 of the task's
sentences, too few to tell two models a few points apart; ``test`` is never used.) The seed
sets the initial weights, the masking and the batch order, and which labelled sentences a
run gets: the first ``n`` of the pool in the seed's order, so that a seed's smaller label
sets are part of its larger ones.

Shapes:
    N sentences, L sentence length.
"""

from __future__ import annotations

import copy
import csv
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from transformer_lib._checks import check_int, fail
from transformer_lib.data import load_split, tokenize
from transformer_lib.data.classification import classification_batches, subject_number_task
from transformer_lib.data.masking import masked_token_batches
from transformer_lib.data.vocab import encoder_vocab, special_ids
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.encoder_only import EncoderOnlyModel, SentenceClassifier, accuracy
from transformer_lib.model.language_model import perplexity
from transformer_lib.train import make_optimizer, make_scheduler, train
from transformer_lib.train.bag_of_words import bag_of_words_accuracy, fit_bag_of_words


@dataclass(frozen=True)
class Recipe:
    """How the study pretrains and fine-tunes (notebook 10 runs a shorter pretraining)."""

    pretrain_steps: int = 2000
    warmup: int = 100  # linear warm-up to the peak, then 1/√step (notebook 07's schedule)
    peak_lr: float = 5e-3  # notebook 07's peak
    max_tokens: int = 1500  # padded tokens per masked-token batch (notebook 07's)
    mask_rate: float = 0.15  # BERT's share of chosen positions (§3.1)
    finetune_steps: int = 300  # the same for every label count: equal steps
    batch_size: int = 16  # sentences per fine-tuning batch
    finetune_lr: float = 1e-3  # constant: a start that is already trained needs no warm-up


RECIPE = Recipe()
# Notebook 07's widths, 2 layers; dropout 0.1, which the few labels of fine-tuning need more
# than the translator's 30,000 pairs do
MODEL = {"d_model": 64, "n_heads": 4, "d_ff": 256, "dropout": 0.1, "n_encoder_layers": 2}
HELD_OUT = 500  # task sentences of train kept for scoring, out of pretraining too
LABEL_COUNTS = (32, 64, 128, 256, 512)
PRETRAINED, RANDOM_START, BAG_OF_WORDS = "pretrained", "random start", "bag of words"
VARIANTS = (PRETRAINED, RANDOM_START, BAG_OF_WORDS)
PRETRAINING = "pretraining"  # a seed's pretraining row: masked-token accuracy on valid
FIELDS = ["variant", "seed", "labels", "accuracy", "seconds"]


class Corpus:
    """The English side of the corpus in the encoder's vocabulary, and the task's labels.

    ``vocab``: ``encoder_vocab`` of train's English (``<mask>`` is id 4); ``sentences``:
    train's English sentences, the held-out task sentences left out, and ``text`` the same
    as ids (pretraining reads it);
    ``valid``: valid's English as ids (masked-token scores); ``pool``: (ids, labels) of the
    other task sentences of train, where fine-tuning draws its labels from; ``held_out``:
    (ids, labels) of ``HELD_OUT`` task sentences of train (drawn with seed 0)."""

    def __init__(self) -> None:
        examples = load_split("train")
        english = [tokenize(ex.src) for ex in examples]
        self.vocab = encoder_vocab(english)
        sentences, labels = subject_number_task("train")
        order = torch.randperm(len(sentences), generator=torch.Generator().manual_seed(0))
        held, rest = order[:HELD_OUT].tolist(), order[HELD_OUT:].tolist()
        ids = [self.vocab.encode(tokenize(sentence)) for sentence in sentences]
        self.held_out = ([ids[k] for k in held], [labels[k] for k in held])
        self.pool = ([ids[k] for k in rest], [labels[k] for k in rest])
        kept_out = {sentences[k] for k in held}
        kept = [(ex.src, tokens) for ex, tokens in zip(examples, english, strict=True)
                if ex.src not in kept_out]  # fmt: skip
        self.sentences = [sentence for sentence, _tokens in kept]
        self.text = [self.vocab.encode(tokens) for _sentence, tokens in kept]
        self.valid = [self.vocab.encode(tokenize(ex.src)) for ex in load_split("valid")]

    def config(self, **changes) -> TransformerConfig:
        """The encoder-only model: :data:`MODEL` for this vocabulary, with ``changes``."""
        longest = max(len(sentence) for sentence in self.text + self.valid + self.held_out[0])
        values = {**MODEL, "max_len": longest, **changes}
        return TransformerConfig.encoder_only(len(self.vocab), **values)

    def labelled(self, n: int, seed: int) -> tuple[list[list[int]], list[int]]:
        """The first ``n`` sentences of the pool, and their labels, in ``seed``'s order."""
        check_int("n", n, minimum=2)
        if n > len(self.pool[0]):
            fail("n", "at most {size} (the pool's sentences)", repr(n), size=len(self.pool[0]))
        generator = torch.Generator().manual_seed(seed)
        chosen = torch.randperm(len(self.pool[0]), generator=generator)[:n].tolist()
        return [self.pool[0][k] for k in chosen], [self.pool[1][k] for k in chosen]

    def valid_batches(self, seed: int = 0) -> list:
        """valid's English, masked with ``seed`` (the same positions for every model)."""
        return masked_token_batches(
            self.valid, self.vocab, RECIPE.max_tokens, RECIPE.mask_rate, seed=seed
        )

    def held_out_batches(self) -> list:
        return classification_batches(*self.held_out, n_classes=2, batch_size=100)


def start_model(corpus: Corpus, seed: int) -> EncoderOnlyModel:
    """``seed``'s untrained encoder: where pretraining starts, and the random start."""
    torch.manual_seed(seed)
    return EncoderOnlyModel(corpus.config())


def pretrain(
    corpus: Corpus,
    seed: int,
    steps: int = RECIPE.pretrain_steps,
    device="cpu",
    callback=None,
) -> tuple[EncoderOnlyModel, dict]:
    """An encoder-only model pretrained from ``seed``'s start on masked tokens of
    ``corpus.text`` (each epoch masked anew) for ``steps`` steps; ``train``'s history."""
    model = start_model(corpus, seed).to(device)

    def batches(epoch):  # the same (seed, epoch) always masks the same positions
        return masked_token_batches(
            corpus.text, corpus.vocab, RECIPE.max_tokens, RECIPE.mask_rate,
            shuffle=True, seed=1000 * seed + epoch,
        )  # fmt: skip

    optimizer = make_optimizer(model)
    scheduler = make_scheduler(
        optimizer, model.config.d_model, warmup=RECIPE.warmup, peak_lr=RECIPE.peak_lr
    )
    history = train(
        model, batches, optimizer, scheduler, steps=steps, label_smoothing=0.0, callback=callback
    )
    return model, history


def masked_token_scores(model: EncoderOnlyModel, corpus: Corpus) -> dict:
    """Masked-token accuracy and perplexity on valid (masked with seed 0)."""
    batches = corpus.valid_batches()
    return {"accuracy": accuracy(model, batches), "perplexity": perplexity(model, batches)}


def unigram_scores(corpus: Corpus) -> dict:
    """The yardstick that reads no context: each masked token guessed from the pretraining
    text's token frequencies alone (add-one), on the positions :func:`masked_token_scores`
    asks about. Accuracy: always the most frequent word; perplexity: of the frequencies."""
    counts = torch.ones(len(corpus.vocab), dtype=torch.float64)  # add-one: nothing has p = 0
    for sentence in corpus.text:
        counts += torch.bincount(torch.tensor(sentence), minlength=len(counts))
    counts[special_ids(corpus.vocab)] = 0  # a chosen position always holds a real token
    log_p = (counts / counts.sum()).log()  # (V,)
    targets = torch.cat([t[t != corpus.vocab.pad_id] for _, t in corpus.valid_batches()])
    return {
        "accuracy": float((targets == counts.argmax()).double().mean()),
        "perplexity": float(log_p[targets].mean().neg().exp()),
    }


def fine_tune(
    corpus: Corpus,
    n: int,
    seed: int,
    pretrained: EncoderOnlyModel | None = None,
    steps: int = RECIPE.finetune_steps,
    device="cpu",
) -> SentenceClassifier:
    """A classifier fine-tuned for ``steps`` steps on ``n`` labels (``corpus.labelled``):
    from a copy of ``pretrained``, or, when it is None, from ``seed``'s untrained weights
    (the start :func:`pretrain` leaves with the same seed). The head's start, the dropout
    and the batches come from ``seed`` alone, the same for both."""
    fresh = start_model(corpus, seed)  # built either way: the same random state after it
    backbone = fresh if pretrained is None else copy.deepcopy(pretrained).cpu()
    torch.manual_seed(10_000 + seed)  # the head's start and the dropout: equal for both
    classifier = SentenceClassifier(backbone, n_classes=2).to(device)
    ids, labels = corpus.labelled(n, seed)

    def batches(epoch):
        return classification_batches(
            ids, labels, 2, RECIPE.batch_size, shuffle=True, seed=1000 * seed + epoch
        )

    optimizer = make_optimizer(classifier, lr=RECIPE.finetune_lr)
    train(classifier, batches, optimizer, steps=steps, label_smoothing=0.0)
    return classifier


def task_accuracy(classifier: SentenceClassifier, corpus: Corpus) -> float:
    """The classifier's accuracy on the held-out task sentences."""
    return accuracy(classifier, corpus.held_out_batches())


def bag_of_words(corpus: Corpus, n: int, seed: int) -> float:
    """A bag of words fitted to the same ``n`` labels, scored on the held-out sentences."""
    ids, labels = corpus.labelled(n, seed)
    model = fit_bag_of_words(ids, labels, len(corpus.vocab))
    return bag_of_words_accuracy(model, *corpus.held_out)


def run_seed(
    corpus: Corpus, seed: int, label_counts=LABEL_COUNTS, device="cpu", log=print
) -> list[dict]:
    """One seed of the study: its pretraining, then every label count with every variant.
    Rows of :data:`FIELDS`; ``seconds`` is training time (the pretraining's on its row)."""
    start = time.perf_counter()
    model, _ = pretrain(corpus, seed, device=device)
    scores = masked_token_scores(model, corpus)
    rows = [dict(variant=PRETRAINING, seed=seed, labels=0, accuracy=scores["accuracy"],
                 seconds=time.perf_counter() - start)]  # fmt: skip
    log(f"seed {seed}: pretrained, valid masked-token accuracy {scores['accuracy']:.3f}, "
        f"perplexity {scores['perplexity']:.2f}")  # fmt: skip
    for n in label_counts:
        for variant in VARIANTS:
            start = time.perf_counter()
            if variant == BAG_OF_WORDS:
                score = bag_of_words(corpus, n, seed)
            else:
                backbone = model if variant == PRETRAINED else None
                score = task_accuracy(fine_tune(corpus, n, seed, backbone, device=device), corpus)
            rows.append(dict(variant=variant, seed=seed, labels=n, accuracy=score,
                             seconds=time.perf_counter() - start))  # fmt: skip
            log(f"    {n} labels, {variant}: accuracy {score:.3f}")
    return rows


def read_rows(path: str | Path) -> list[dict]:
    """The rows stored in the CSV at ``path`` (none if it does not exist), numbers as numbers."""
    path = Path(path)
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    for row in rows:
        row["seed"], row["labels"] = int(row["seed"]), int(row["labels"])
        row["accuracy"], row["seconds"] = float(row["accuracy"]), float(row["seconds"])
    return rows


def accuracies(rows: list[dict]) -> dict[int, dict[str, list[float]]]:
    """label count -> variant -> accuracy per seed (in seed order), from stored rows."""
    table: dict[int, dict[str, list[float]]] = {}
    for row in sorted(rows, key=lambda row: row["seed"]):
        if row["variant"] in VARIANTS:
            table.setdefault(row["labels"], {}).setdefault(row["variant"], []).append(
                row["accuracy"]
            )
    return dict(sorted(table.items()))


def spread(values: list[float]) -> str:
    """mean [min-max], three decimals (accuracies)."""
    return f"{statistics.mean(values):.3f} [{min(values):.3f}-{max(values):.3f}]"
