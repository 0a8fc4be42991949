"""transformer_lib.inference.decode: greedy search and beam search."""

import math

import pytest
import torch

from transformer_lib.data.vocab import BOS_ID, EOS_ID, PAD_ID
from transformer_lib.inference import beam, decode
from transformer_lib.inference.decode import beam_search, greedy_decode, length_penalty
from transformer_lib.model.config import TransformerConfig
from transformer_lib.model.contract import ModelContract
from transformer_lib.model.reference import TorchTransformer
from transformer_lib.model.transformer import Transformer

# Tiny models gain nothing from a second thread (see conftest.one_thread).
pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture
def random_src(src_vocab):
    """Factory ``random_src(B=6, S=7, seed=1)``: word ids, rows 1 and 3 shorter (padded)."""

    def make(B: int = 6, S: int = 7, seed: int = 1) -> torch.Tensor:
        generator = torch.Generator().manual_seed(seed)
        src = torch.randint(4, len(src_vocab), (B, S), generator=generator)
        src[1, 4:] = PAD_ID  # shorter sentences in the batch
        src[3, 2:] = PAD_ID
        return src

    return make


def sequence_log_prob(model, src, out) -> torch.Tensor:
    """Score each output by teacher forcing: sum of its tokens' log-probabilities."""
    model.eval()
    with torch.no_grad():
        bos = torch.full((out.size(0), 1), 2, dtype=torch.long)
        log_probs = torch.log_softmax(model(src, torch.cat([bos, out[:, :-1]], 1)), -1)
    token_log_probs = log_probs.gather(-1, out.unsqueeze(-1)).squeeze(-1)  # (B, L)
    return token_log_probs.masked_fill(out == PAD_ID, 0.0).sum(dim=1)


def test_greedy_stops_at_eos_and_pads_after_it(decoding_model, random_src):
    model = decoding_model()
    out, scores = greedy_decode(model, random_src(), max_len=12)
    assert out.shape[0] == 6 and out.shape[1] <= 12 and scores.shape == (6,)
    for row in out.tolist():
        if EOS_ID in row:
            end = row.index(EOS_ID)
            assert all(t == PAD_ID for t in row[end + 1 :])
        assert PAD_ID not in row[: row.index(EOS_ID) if EOS_ID in row else len(row)]
    assert any(EOS_ID in row for row in out.tolist())
    torch.testing.assert_close(scores, sequence_log_prob(model, random_src(), out))


def test_greedy_batched_equals_one_sentence_at_a_time(decoding_model, random_src):
    model, src = decoding_model(), random_src()
    batched, _ = greedy_decode(model, src, max_len=12)
    for b in range(src.size(0)):
        length = int((src[b] != PAD_ID).sum())
        alone, _ = greedy_decode(model, src[b : b + 1, :length], max_len=12)
        row = batched[b][: alone.size(1)]
        assert torch.equal(row, alone[0]), b


def test_beam_size_one_equals_greedy(decoding_model, random_src):
    model, src = decoding_model(), random_src()
    greedy, greedy_scores = greedy_decode(model, src, max_len=12)
    beam, beam_scores = beam_search(model, src, beam_size=1, max_len=12, alpha=0.0)
    assert torch.equal(beam[:, : greedy.size(1)], greedy)
    torch.testing.assert_close(beam_scores, greedy_scores)
    # with a length penalty: greedy's output, its score divided by lp (as beam search ranks)
    beam, beam_scores = beam_search(model, src, beam_size=1, max_len=12, alpha=0.6)
    assert torch.equal(beam, greedy)
    lengths = (greedy != PAD_ID).sum(dim=1).tolist()
    expected = [s / length_penalty(n, 0.6) for s, n in zip(greedy_scores.tolist(), lengths)]
    torch.testing.assert_close(beam_scores, torch.tensor(expected))


class TableModel(ModelContract):
    """A model whose next-token probabilities are a table indexed by the prefix (the tokens
    after ``<bos>``); a prefix missing from the table gets the ``default`` row (``<eos>``
    with probability 1). Tokens missing from a row get logit -30. The source is ignored."""

    def __init__(self, table: dict, default: dict | None = None, vocab_size: int = 11):
        super().__init__()
        self.table, self.default = table, default or {EOS_ID: 1.0}
        self.vocab_size, self.config = vocab_size, TransformerConfig.small(vocab_size, max_len=8)

    def encode(self, src, src_mask=None):
        return torch.zeros(src.size(0), src.size(1), 1)

    def next_logits(self, prefix: tuple) -> torch.Tensor:
        """Logits (V,) of the token after ``prefix``."""
        logits = torch.full((self.vocab_size,), -30.0)
        for token, p in self.table.get(prefix, self.default).items():
            logits[token] = math.log(p)
        return logits

    def decode(self, tgt, memory, src_mask):
        rows = [
            torch.stack([self.next_logits(tuple(row[1 : t + 1])) for t in range(len(row))])
            for row in tgt.tolist()
        ]
        return torch.stack(rows)  # (B, T, V)


