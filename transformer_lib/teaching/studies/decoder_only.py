"""Does translation need the encoder? Notebook 07's translator against a decoder-only one
(notebook 09, sections 3 and 4).

The *encoder-decoder* is notebook 07's translator trained exactly as
``studies.ablation`` trains its base variant (``ablation.train_variant``). The
*decoder-only* model is a ``LanguageModelTranslator`` reading "English ``<sep>`` German":
notebook 07's widths (``ablation.MODEL``), the number of layers whose parameter count is
closest to the encoder-decoder's (``Corpus.matched_layers``, computed, not assumed),
one vocabulary for both languages (``data.joint_vocab``). It trains on the same
pairs, joined pairs included, in the same batches for a seed, with the same
``ablation.RECIPE`` (steps, warm-up, peak rate, batch size, label smoothing).

GPT-1's and GPT-2's choices are then switched on one at a time on the decoder-only model
(:data:`VARIANTS`). The course's model already ties the output layer to the input
embedding, as GPT-2 does (§3.4, ``TransformerConfig.tie_output``), so that switch is
measured by turning it off ("untied"). It does not have the other three: it is post-norm
(GPT-2: pre-norm with a LayerNorm after the last layer), its FFN uses ReLU (GPT-2: GELU)
and its positions are the sinusoids of §3.5 (GPT-2: learned position embeddings).

:func:`train_run` trains one variant with one seed and scores it where
``studies.ablation`` does: greedy BLEU on ``valid`` and on ``longer``; ``test`` is never
used to compare. AER reads cross-attention, which a decoder-only model does not have: its
``valid_aer`` is None (an empty cell in the CSV). Beam search is left to notebook 09: the
``LanguageModelTranslator`` decodes without a key/value cache (``decode`` keeps one for a
``Transformer`` only), re-reading the source and the whole prefix at every step, and a beam
of 4 does so for 4 hypotheses per sentence. Rows have ``ablation.FIELDS``; ``read_rows`` and
``summarize`` are ``ablation``'s, which leave an empty AER empty. Training seconds are
recorded at every evaluation, so variants compare at equal steps and at equal time.
``benchmarks/decoder_only.py`` runs the full study and stores its rows.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

import torch

from transformer_lib._checks import fail
from transformer_lib.data import (
    concatenate_pairs,
    encode_pairs,
    language_model_batches,
    load_split,
    tokenize,
)
from transformer_lib.data.vocab import SEP, joint_vocab
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.language_model import LanguageModel, perplexity
from transformer_lib.model.lm_translation import LanguageModelTranslator
from transformer_lib.model.transformer import Transformer, count_parameters
from transformer_lib.teaching.studies import ablation
from transformer_lib.teaching.studies.ablation import (  # noqa: F401 (read_rows, summarize re-exported)
    FIELDS,
    MODEL,
    RECIPE,
    read_rows,
    summarize,
)
from transformer_lib.train import make_optimizer, make_scheduler, train
from transformer_lib.train.evaluate import evaluate_translations

ENCODER_DECODER, DECODER_ONLY = "encoder-decoder", "decoder-only"
# name -> the decoder-only model's config fields that differ (GPT-1's and GPT-2's choices, one each)
SWITCHES: dict[str, dict] = {
    "+ pre-norm": {"norm_first": True},  # with the final LayerNorm (model._final_norm)
    "+ GELU": {"activation": "gelu"},
    "+ learned positions": {"learned_positions": True},
    "untied": {"tie_output": False},  # the course's model ties, as GPT-2 does: turn it off
}
VARIANTS: dict[str, dict] = {ENCODER_DECODER: {}, DECODER_ONLY: {}, **SWITCHES}
# study -> its variants, the one each is compared with first (equal time is the fastest's)
STUDIES: dict[str, list[str]] = {
    "encoder": [ENCODER_DECODER, DECODER_ONLY],
    "GPT-2": [DECODER_ONLY, *SWITCHES],
}
METRICS = ablation.METRICS


class Corpus(ablation.Corpus):
    """``ablation.Corpus`` (notebook 07's vocabularies, pairs and splits) and the same
    training pairs in one joint vocabulary for the decoder-only model."""

    def __init__(self) -> None:
        super().__init__()
        examples = load_split("train")
        self.joint = joint_vocab([tokenize(text) for ex in examples for text in ex[:2]])
        self.joint_pairs = encode_pairs(examples, self.joint, self.joint)

    def joint_train_pairs(self, joined: float) -> list:
        """:meth:`train_pairs` in the joint vocabulary: the same pairs, the same joined
        pairs (``concatenate_pairs`` picks them by index with seed 0)."""
        count = int(joined * len(self.joint_pairs))
        return self.joint_pairs + concatenate_pairs(self.joint_pairs, count, seed=0)

    @cached_property
    def lm_max_len(self) -> int:
        """The shortest position table that holds every training row (a batch's longest
        source, then ``<sep>`` and its longest target) and every greedy search on ``valid``
        and ``longer`` (the source, then up to 2·S + 10 tokens: ``decode.default_max_len``)."""
        longest_source = max(len(tokenize(ex[0])) for ex in self.valid + self.longer)
        pairs = self.joint_train_pairs(RECIPE.joined)
        longest_row = max(len(src) for src, _ in pairs) + max(len(tgt) for _, tgt in pairs) + 1
        return max(3 * longest_source + 10, longest_row)

    def lm_config(self, n_layers: int | None = None, **changes) -> TransformerConfig:
        """The decoder-only model: notebook 07's widths, ``n_layers`` layers (default: the
        parameter match, ``matched_layers``), with ``changes``."""
        n_layers = self.matched_layers if n_layers is None else n_layers
        values = {**MODEL, "max_len": self.lm_max_len, "n_decoder_layers": n_layers}
        return TransformerConfig.decoder_only(len(self.joint), **{**values, **changes})

    def lm_model(self, config: TransformerConfig) -> LanguageModelTranslator:
        return LanguageModelTranslator(config, self.joint[SEP])

    @cached_property
    def matched_layers(self) -> int:
        """The decoder-only layer count whose model has the parameter count closest to
        the encoder-decoder's (the fewer layers on a tie), among 1 to twice its layers."""
        config = self.config()
        counts = parameter_counts(self, 2 * (config.n_encoder_layers + config.n_decoder_layers))
        target = counts.pop(ENCODER_DECODER)
        return min(counts, key=lambda n: (abs(counts[n] - target), n))

    def lm_scores(self, model: LanguageModelTranslator) -> dict:
        """Greedy BLEU on valid and on longer, as :meth:`scores`; no AER (no cross-attention)."""
        bleu = [
            evaluate_translations(model, [ex[:2] for ex in split], self.joint, self.joint)["bleu"]
            for split in (self.valid, self.longer)
        ]  # ex[:2]: without the gold alignment, evaluate_translations asks for no AER
        return {"valid_bleu": bleu[0], "longer_bleu": bleu[1], "valid_aer": None}


