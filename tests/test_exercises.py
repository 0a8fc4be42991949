"""Every exercise check: the library's answer passes, every catalogued mistake gets its own
hint, a stub says "not implemented yet", and the student never sees a library traceback.

The right answers and the mistakes live beside each check (``check.reference``,
``check.mistakes``: see ``transformer_lib/teaching/exercises/_core.py``); this file keeps no list of
its own. ``tests/test_exercises_ch*.py`` add other right answers and chapter details.
"""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import re  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from transformer_lib.model import masks  # noqa: E402
from transformer_lib.model.attention import scaled_dot_product_attention  # noqa: E402
from transformer_lib.teaching import exercises as ex  # noqa: E402
from transformer_lib.teaching.exercises._core import MESSAGE_WIDTH, _seeded_call  # noqa: E402

ALL_CHECKS = [getattr(ex, name) for name in ex.__all__ if name.startswith("check_")]
CATALOGUE = [
    (check, index, mistake)
    for check in ALL_CHECKS
    for index, mistake in enumerate(getattr(check, "mistakes", ()))
]


def not_implemented(*args, **kwargs):
    raise NotImplementedError("Exercise: write your solution here")


def _words(text: str) -> str:
    """``text`` with every run of whitespace made one space (line breaks are layout)."""
    return " ".join(text.split())


def _jupyter_lines(error: ex.ExerciseFailed) -> list[str]:
    """What Jupyter shows for ``error``, colour codes removed."""
    return [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in error._render_traceback_()]


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.__name__)
def test_every_check_declares_the_library_answer_and_a_catalogue(check):
    assert callable(getattr(check, "reference", None)), f"{check.__name__}: no @exercise"
    assert len(check.mistakes) >= 2, f"{check.__name__}: catalogue too short"
    hints = [mistake.hint for mistake in check.mistakes]
    assert len(set(hints)) == len(hints), f"{check.__name__}: two mistakes share a hint"


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.__name__)
def test_the_library_answer_passes_with_a_tick(check, capsys):
    check(check.reference)
    assert capsys.readouterr().out.startswith("✓ ")


@pytest.mark.parametrize(
    ("check", "index", "mistake"),
    CATALOGUE,
    ids=[f"{check.__name__}-{index}" for check, index, _ in CATALOGUE],
)
def test_each_catalogued_mistake_gets_its_own_hint(check, index, mistake):
    with pytest.raises(ex.ExerciseFailed) as info:
        check(mistake.fn)
    assert mistake.hint in str(info.value)
    # In Jupyter the same words, in lines that JupyterLab need not break (it would mid-word).
    lines = _jupyter_lines(info.value)
    assert _words(" ".join(lines)) == _words(f"ExerciseFailed: {info.value}")
    assert _words(mistake.hint) in _words(" ".join(lines))
    assert all(len(line) <= MESSAGE_WIDTH or " " not in line for line in lines), lines


def test_checks_neither_use_nor_change_the_global_seed():
    torch.manual_seed(123)
    before = torch.get_rng_state()
    ex.check_scaled_dot_product_attention(scaled_dot_product_attention)
    ex.check_residual_post_norm(ex.check_residual_post_norm.reference)
    assert torch.equal(torch.get_rng_state(), before)


def test_exercise_failed_is_an_assertion_error_with_a_short_jupyter_rendering():
    assert issubclass(ex.ExerciseFailed, AssertionError)
    lines = ex.ExerciseFailed("boom")._render_traceback_()
    assert lines == ["\x1b[1;31mExerciseFailed\x1b[0m: boom"]


def test_jupyter_breaks_long_messages_at_spaces_only():
    words = [f"word{i}" for i in range(40)] + ["torch.finfo(torch.float16).min", "-1e9"]
    message = " ".join(words) + "\nHint: a second line stays a line of its own."
    lines = _jupyter_lines(ex.ExerciseFailed(message))
    assert len(lines) > 3 and all(len(line) <= MESSAGE_WIDTH for line in lines)
    assert [w for line in lines for w in line.split()] == ["ExerciseFailed:", *message.split()]
    assert lines[-1] == "Hint: a second line stays a line of its own."
    long_word = "x" * (MESSAGE_WIDTH + 5)  # kept whole on a line of its own
    assert _jupyter_lines(ex.ExerciseFailed(f"a {long_word} b"))[1] == long_word


