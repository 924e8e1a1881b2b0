"""``--limit`` and ``--limit-seed``: which rows a partial run selects (:mod:`foilkit.selection`),
and the flags' values."""

from __future__ import annotations

import random

import pytest

from foilkit.cli import main
from foilkit.selection import RowSelection, limit_value


@pytest.mark.parametrize(
    ("limit", "seed", "total", "expected"),
    [
        (20, None, 3800, list(range(20))),
        (20, None, 7, list(range(7))),  # a limit beyond the rows: every row
        (0.1, None, 47, list(range(5))),  # a share, rounded up as lmms-eval's: ceil(4.7)
        (0.001, None, 3800, list(range(4))),
        (0.5, None, 1, [0]),  # never no row
        (3, 7, 3800, sorted(random.Random(7).sample(range(3800), 3))),
        (0.01, 2, 300, sorted(random.Random(2).sample(range(300), 3))),
    ],
)
def test_a_selection_takes_the_first_rows_a_share_or_a_seeded_sample(limit, seed, total, expected):
    selection = RowSelection(limit, seed)
    assert selection.indices(total) == expected
    assert selection.count(total) == len(expected)
    assert selection.indices(total) == RowSelection(limit, seed).indices(total)  # reproducible


def test_a_selection_says_what_it_took():
    assert RowSelection(20).describe() == "the first 20 rows"
    assert RowSelection(0.1).describe() == "the first 10% of the rows"
    assert RowSelection(5, 3).describe() == "a random sample (seed 3) of 5 rows"
    assert RowSelection(0.1, 3).flags() == "--limit 0.1 --limit-seed 3"
    assert RowSelection(20).flags() == "--limit 20"


@pytest.mark.parametrize(("text", "value"), [("20", 20), ("1", 1), ("0.1", 0.1), (".25", 0.25)])
def test_limit_takes_a_count_or_a_share(text, value):
    parsed = limit_value(text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize("text", ["0", "-2", "x", "1.5", "1.0", "0.0", "nan", ""])
def test_any_other_limit_is_a_usage_error_naming_both_forms(text, capsys):
    argv = ["evaluate", "--benchmark", "vitatecs", "--model", "m", "--out", "o"]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--limit", text])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert "--limit 20" in err and "--limit 0.1" in err


def test_a_seed_without_a_limit_is_refused():
    with pytest.raises(ValueError, match="add --limit N"):
        RowSelection.of(None, 3)
    assert RowSelection.of(None) is None and RowSelection.of(0.2, 1) == RowSelection(0.2, 1)


def test_a_builder_checks_its_limit_before_any_work(tmp_path):
    from foilkit.builders import load_builder

    with pytest.raises(ValueError, match="--limit 0.1"):
        load_builder("vitatecs", "direction", annotations=tmp_path, limit=2.5)