class PrefixTable(TableModel):
    """Greedy takes a (0.40), then the best of a's five flat continuations (0.21), then <eos>
    (0.99): 0.083. Beam search with K = 2 keeps a and b (0.38); b's two continuations
    (0.19 each) push a's best (0.084) out, and every continuation of those is poor: it ends
    at 0.057. The paper's beam search is a heuristic and may lose to greedy decoding.
    """

    TABLE = {
        (): {4: 0.40, 5: 0.38, 6: 0.22},
        (4,): {6: 0.21, 7: 0.1975, 8: 0.1975, 9: 0.1975, 10: 0.1975},
        (5,): {6: 0.5, 7: 0.5},
        (4, 6): {EOS_ID: 0.99, 8: 0.01},
    }

    def __init__(self):
        super().__init__(self.TABLE, default={EOS_ID: 0.1, 8: 0.3, 9: 0.3, 10: 0.3})


def test_beam_search_is_the_papers_and_may_end_below_greedy():
    model, src = PrefixTable(), torch.tensor([[4, 5]])
    greedy, greedy_score = greedy_decode(model, src, max_len=3)
    beam, beam_score = beam_search(model, src, beam_size=2, max_len=3, alpha=0.0)
    assert greedy.tolist() == [[4, 6, EOS_ID]]
    torch.testing.assert_close(greedy_score.exp(), torch.tensor([0.40 * 0.21 * 0.99]))
    assert beam[0, :2].tolist() in ([5, 6], [5, 7])  # a's continuations were pruned
    torch.testing.assert_close(beam_score.exp(), torch.tensor([0.38 * 0.5 * 0.3]))


def test_the_early_stop_bounds_a_live_hypothesis_by_the_length_penalty_at_max_len():
    # K = 2, alpha = 0.6. Step 1: <eos> (0.30) ends; a (0.28) and b (0.26) live on. Step 2:
    # a <eos> (0.28) ends: log 0.28 / lp(2) = -1.161; b c (0.26) lives, and b's next tokens have
    # probability 1, so it ends as b c d e <eos>: log 0.26 / lp(5) = -0.991, the best.
    # At step 2, log 0.26 / lp(2) = -1.228 is below both finished (-1.161, -1.204): dividing
    # by lp of the current length would stop there and return a <eos>.
    table = {
        (): {EOS_ID: 0.30, 4: 0.28, 5: 0.26, 6: 0.16},
        (4,): {EOS_ID: 1.0},
        (5,): {7: 1.0},
        (5, 7): {8: 1.0},
        (5, 7, 8): {9: 1.0},
    }
    out, score = beam_search(TableModel(table), torch.tensor([[4, 5]]), beam_size=2, max_len=6)
    assert out.tolist() == [[5, 7, 8, 9, EOS_ID]]
    torch.testing.assert_close(score, torch.tensor([math.log(0.26) / length_penalty(5, 0.6)]))


def test_an_eos_ranked_between_k_and_2k_ends_a_hypothesis():
    # K = 2, alpha = 0: <eos> ranks third at step 1 (0.31, below a 0.35 and b 0.34), and no
    # longer output reaches 0.31 (the best is a c <eos>, 0.21, greedy's output). Taking
    # <eos> only from the top K would never see it.
    table = {
        (): {4: 0.35, 5: 0.34, EOS_ID: 0.31},
        (4,): {6: 0.6, 7: 0.4},
        (5,): {6: 0.55, 7: 0.45},
    }
    model, src = TableModel(table), torch.tensor([[4, 5]])
    out, score = beam_search(model, src, beam_size=2, max_len=4, alpha=0.0)
    assert out.tolist() == [[EOS_ID]]
    torch.testing.assert_close(score.exp(), torch.tensor([0.31]))
    assert greedy_decode(model, src, max_len=4)[0].tolist() == [[4, 6, EOS_ID]]