def test_a_long_error_from_the_students_code_is_cut_to_its_first_line():
    def noisy(*args):
        raise RuntimeError("shapes do not match.\n" + "a torch stack trace line\n" * 50)

    with pytest.raises(ex.ExerciseFailed) as info:
        ex.check_causal_mask(noisy)
    assert str(info.value) == "`noisy` raised RuntimeError: shapes do not match (…)."


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.__name__)
def test_a_stub_is_reported_as_not_implemented_yet(check):
    with pytest.raises(ex.ExerciseFailed, match="not implemented yet") as info:
        check(not_implemented)
    assert info.value.__cause__ is None and info.value.__suppress_context__


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.__name__)
def test_any_other_exception_is_reported_briefly(check):
    def broken(*args):
        raise KeyError("oops")

    with pytest.raises(ex.ExerciseFailed, match=r"`broken` raised KeyError: 'oops'") as info:
        check(broken)
    assert info.value.__suppress_context__


def test_passing_the_result_instead_of_the_function_is_explained():
    with pytest.raises(ex.ExerciseFailed, match="pass your function itself"):
        ex.check_causal_mask(torch.ones(3, 3))


def test_the_module_docstring_lists_every_check_for_notebook_writers():
    for name in ex.__all__:
        if name.startswith("check_"):
            assert f"{name}(" in ex.__doc__, name


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.__name__)
def test_sys_exit_in_the_students_code_is_reported_as_its_error(check):
    def leaving(*args):
        sys.exit(1)

    with pytest.raises(ex.ExerciseFailed, match=r"`leaving` called sys.exit\(\)") as info:
        check(leaving)
    assert info.value.__suppress_context__


@pytest.mark.parametrize("check", ALL_CHECKS[:3], ids=lambda c: c.__name__)
def test_a_keyboard_interrupt_still_stops_the_cell(check):
    def interrupted(*args):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        check(interrupted)


def test_each_call_gets_deep_copies_of_its_inputs():
    """What one call edits in place, the next call (the reference's, a mistake's) never sees."""
    table, pair, layer, numbers = (
        {"rows": [torch.zeros(2)]},
        (torch.zeros(1),),
        nn.Linear(2, 2),
        {1},
    )
    weight = layer.weight.detach().clone()

    def edit_in_place(table, pair, layer, numbers):
        table["rows"][0].add_(1), pair[0].add_(1), layer.weight.data.zero_(), numbers.add(2)
        table["new"] = 1

    _seeded_call(edit_in_place, (table, pair, layer, numbers))
    assert list(table) == ["rows"] and table["rows"][0].eq(0).all() and pair[0].eq(0).all()
    assert torch.equal(layer.weight, weight) and numbers == {1}


ON_META = [
    (
        ex.check_scaled_dot_product_attention,
        lambda q, k, v, m=None: tuple(
            t.to("meta") for t in scaled_dot_product_attention(q, k, v, m)
        ),
    ),
    (ex.check_padding_mask, lambda t, p: masks.padding_mask(t, p).to("meta")),
    (ex.check_layer_norm, lambda x, g, b, eps=1e-5: F.layer_norm(x, (8,), g, b, eps).to("meta")),
    (ex.check_label_smoothing, lambda *args: ex.check_label_smoothing.reference(*args).to("meta")),
]


@pytest.mark.parametrize(("check", "fn"), ON_META, ids=[c.__name__ for c, _ in ON_META])
def test_a_result_on_another_device_is_named_like_a_wrong_dtype(check, fn):
    with pytest.raises(ex.ExerciseFailed, match=r"wrong device: .*on meta; the check runs on cpu"):
        check(fn)
