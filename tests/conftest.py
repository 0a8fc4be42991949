"""Shared fixtures: every test starts from the same seed on the CPU; the toy vocabularies,
the tiny models and the copy-task batches that several test modules use live here."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

from transformer_lib import Transformer, TransformerConfig  # noqa: E402
from transformer_lib.data import Batch, collate  # noqa: E402
from transformer_lib.data.vocab import EOS_ID, SPECIALS, Vocab  # noqa: E402
from transformer_lib.train import make_optimizer, make_scheduler  # noqa: E402

# The smallest model that still has every part: 2 heads, one encoder layer, and two
# decoder layers so that "which layer" matters (playground, reference_attention).
TINY = dict(
    d_model=16,
    n_heads=2,
    d_ff=32,
    n_encoder_layers=1,
    n_decoder_layers=2,
    max_len=32,
    dropout=0.1,
)


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.fixture(scope="module")
def one_thread():
    """One torch thread for a module's tests: tiny models gain nothing from a second one,
    and on a busy machine a second thread only waits."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def src_vocab() -> Vocab:
    """A toy English vocabulary: 4 specials and 6 words."""
    return Vocab([*SPECIALS, "the", "dog", "sees", "a", "cat", "."])


@pytest.fixture(scope="session")
def tgt_vocab() -> Vocab:
    """The German side of ``src_vocab``, as large, so that ``tiny_model`` can share one
    embedding matrix (asked for explicitly: equal sizes alone never share)."""
    return Vocab([*SPECIALS, "der", "Hund", "sieht", "eine", "Katze", "."])


@pytest.fixture
def tiny_model(src_vocab, tgt_vocab):
    """Factory ``tiny_model(seed=0, eos_bias=0.0, **config_overrides)``: an untrained
    Transformer over the toy vocabularies, seeded, with ``TINY`` sizes and one shared
    embedding matrix unless overridden.
    ``eos_bias`` raises the ``<eos>`` logit, so decoding stops at varied lengths."""

    def make(seed: int = 0, eos_bias: float = 0.0, **overrides) -> Transformer:
        torch.manual_seed(seed)
        settings = {"share_embeddings": True, **TINY, **overrides}
        config = TransformerConfig.small(len(src_vocab), len(tgt_vocab), **settings)
        model = Transformer(config)
        with torch.no_grad():
            model.output.bias[EOS_ID] += eos_bias
        return model

    return make


@pytest.fixture
def decoding_model(tiny_model):
    """Factory ``decoding_model(seed=0, eos_bias=2.0)``: a wider tiny model (2 + 2 layers,
    4 heads, max_len 40, its own target embedding) with peaky outputs, so greedy and beam
    search disagree more."""

    def make(seed: int = 0, eos_bias: float = 2.0) -> Transformer:
        # Its seeds and <eos> biases were chosen with this start of W^Q, W^K, W^V; under the
        # default ("fused") no row of the default batch ends, and nothing here tests the start.
        wider = dict(d_model=32, n_heads=4, d_ff=64, n_encoder_layers=2, max_len=40)
        wider["attention_init"] = "separate"
        model = tiny_model(seed, eos_bias, share_embeddings=False, **wider)
        with torch.no_grad():
            model.output.weight.mul_(4.0)  # the target embedding, tied to the output layer
        return model

    return make


@pytest.fixture
def copy_batches(src_vocab):
    """``copy_batches(epoch)``: a toy copy task (target = source) of varied lengths, the
    same batches for the same epoch (as ``train`` needs for an exact resume)."""

    def batches(epoch: int, n_batches: int = 4, batch_size: int = 8) -> list[Batch]:
        generator = torch.Generator().manual_seed(1000 + epoch)
        result = []
        for _ in range(n_batches):
            pairs = []
            for _ in range(batch_size):
                length = int(torch.randint(2, 7, (1,), generator=generator))
                ids = torch.randint(4, len(src_vocab), (length,), generator=generator).tolist()
                pairs.append((ids, ids))
            result.append(collate(pairs))
        return result

    return batches


@pytest.fixture
def fresh_training(tiny_model):
    """Factory ``fresh_training(seed=0, **config_overrides)`` -> (model, optimizer,
    scheduler), built as notebook 07 builds them (peak learning rate 5e-3 at step 20)."""

    def make(seed: int = 0, **overrides):
        model = tiny_model(seed, **overrides)
        optimizer = make_optimizer(model)
        scheduler = make_scheduler(optimizer, model.config.d_model, warmup=20, peak_lr=5e-3)
        return model, optimizer, scheduler

    return make


def pytest_collection_modifyitems(config, items):
    """A `figure_text` test reads what the Chinese edition's figures said as a run drew them
    (`make test-notebooks-zh` records it where COURSE_FIGURE_TEXT points, then runs them):
    without that variable there is nothing to read, and they are deselected, not skipped."""
    if os.environ.get("COURSE_FIGURE_TEXT"):
        return
    chosen = [item for item in items if item.get_closest_marker("figure_text") is None]
    if len(chosen) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
        items[:] = chosen


def pytest_runtest_setup(item):
    """`make test`'s --dist loadgroup keeps an `xdist_group` on one worker by appending
    "@group" to each of its test ids as a worker collects them. Where that append does
    nothing (pytest 9.2.0 with pytest-xdist 3.8.0: pytest-xdist issue #1386), the group is
    split over the workers without a word, and a test that reuses what its group computed
    computes it again, for many minutes: fail at once instead."""
    grouped = getattr(item.config.option, "loadgroup", False) and item.get_closest_marker(
        "xdist_group"
    )
    if grouped and "@" not in item.nodeid:
        pytest.fail(
            f"--dist loadgroup did not group {item.nodeid} with the other tests of its "
            "xdist_group: this pytest and pytest-xdist do not work together (pytest-xdist "
            "issue #1386); install the versions in constraints.txt",
            pytrace=False,
        )


# In CI (.ci/run sets COURSE_NO_SKIPS=1) a skipped test is a failure: what CI skipped, it
# did not test (a failed import of nbgrader once skipped the grading tests without a word).
NO_SKIPS = "COURSE_NO_SKIPS"


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if os.environ.get(NO_SKIPS) != "1" or reporter is None:
        return
    skipped = reporter.stats.get("skipped", [])
    if skipped:
        reporter.write_sep(
            "=", f"{NO_SKIPS}=1: {len(skipped)} skipped test(s) fail the run", red=True
        )
        for report in skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
            reporter.write_line(f"  {report.nodeid}: {reason}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