def parameter_counts(corpus: Corpus, max_layers: int) -> dict:
    """``ENCODER_DECODER`` -> the encoder-decoder's parameter count, and n -> the
    decoder-only model's with n layers, for n = 1 .. ``max_layers``. The models are built
    without touching the global random generator."""
    with torch.random.fork_rng(devices=[]):
        counts: dict = {ENCODER_DECODER: count_parameters(Transformer(corpus.config()))}
        for n in range(1, max_layers + 1):
            counts[n] = count_parameters(corpus.lm_model(corpus.lm_config(n_layers=n)))
    return counts


def build_model(name: str, corpus: Corpus) -> torch.nn.Module:
    """Variant ``name``'s model, untrained (from the global random generator)."""
    if name not in VARIANTS:
        fail("name", "one of {choices}", repr(name), choices=list(VARIANTS))
    if name == ENCODER_DECODER:
        return Transformer(corpus.config())
    return corpus.lm_model(corpus.lm_config(**VARIANTS[name]))


def train_run(name: str, seed: int, corpus: Corpus, eval_at: list[int], device="cpu") -> list[dict]:
    """Train variant ``name`` from scratch with ``seed`` until the last step of ``eval_at``;
    one row of ``FIELDS`` at each step of ``eval_at``. Every variant sees the same pairs in
    the same batches for a seed (``ablation.train_variant``'s)."""
    if name == ENCODER_DECODER:
        rows = ablation.train_variant(ablation.BASE, seed, corpus, eval_at, device)
        return [{**row, "variant": name} for row in rows]
    ablation.check_eval_at(eval_at)
    recipe = replace(RECIPE, steps=max(eval_at))
    torch.manual_seed(seed)
    model = build_model(name, corpus).to(device)
    pairs = corpus.joint_train_pairs(recipe.joined)
    return ablation.train_and_score(name, seed, model, pairs, recipe, eval_at, corpus.lm_scores)


def equal_time(rows: list[dict], names: list[str]) -> tuple[int, float]:
    """The last step every run of ``names`` reached, and the training seconds the fastest
    run needed for it (``ablation.summarize``'s equal steps and equal time)."""
    by_variant = ablation.runs_by_variant(rows, names)
    last = min(run[-1]["step"] for runs in by_variant.values() for run in runs)
    seconds = min(
        row["seconds"] for runs in by_variant.values() for run in runs for row in run
        if row["step"] == last
    )  # fmt: skip
    return last, seconds


def scores_at_time(rows: list[dict], names: list[str], metric: str) -> dict[str, list[float]]:
    """``metric`` of each run of ``names`` at :func:`equal_time`: variant -> one per seed."""
    _, seconds = equal_time(rows, names)
    return {
        name: [ablation.at_time(run, metric, seconds) for run in runs]
        for name, runs in ablation.runs_by_variant(rows, names).items()
    }


# Notebook 09's language model (its section 2): German alone, notebook 07's widths, trained
# for 150 steps; tests/test_quality.py holds its valid perplexity to the measured band.
LM_MODEL = {**MODEL, "n_decoder_layers": 2, "max_len": 96}
LM_STEPS, LM_WARMUP, LM_PEAK_LR, LM_MAX_TOKENS = 150, 50, 5e-3, 1500


def language_model_perplexity(seed: int, corpus: ablation.Corpus) -> dict:
    """Train notebook 09's language model with ``seed`` (initial weights and batch order;
    seed 0 gives the notebook's run) on the German side of ``corpus``'s training pairs;
    its valid perplexity and last training loss."""
    _, tgt_vocab = corpus.vocabs
    sequences = [tgt for _, tgt in corpus.pairs]
    valid = [tgt_vocab.encode(tokenize(ex.tgt)) for ex in corpus.valid]
    torch.manual_seed(seed)
    model = LanguageModel(TransformerConfig.decoder_only(len(tgt_vocab), **LM_MODEL))
    optimizer = make_optimizer(model)
    scheduler = make_scheduler(optimizer, model.config.d_model, LM_WARMUP, peak_lr=LM_PEAK_LR)

    def batches(epoch: int):  # seed 0 gives notebook 09's batches
        return language_model_batches(
            sequences, max_tokens=LM_MAX_TOKENS, shuffle=True, seed=1000 * seed + epoch
        )

    history = train(model, batches, optimizer, scheduler, steps=LM_STEPS, label_smoothing=0.0)
    valid_batches = language_model_batches(valid, max_tokens=LM_MAX_TOKENS)
    return {"perplexity": perplexity(model, valid_batches), "loss": history["loss"][-1]}