class RandomTable(TableModel):
    """Next-token logits drawn at random for each prefix, the same on every call."""

    def __init__(self, seed: int, vocab_size: int = 7):
        super().__init__({}, vocab_size=vocab_size)
        self.seed, self.drawn = seed, {}

    def next_logits(self, prefix: tuple) -> torch.Tensor:
        if prefix not in self.drawn:
            generator = torch.Generator().manual_seed(self.seed * 100_003 + hash(prefix) % 99_991)
            self.drawn[prefix] = torch.randn(self.vocab_size, generator=generator)
        return self.drawn[prefix]


def exhaustive_best(model: TableModel, max_len: int, alpha: float) -> list[tuple[float, list]]:
    """Every output the searches can return, best first, scored as beam search scores them:
    log P / lp(length), in float64. An output ends with <eos> within max_len tokens, or has
    max_len tokens (cut off). <pad> and <bos> are never generated."""
    words = [t for t in range(model.vocab_size) if t not in (PAD_ID, BOS_ID, EOS_ID)]
    results, frontier = [], [((), 0.0)]
    for length in range(1, max_len + 1):
        grown = []
        for prefix, log_p in frontier:
            log_probs = torch.log_softmax(model.next_logits(prefix).double(), dim=-1)
            log_probs[[PAD_ID, BOS_ID]] = float("-inf")
            end = log_p + float(log_probs[EOS_ID])
            results.append((end / length_penalty(length, alpha), [*prefix, EOS_ID]))
            grown += [((*prefix, w), log_p + float(log_probs[w])) for w in words]
        frontier = grown
    results += [(s / length_penalty(max_len, alpha), list(p)) for p, s in frontier]
    return sorted(results, key=lambda r: -r[0])


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.5])
def test_a_beam_wide_enough_finds_the_exhaustive_optimum(alpha):
    # 5 tokens can be generated (<unk>, three words, <eos>), max_len 4: 4^4 = 256 outputs are
    # cut off at max_len, so K = 256 keeps every live hypothesis (and its 2K = 512 candidates
    # hold all of them): beam search is exhaustive.
    src, narrow_misses = torch.tensor([[4, 5]]), 0
    for seed in range(16):
        model = RandomTable(seed)
        (best, tokens), (runner_up, _) = exhaustive_best(model, 4, alpha)[:2]
        assert best - runner_up > 1e-4, seed  # one optimum, well above float32 noise
        out, score = beam_search(model, src, beam_size=256, max_len=4, alpha=alpha)
        assert out[0].tolist() == tokens + [PAD_ID] * (out.size(1) - len(tokens)), seed
        assert score.item() == pytest.approx(best, abs=1e-5), seed
        narrow, narrow_score = beam_search(model, src, beam_size=2, max_len=4, alpha=alpha)
        assert narrow_score.item() <= best + 1e-5
        narrow_misses += narrow_score.item() < best - 1e-4
    assert narrow_misses > 0  # a narrow beam is a heuristic: it misses the optimum sometimes


def _never_met(ended, alive, best_lp):
    return torch.zeros(ended.size(0), dtype=torch.bool)


@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.5])
def test_the_early_stop_never_changes_the_output(alpha, monkeypatch, decoding_model, random_src):
    # The bound is valid: a search that never stops early returns the same outputs. (A stop
    # that divides by lp of the current length fails this with alpha = 0.6 and 1.5.)
    runs = [(RandomTable(seed), torch.tensor([[4, 5]]), 6) for seed in range(16)]
    runs += [(decoding_model(seed), random_src(B=8, seed=seed), 12) for seed in (0, 1)]
    for beam_size in (2, 4):
        stopped = [
            beam_search(m, src, beam_size=beam_size, max_len=n, alpha=alpha) for m, src, n in runs
        ]
        monkeypatch.setattr(beam, "bound_met", _never_met)
        for (model, src, n), (tokens, scores) in zip(runs, stopped):
            full = beam_search(model, src, beam_size=beam_size, max_len=n, alpha=alpha)
            assert torch.equal(full[0], tokens) and torch.equal(full[1], scores)
        monkeypatch.undo()


def test_beam_scores_are_the_model_scores_of_the_returned_outputs(decoding_model, random_src):
    model, src = decoding_model(), random_src()
    out, scores = beam_search(model, src, beam_size=3, max_len=12, alpha=0.0)
    torch.testing.assert_close(scores, sequence_log_prob(model, src, out))
    out_lp, scores_lp = beam_search(model, src, beam_size=3, max_len=12, alpha=1.0)
    lengths = (out_lp != PAD_ID).sum(dim=1).tolist()
    raw = sequence_log_prob(model, src, out_lp)
    expected = torch.tensor([s / length_penalty(n, 1.0) for s, n in zip(raw.tolist(), lengths)])
    torch.testing.assert_close(scores_lp, expected)


