"""``--limit`` and ``--limit-seed``: which rows of a config a partial run evaluates.

The rows are selected first, from the config's rows as its annotation files (or an exported
dataset) give them, before any video is looked for: a ``--limit 20`` run needs the videos of
its 20 rows only, and builds no other row. A selected row whose video is missing is still a
selected row: ``--on-missing`` decides what becomes of it, and coverage (rows scored / rows
selected, :class:`foilkit.run.Coverage`) counts it as not scored.

``limit`` is a whole number of rows (at least 1) or, as lmms-eval's ``--limit 0.1``, a share of
each config's rows (above 0, below 1; rounded up, so never no row). Without ``seed`` the first
rows are taken, in the dataset's order; with ``seed`` a random sample of as many, drawn with
that seed (the rows keep the dataset's order).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


def limit_value(text: str) -> int | float:
    """``--limit``'s value as given: a whole number of rows (``20``) or a share (``0.1``);
    ``ValueError`` naming the forms for anything else."""
    try:
        value: int | float = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = 0
    try:
        check_limit(value)
    except ValueError:
        raise ValueError(
            f"{text!r} is neither a whole number of rows of at least 1 (--limit 20) nor a share "
            "of each config's rows above 0 and below 1 (--limit 0.1)"
        ) from None
    return value


def check_limit(limit: int | float) -> None:
    """Refuse a ``limit`` that is neither a whole number >= 1 nor a share in (0, 1)."""
    whole = isinstance(limit, int) and not isinstance(limit, bool) and limit >= 1
    share = isinstance(limit, float) and 0 < limit < 1
    if not (whole or share):
        raise ValueError(
            f"limit={limit!r}: give a whole number of rows of at least 1 (--limit 20) or a "
            "share of each config's rows above 0 and below 1 (--limit 0.1)"
        )


@dataclass(frozen=True)
class RowSelection:
    """The rows a partial run evaluates of each config: ``limit`` rows (a whole number) or that
    share of them (a float below 1), the first ones or, with ``seed``, a seeded random
    sample."""

    limit: int | float
    seed: int | None = None

    def __post_init__(self) -> None:
        check_limit(self.limit)
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int)
        ):
            raise ValueError(
                f"limit_seed must be a whole number (--limit-seed 0), got {self.seed!r}"
            )

    @classmethod
    def of(cls, limit: int | float | None, seed: int | None = None) -> RowSelection | None:
        """The selection of ``limit`` and ``seed`` (``None``: no limit, every row); a seed
        without a limit is an error (it samples nothing)."""
        if limit is None:
            if seed is not None:
                raise ValueError(
                    f"limit_seed={seed} samples the rows a limit selects: add --limit N "
                    "(limit=N in Python), or leave out --limit-seed"
                )
            return None
        return cls(limit, seed)

    def count(self, total: int) -> int:
        """How many of ``total`` rows are selected (a share is rounded up)."""
        wanted = self.limit if isinstance(self.limit, int) else math.ceil(total * self.limit)
        return min(total, wanted)

    def indices(self, total: int) -> list[int]:
        """The positions, in order, of the rows selected of ``total``."""
        count = self.count(total)
        if self.seed is None:
            return list(range(count))
        return sorted(random.Random(self.seed).sample(range(total), count))

    def describe(self) -> str:
        """The rows selected of each config, in words: ``the first 20 rows``, ``a random sample
        (seed 3) of 10% of the rows``."""
        size = f"{self.limit} rows"
        if isinstance(self.limit, float):
            size = f"{100 * self.limit:g}% of the rows"
        if self.seed is None:
            return f"the first {size}"
        return f"a random sample (seed {self.seed}) of {size}"

    def flags(self) -> str:
        """The flags that ask for it: ``--limit 20``, ``--limit 0.1 --limit-seed 3``."""
        return f"--limit {self.limit:g}" + (
            "" if self.seed is None else f" --limit-seed {self.seed}"
        )
