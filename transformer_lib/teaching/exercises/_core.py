"""The machinery every exercise check shares: declaring a check, calling the student's
function, and the messages a student reads. Comparing a result with the library's and
naming the mistake it matches is :mod:`~transformer_lib.teaching.exercises._compare`.

A check is declared with :func:`exercise`, which attaches the library's own answer
(``check.reference``, a function with the student's signature) and the catalogue of known
wrong answers (``check.mistakes``, :class:`Mistake`s: wrong code with the student's
signature, and the hint it earns). The check builds its inputs with :func:`_generator`
(seeded, on the CPU, never the global seed) and runs each case through ``_expect``:
the student's function and the reference run on the same inputs, each call on its own
copies (:func:`_seeded_call`); when they differ, each mistake runs on those inputs too, and
the first whose result (or error) the student's equals gives its hint.
``tests/test_exercises.py`` runs every catalogue entry through its check and requires its
own hint, so a hint that can never fire fails the tests.

The text a check hands to these helpers (``what``, a mistake's hint, ``hints``,
``fallback``, the message of :func:`_passed`) is English marked with ``N_`` (or ``_``):
the helpers translate it with ``_`` where they show it, so a catalogue built at import
still speaks the course's language (:mod:`transformer_lib.i18n`).
"""

from __future__ import annotations

import copy
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from transformer_lib.i18n import N_, _, has_cjk, wrap_cjk

SEED = 1234  # the RNG seed every call of a student's function (or of a mistake) runs under


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: code with the student's signature, and the hint it earns.

    ``fn`` is written the way tutorial code gets it wrong; ``hint`` says what is wrong and
    what to change, in one or two sentences (English marked with ``N_``; shown translated).
    """

    hint: str
    fn: Callable


def exercise(reference: Callable, mistakes: Sequence[Mistake]) -> Callable:
    """Decorator for a check: attach the library's answer and the catalogue of mistakes."""

    def attach(check: Callable) -> Callable:
        check.reference = reference
        check.mistakes = tuple(mistakes)
        return check

    return attach


NOT_IMPLEMENTED = N_(
    "{name} is not implemented yet: replace the `raise NotImplementedError(...)` line with "
    "your solution and run the cell again."
)
EXITED = N_(
    "{name} called sys.exit() (or exit()), which would end the program: a function returns "
    "its result instead."
)
SHAPE_HINT = N_("Hint: print the shapes of the tensors you combine.")
TRANSPOSE_HINT = N_(
    "Hint: after .transpose() a tensor is not contiguous; use .reshape(...) or "
    ".contiguous().view(...)."
)


# Characters per line of a failure message in Jupyter. JupyterLab shows errors with
# `word-break: break-all`, so a line wider than the output area is cut mid-word; lines
# broken at spaces first fit any output area wider than about 650 px.
MESSAGE_WIDTH = 80
ERROR_TEXT_LIMIT = 300  # characters of the student's own error kept in a message


class ExerciseFailed(AssertionError):
    """A check found a mistake; the message says which and how to fix it."""

    def _render_traceback_(self) -> list[str]:
        # Jupyter calls this instead of printing a traceback: the student sees one message,
        # in lines broken at spaces, with the name in bold red.
        lines = wrap_message(f"ExerciseFailed: {self}")
        lines[0] = "\x1b[1;31mExerciseFailed\x1b[0m" + lines[0][len("ExerciseFailed") :]
        return lines


def wrap_message(text: str, width: int = MESSAGE_WIDTH) -> list[str]:
    """``text`` in lines of at most ``width`` columns, broken only at spaces (a word longer
    than ``width`` keeps a line to itself) or, in Chinese, between two characters (each two
    columns wide); line breaks in ``text`` are kept."""
    return [
        line
        for paragraph in text.split("\n")
        for line in (
            wrap_cjk(paragraph, width)
            if has_cjk(paragraph)
            else textwrap.wrap(paragraph, width, break_long_words=False, break_on_hyphens=False)
        )
        or [""]
    ]


def _shown(text: str) -> str:
    """``text`` (English marked with ``N_``) in the course's language; "" stays ""."""
    return _(text) if text else ""  # gettext("") would be the catalogue's header


def _as_hint(text: str) -> str:
    """``text`` translated and starting with "Hint:"; "" when there is no hint."""
    if not text or text.startswith("Hint:"):
        return _shown(text)
    return _("Hint: {hint}").format(hint=_(text))


def _first_line(text: str) -> str:
    """An error's first line, cut to ``ERROR_TEXT_LIMIT`` characters and without its final
    full stop: some errors (from torch, say) run to many lines, and the hint must show."""
    lines = text.strip().splitlines() or [""]
    first = lines[0].rstrip(".")
    cut = len(first) > ERROR_TEXT_LIMIT or len(lines) > 1
    return first[:ERROR_TEXT_LIMIT].rstrip() + (" (…)" if cut else "")


def _generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _name(fn) -> str:
    name = getattr(fn, "__name__", "")
    return f"`{name}`" if name and name != "<lambda>" else _("your function")


def _seeded_call(fn: Callable, args: tuple):
    """``fn`` on its own copies of ``args``, under a fixed RNG seed that leaves the global one
    as it was.

    Deep copies (tensors, also inside lists, dicts and dataclasses; modules): code that edits
    an input in place cannot change what the reference or a mistake sees next. The same seed
    for the student's call and each mistake's: dropout drops the same entries.
    """
    args = copy.deepcopy(args)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        return fn(*args)


def _raises_like(wrong: Callable, args: tuple, error: Exception) -> bool:
    """Whether the known-wrong ``wrong`` raises the same error as the student's code did."""
    try:
        _seeded_call(wrong, args)
    except Exception as other:  # a mistake that crashes: compare the two errors
        return type(other) is type(error) and str(other) == str(error)
    return False


def _call(
    fn: Callable,
    *args,
    hints: tuple[tuple[str, str], ...] = (),
    mistakes: Sequence[Mistake] = (),
):
    """Call the student's function on copies of the inputs; its errors become short messages.

    An error that a known mistake raises too gets that mistake's hint; else the first of
    ``hints`` ((text in the message, hint) pairs) that matches.
    """
    __tracebackhide__ = True
    if not callable(fn):
        raise ExerciseFailed(
            _(
                "pass your function itself, e.g. check(my_function), not the "
                "result of calling it; got {kind}."
            ).format(kind=type(fn).__name__)
        )
    try:
        return _seeded_call(fn, args)
    except NotImplementedError:
        raise ExerciseFailed(_(NOT_IMPLEMENTED).format(name=_name(fn))) from None
    except SystemExit:  # the student's error; KeyboardInterrupt is not caught: it stops the cell
        raise ExerciseFailed(_(EXITED).format(name=_name(fn))) from None
    except Exception as error:  # any bug in the student's code, reported briefly
        text = str(error)
        known = next((m.hint for m in mistakes if _raises_like(m.fn, args, error)), "")
        extra = known or next((hint for key, hint in hints if key in text), "")
        if not extra and "view size is not compatible" in text:
            extra = TRANSPOSE_HINT
        message = _("{name} raised {error}: {text}. {hint}").format(
            name=_name(fn), error=type(error).__name__, text=_first_line(text), hint=_as_hint(extra)
        )
        raise ExerciseFailed(message.strip()) from None


def _passed(message: str) -> None:
    """Print a check's success line; ``message`` is English marked with ``N_`` or ``_``."""
    print(f"✓ {_(message)}")