def test_batched_beam_search_equals_one_sentence_at_a_time(decoding_model, random_src):
    model, src = decoding_model(), random_src()
    batched, batched_scores = beam_search(model, src, beam_size=3, max_len=12)
    for b in range(src.size(0)):
        length = int((src[b] != PAD_ID).sum())
        alone, score = beam_search(model, src[b : b + 1, :length], beam_size=3, max_len=12)
        assert torch.equal(batched[b][: alone.size(1)], alone[0]), b
        torch.testing.assert_close(batched_scores[b : b + 1], score, atol=1e-5, rtol=1e-5)


def test_length_penalty_grows_with_length_and_alpha_zero_switches_it_off():
    assert length_penalty(1, 0.6) == pytest.approx(1.0)
    assert length_penalty(10, 0.6) > length_penalty(5, 0.6) > 1.0
    assert length_penalty(10, 0.0) == 1.0
    # two outputs with the same mean log-prob per token: the raw sum prefers the short one,
    # dividing by lp narrows the gap
    short, long = -1.0 * 3, -1.0 * 9
    assert long / length_penalty(9, 1.0) - short / length_penalty(3, 1.0) > long - short


def test_searches_use_eval_mode_and_restore_the_mode(decoding_model, random_src):
    model, src = decoding_model(), random_src()
    model.train()
    first = beam_search(model, src, beam_size=2, max_len=8)[0]
    assert model.training
    assert torch.equal(first, beam_search(model, src, beam_size=2, max_len=8)[0])  # no dropout


def test_decoding_errors(decoding_model, random_src):
    model = decoding_model()
    with pytest.raises(TypeError, match="`src` must be an integer tensor"):
        greedy_decode(model, torch.zeros(2, 3))
    with pytest.raises(ValueError, match="`beam_size` must be an int >= 1"):
        beam_search(model, random_src(), beam_size=0)
    with pytest.raises(ValueError, match="`max_len` must be an int >= 1"):
        greedy_decode(model, random_src(), max_len=0)


def test_max_len_beyond_the_position_table_is_rejected_up_front(decoding_model, random_src):
    # A model that stops early never reached the table's end, so this used to pass for
    # some inputs and fail deep inside the decoder for others.
    model, src = decoding_model(eos_bias=5.0), random_src()
    for search in (greedy_decode, beam_search):
        with pytest.raises(
            ValueError,
            match=r"`max_len` must be at most 40, the positions the model's table \(max_len=40\) has for an output",
        ):
            search(model, src, max_len=41)


def test_max_len_may_reach_the_position_table(decoding_model, random_src):
    # The decoder reads <bos> and all but the last output token: max_len outputs fit.
    model, src = decoding_model(eos_bias=-100.0), random_src()[:2]  # never ends by itself
    assert greedy_decode(model, src, max_len=40)[0].shape == (2, 40)
    assert beam_search(model, src, beam_size=2, max_len=40)[0].shape == (2, 40)


@pytest.mark.parametrize("search", [greedy_decode, beam_search])
def test_a_source_without_tokens_gives_only_eos(search, decoding_model, random_src):
    model, src = decoding_model(), random_src()
    src[2] = PAD_ID  # nothing to translate in row 2
    out, scores = search(model, src, max_len=12)
    assert out[2, 0] == EOS_ID and (out[2, 1:] == PAD_ID).all() and scores[2] == 0.0
    keep = [0, 1, 3, 4, 5]
    alone, alone_scores = search(model, src[keep], max_len=12)
    assert torch.equal(out[keep, : alone.size(1)], alone)
    torch.testing.assert_close(scores[keep], alone_scores)
    no_columns, score = search(model, src[:1, :0], max_len=12)  # S = 0
    assert no_columns.tolist() == [[EOS_ID]] and score.tolist() == [0.0]


@pytest.mark.parametrize("search", [greedy_decode, beam_search])
def test_an_empty_batch_gives_empty_results(search, decoding_model, random_src):
    out, scores = search(decoding_model(), random_src()[:0], max_len=12)
    assert out.shape == (0, 1) and out.dtype == torch.long and scores.shape == (0,)


def test_beam_search_takes_a_source_mask_that_broadcasts_over_the_batch(decoding_model, random_src):
    model, src = decoding_model(), random_src()
    full = torch.ones(src.size(0), 1, 1, src.size(1), dtype=torch.bool)
    expected = beam_search(model, src, full, beam_size=2, max_len=8)
    shared = beam_search(model, src, full[:1], beam_size=2, max_len=8)  # (1, 1, 1, S)
    assert torch.equal(shared[0], expected[0])


