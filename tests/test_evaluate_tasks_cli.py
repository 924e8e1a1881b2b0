"""``foilkit evaluate --tasks``: how items are read, and the usage errors, before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from foilkit.builders import get_benchmark
from foilkit.cli import main
from foilkit.cli.evaluate import task_video_roots
from foilkit.errors import UserError
from foilkit.evaluation_tasks import parse_tasks


def test_items_keep_their_order_each_once_a_benchmark_alone_is_its_default_set():
    tasks = parse_tasks(
        ["vilma/change_of_state", "vitatecs/direction", "vilma/rare_actions", "vitatecs/direction"]
        + ["rtime", "vilma/change_of_state"]
    )
    assert list(tasks) == ["vilma", "vitatecs", "rtime"]
    assert tasks["vilma"] == ("change_of_state", "rare_actions")
    assert tasks["vitatecs"] == ("direction",)
    assert tasks["rtime"] == get_benchmark("rtime").all_configs


def test_every_bad_item_is_named_with_the_choices():
    with pytest.raises(UserError) as raised:
        parse_tasks(["vitatecs/direction", "vitatecs/nope", "nobench", "vilma/a/b"])
    message = str(raised.value)
    for item in ("'vitatecs/nope'", "'nobench'", "'vilma/a/b'"):
        assert item in message
    assert "vitatecs configs: all, direction" in message and "benchmarks: vitatecs" in message
    assert "'vitatecs/direction'" not in message


def test_video_roots_per_benchmark_or_one_folder_of_sub_folders(tmp_path: Path):
    (tmp_path / "all" / "vitatecs").mkdir(parents=True)
    tasks = {"vitatecs": ("direction",), "vilma": ("change_of_state",)}
    roots = task_video_roots([str(tmp_path / "all"), f"vilma={tmp_path / 'v'}"], tasks)
    assert roots == {"vitatecs": tmp_path / "all" / "vitatecs", "vilma": tmp_path / "v"}
    assert task_video_roots(None, tasks) == {"vitatecs": None, "vilma": None}
    with pytest.raises(UserError, match="no folder .*all/vilma for vilma.*--video-root vilma=DIR"):
        task_video_roots([str(tmp_path / "all")], tasks)
    with pytest.raises(UserError, match="rtime is not one of --tasks"):
        task_video_roots([f"rtime={tmp_path}"], tasks)
    with pytest.raises(UserError, match="vilma's folder twice"):
        task_video_roots([f"vilma={tmp_path}", f"vilma={tmp_path}"], tasks)
    with pytest.raises(UserError, match="got 2 folders"):
        task_video_roots([str(tmp_path), str(tmp_path / "all")], tasks)


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--benchmark", "vitatecs"], "drop --benchmark (e.g. --tasks"),
        (["--config", "direction"], "drop --config (e.g. --tasks"),
        (["--benchmark", "vitatecs", "--config", "direction"], "drop --benchmark and --config"),
        (["--dataset", "some/dataset"], "--dataset names one benchmark's dataset"),
        (["--tasks", "nobench"], "no such benchmark/config: 'nobench'"),
    ],
)
def test_usage_errors_are_one_line_and_nothing_is_written(extra, says, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["evaluate", "--tasks", "vitatecs/direction,vilma", "--model", "m", "--out", str(out)]
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_an_empty_item_or_no_benchmark_at_all_is_a_usage_error(tmp_path, capsys):
    out = str(tmp_path / "out")
    with pytest.raises(SystemExit) as exited:
        main(["evaluate", "--tasks", "vitatecs,,vilma", "--model", "m", "--out", out])
    assert exited.value.code == 2
    assert "has an empty item" in capsys.readouterr().err
    assert main(["evaluate", "--model", "m", "--out", out]) == 2
    assert "--benchmark NAME" in capsys.readouterr().err
