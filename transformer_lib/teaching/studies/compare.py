"""Is A better than B? The one place the course decides, from one score per seed.

The course's rule (notebook 08, exercise 2): A is **better** than B when every seed of A
scored better than every seed of B, that is, when the two ranges over seeds do not
overlap; **worse** when every seed of A scored worse; otherwise **no difference shown**.
Ties count against a difference. The rule asks at least 3 seeds of each: with 3 and 3
scores of two variants that do not differ, every ordering of the 6 scores is equally
likely, so one named variant comes out above the other in all 9 pairs with probability
1/20 (= 1 / C(6, 3)), and either variant does with 1/10. The rule is blunt (it sees a large
difference between overlapping ranges as none), and that is its point: it cannot
overclaim by more than this chance.

:meth:`Verdict.interval` adds a seed bootstrap of the mean difference (each variant's
seeds resampled with replacement), to state how far the seeds spread the difference. It
does not decide: with 3 seeds a bootstrap sees only 10 distinct resamples per variant and
its interval is narrower than the truth.

Sentences that compare runs are printed by :meth:`Verdict.sentence`, in the course's
language (the library's catalogue), so that no prose states more than the rule found::

    verdict = compare(scores["dropout 0.1"], scores["notebook 07"])
    print(verdict.sentence("dropout 0.1", "notebook 07", "valid BLEU"))
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from transformer_lib._checks import fail
from transformer_lib.i18n import _
from transformer_lib.teaching.studies.labels import localised

MIN_SEEDS = 3
BETTER, WORSE, NO_DIFFERENCE = "better", "worse", "no difference shown"


def clearly_better(ours: Sequence[float], theirs: Sequence[float]) -> bool:
    """Whether every seed of ``ours`` scored above every seed of ``theirs`` (higher is
    better): the min-max ranges do not overlap, which 3 seeds of two equal variants give
    1 time in 20 (see the module's docstring)."""
    return min(ours) > max(theirs)


def _digits(values: Sequence[float]) -> int:
    """Three decimals for rates from 0 to 1 (AER, accuracy), else one (BLEU), as
    ``ablation.spread``."""
    return 3 if max(abs(v) for v in values) <= 1 else 1


@dataclass(frozen=True)
class Verdict:
    """What :func:`compare` found: ``verdict`` is ``"better"``, ``"worse"`` or
    ``"no difference shown"``, said of ``ours`` against ``theirs``."""

    verdict: str
    ours: tuple[float, ...]
    theirs: tuple[float, ...]
    higher_is_better: bool = True

    def __str__(self) -> str:
        return self.verdict

    @property
    def difference(self) -> float:
        """Mean of ``ours`` minus mean of ``theirs`` (in the metric's own direction)."""
        return statistics.mean(self.ours) - statistics.mean(self.theirs)

    def interval(self, level: float = 0.95, n: int = 10_000, seed: int = 0) -> tuple[float, float]:
        """Seed bootstrap of :attr:`difference`: each side's seeds resampled with
        replacement ``n`` times; the central ``level`` share of the resampled differences.
        It states the spread; it does not decide (see the module's docstring)."""
        if not 0 < level < 1:
            fail("level", "between 0 and 1", repr(level))
        rng = random.Random(seed)
        ours, theirs = list(self.ours), list(self.theirs)
        diffs = sorted(
            statistics.fmean(rng.choices(ours, k=len(ours)))
            - statistics.fmean(rng.choices(theirs, k=len(theirs)))
            for _ in range(n)
        )
        tail = (1 - level) / 2
        return diffs[int(tail * (n - 1))], diffs[round((1 - tail) * (n - 1))]

    def sentence(self, ours: str, theirs: str, metric: str) -> str:
        """The comparison in one sentence, in the course's language (the names of the runs
        and of the metric too, where ``labels`` holds them): the verdict, then on a line of
        their own (so that a narrow output area breaks no number) each side's mean [min-max]
        over seeds and the mean difference."""
        digits = _digits(self.ours + self.theirs)

        def spread(values):
            mean, low, high = statistics.mean(values), min(values), max(values)
            return f"{mean:.{digits}f} [{low:.{digits}f}–{high:.{digits}f}]"

        template = {
            BETTER: _(
                "{ours} is better than {theirs} on {metric}: every seed of {ours} scored "
                "better than every seed of {theirs}\n  ({ours_spread} against {theirs_spread}, "
                "mean [min–max] over {seeds} seeds; mean difference {difference})."
            ),
            WORSE: _(
                "{ours} is worse than {theirs} on {metric}: every seed of {ours} scored worse "
                "than every seed of {theirs}\n  ({ours_spread} against {theirs_spread}, mean "
                "[min–max] over {seeds} seeds; mean difference {difference})."
            ),
            NO_DIFFERENCE: _(
                "No difference shown between {ours} and {theirs} on {metric}: their seeds' "
                "ranges overlap\n  ({ours_spread} against {theirs_spread}, mean [min–max] over "
                "{seeds} seeds; mean difference {difference})."
            ),
        }[self.verdict]
        seeds = f"{len(self.ours)}" if len(self.ours) == len(self.theirs) else (
            f"{len(self.ours)} + {len(self.theirs)}"
        )  # fmt: skip
        return template.format(
            ours=localised(ours),
            theirs=localised(theirs),
            metric=localised(metric),
            ours_spread=spread(self.ours),
            theirs_spread=spread(self.theirs),
            seeds=seeds,
            difference=f"{self.difference:+.{digits}f}",
        )


def _scores(name: str, values: object) -> tuple[float, ...]:
    try:
        scores = tuple(float(v) for v in values)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        expected = "a list of numbers, one per seed (at least {n})"
        fail(name, expected, repr(values), n=MIN_SEEDS)
    if len(scores) < MIN_SEEDS:
        fail(
            name,
            "at least {n} scores, one per seed",
            f"{len(scores)}: {list(scores)}",
            "Fewer seeds cannot tell a difference from luck (see transformer_lib.teaching.studies.compare).",
            n=MIN_SEEDS,
        )
    return scores


def compare(
    ours: Sequence[float], theirs: Sequence[float], *, higher_is_better: bool = True
) -> Verdict:
    """The course's verdict on ``ours`` against ``theirs`` (one score per seed, at least 3
    each): ``"better"`` when every seed of ours beats every seed of theirs, ``"worse"``
    when every seed of theirs beats every seed of ours, else ``"no difference shown"``.
    ``higher_is_better=False`` for rates such as AER."""
    a, b = _scores("ours", ours), _scores("theirs", theirs)
    up, down = (a, b) if higher_is_better else (b, a)  # "up" wins when it is higher
    if clearly_better(up, down):
        verdict = BETTER
    elif clearly_better(down, up):
        verdict = WORSE
    else:
        verdict = NO_DIFFERENCE
    return Verdict(verdict, a, b, higher_is_better)