@pytest.mark.parametrize("alpha", [float("nan"), float("inf"), -0.5])
def test_alpha_must_be_finite_and_not_negative(alpha, decoding_model, random_src):
    with pytest.raises(ValueError, match=r"`alpha` must be a finite float >= 0.0; got"):
        beam_search(decoding_model(), random_src(), max_len=4, alpha=alpha)
    with pytest.raises(ValueError, match="`alpha` must be a finite float >= 0.0"):
        length_penalty(3, alpha)


def test_search_argument_types_are_named(decoding_model, random_src):
    model, src = decoding_model(), random_src()
    with pytest.raises(TypeError, match="`alpha` must be a finite float >= 0.0; got str '0.6'"):
        beam_search(model, src, alpha="0.6")
    with pytest.raises(TypeError, match="`beam_size` must be an int; got float 2.0"):
        beam_search(model, src, beam_size=2.0)
    with pytest.raises(TypeError, match="`max_len` must be an int; got float 4.0"):
        greedy_decode(model, src, max_len=4.0)
    with pytest.raises(TypeError, match=r"`src` must be .*\(int64 or int32\).*Convert with"):
        greedy_decode(model, src.to(torch.int16))


# Incremental decoding: cache=True must give what the plain loop (cache=False) gives.


@pytest.fixture
def cache_model(tiny_model):
    """Factory ``cache_model(seed=0, norm_first=False)``: ``decoding_model``'s sizes, post-norm
    (paper) or pre-norm (final LayerNorm). Less peaky than ``decoding_model``: there, pre-norm
    beams never change places, and a cache that forgets to follow them would go unnoticed."""

    def make(seed: int = 0, norm_first: bool = False) -> Transformer:
        wider = dict(d_model=32, n_heads=4, d_ff=64, n_encoder_layers=2, max_len=40)
        return tiny_model(seed, 0.5, share_embeddings=False, norm_first=norm_first, **wider)

    return make


def _assert_same_results(cached, plain) -> None:
    assert torch.equal(cached[0], plain[0])  # the same tokens
    torch.testing.assert_close(cached[1], plain[1], rtol=1e-5, atol=1e-5)  # the same scores


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
def test_cached_greedy_equals_the_plain_loop(norm_first, cache_model, random_src):
    for seed in (0, 2):  # outputs of varied lengths
        model, src = cache_model(seed, norm_first), random_src(B=8, seed=seed)
        src[5] = PAD_ID  # nothing to translate: only <eos>
        model.train()  # the searches switch to eval mode themselves
        plain = greedy_decode(model, src, max_len=16, cache=False)
        _assert_same_results(greedy_decode(model, src, max_len=16, cache=True), plain)
        assert model.training


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-norm", "pre-norm"])
@pytest.mark.parametrize("alpha", [0.0, 0.6, 1.5])
def test_cached_beam_search_equals_the_plain_loop(alpha, norm_first, cache_model, random_src):
    # beams are reordered and pruned at every step: the cache's rows must follow them
    for seed in (0, 2):  # outputs of varied lengths
        model, src = cache_model(seed, norm_first), random_src(B=8, seed=seed)
        for beam_size in (1, 2, 4, 5):
            kwargs = dict(beam_size=beam_size, max_len=16, alpha=alpha)
            plain = beam_search(model, src, cache=False, **kwargs)
            _assert_same_results(beam_search(model, src, cache=True, **kwargs), plain)


@pytest.mark.parametrize("search", [greedy_decode, beam_search])
def test_models_without_a_cache_fall_back_to_the_plain_loop(search, cache_model, random_src):
    # nn.Transformer's stacks take no cached keys and values (see incremental.py)
    model, src = cache_model(), random_src()
    mirror = TorchTransformer.from_model(model)
    expected = search(model, src, max_len=12, cache=True)
    assert torch.equal(search(mirror, src, max_len=12, cache=True)[0], expected[0])


def test_cache_must_be_a_bool(decoding_model, random_src):
    with pytest.raises(TypeError, match=r"`cache` must be a bool; got str 'no'"):
        greedy_decode(decoding_model(), random_src(), cache="no")


def test_eval_no_grad_is_eval_mode_and_no_grad_and_puts_the_mode_back(tiny_model):
    """Not torch.inference_mode: what it returns is an ordinary tensor (autograd may use it)."""
    model = tiny_model().train()
    with decode.eval_no_grad(model):
        assert not model.training and not torch.is_grad_enabled()
        out = model.output.weight * 1
    assert model.training and torch.is_grad_enabled()
    assert not out.is_inference() and "inference_mode" not in decode.__all__
