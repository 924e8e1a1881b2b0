"""``foilkit leaderboard``: the demo's runs ranked per task, with CIs, paired tests and a plot;
the Hub's leaderboard (``get_dataset_leaderboard``, mocked: no network) ranked alongside."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import huggingface_hub
import pytest

from foilkit.cli import main
from foilkit.markdown import markdown_text


def test_ranks_the_demo_runs_per_task(demo_runs: Path, tmp_path: Path):
    assert main(["leaderboard", str(demo_runs), "--out", str(tmp_path), "--n-resamples", "50"]) == 0
    rows = list(csv.DictReader((tmp_path / "leaderboard.csv").open()))
    assert {row["task"] for row in rows} == {"direction", "order", "speed", "average"}
    for task in ("direction", "order", "speed", "average"):
        ranked = [row for row in rows if row["task"] == task]
        assert sorted(row["model"] for row in ranked) == ["clip", "xclip"]
        assert [row["rank"] for row in ranked] == ["1", "2"]
        assert float(ranked[0]["value"]) >= float(ranked[1]["value"])
        assert (
            float(ranked[0]["ci_low"]) <= float(ranked[0]["value"]) <= float(ranked[0]["ci_high"])
        )
        # The leader is tested against the runner-up on the same items; the last has no next.
        assert (
            0.0 <= float(ranked[0]["p_value_vs_next"]) <= 1.0 and ranked[1]["p_value_vs_next"] == ""
        )
    by_model = {row["model"]: row for row in rows if row["task"] == "average"}
    computed = json.loads((demo_runs / "xclip" / "results.json").read_text())
    overall = computed["configs"]["all"]["metrics"]["pairwise_foil_accuracy"]["overall"]
    assert float(by_model["xclip"]["value"]) == round(100 * overall["macro_accuracy"], 2)
    markdown = (tmp_path / "leaderboard.md").read_text()
    assert "## synthetic / direction" in markdown
    assert re.search(r"p (= \d\.\d{3}|< 0\.001) \|", markdown)  # rounded, not 0.13151225170378977
    assert (tmp_path / "leaderboard.png").read_bytes()[:4] == b"\x89PNG"


def test_hub_leaderboard_entries_are_ranked_alongside(demo_runs: Path, tmp_path: Path, monkeypatch):
    calls = []

    class FakeApi:
        def __init__(self, token=None):
            pass

        def get_dataset_leaderboard(self, repo_id, **kwargs):
            calls.append((repo_id, kwargs))
            return [SimpleNamespace(model_id="someone/big-model", value=97.5, task_id="average")]

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    argv = [
        "leaderboard",
        str(demo_runs / "clip"),
        "--out",
        str(tmp_path),
        "--n-resamples",
        "20",
        "--hub",
        "me/synthetic=synthetic",
    ]
    assert main(argv) == 0
    assert calls == [("me/synthetic", {"base_model_only": False})]
    rows = [
        r for r in csv.DictReader((tmp_path / "leaderboard.csv").open()) if r["task"] == "average"
    ]
    top = rows[0]
    assert (top["rank"], top["model"], top["source"]) == (
        "1",
        "someone/big-model",
        "hub:me/synthetic",
    )


def test_no_runs_is_an_error(tmp_path: Path):
    from foilkit.leaderboard import write_leaderboard

    with pytest.raises(ValueError, match="no leaderboard task value"):
        write_leaderboard([], tmp_path)


def _variant(source: Path, target: Path, **changes) -> Path:
    """A copy of run folder ``source`` whose ``results.json`` says ``changes`` (label, control,
    protocol overrides): the run as a controlled or overridden run would have recorded it."""
    shutil.copytree(source, target)
    data = json.loads((target / "results.json").read_text())
    overrides = changes.pop("overrides", None)
    data.update(changes)
    if overrides is not None:
        data["protocol"]["overrides"] = overrides
    (target / "results.json").write_text(json.dumps(data))
    return target


def test_controls_and_overrides_are_marked_and_left_out_of_the_ranking(
    demo_runs: Path, tmp_path: Path
):
    reversed_run = _variant(
        demo_runs / "xclip", tmp_path / "xclip-reversed", label="xclip", control="reversed"
    )
    overridden = _variant(
        demo_runs / "xclip",
        tmp_path / "xclip-16",
        label="xclip_16f & co",
        overrides={"num_frames": {"protocol": 8, "given": 16}},
    )
    runs = [demo_runs / "clip", demo_runs / "xclip", reversed_run, overridden]
    out = tmp_path / "board"
    argv = ["leaderboard", *map(str, runs), "--out", str(out), "--n-resamples", "20"]
    assert main(argv) == 0
    # Per task: the control run is on its own task, never ranked as a second "xclip"; the
    # overridden run ranks below both protocol runs even where its value ties the leader's.
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    direction = [row for row in rows if row["task"] == "direction"]
    assert [row["model"] for row in direction][-1] == "xclip_16f & co"
    assert [row["model"] for row in direction].count("xclip") == 1
    assert direction[-1]["overrides"] == "frames 8 -> 16"
    controlled = [row for row in rows if row["task"] == "direction_reversed"]
    assert [(row["model"], row["control"]) for row in controlled] == [("xclip", "reversed")]
    # The wide table: a row per run, a column per task and the benchmark's own aggregate (the
    # mean of the per-aspect accuracies); only the two protocol runs ranked, the others marked.
    wide = list(csv.DictReader((out / "leaderboard_wide.csv").open()))
    assert [row["rank"] for row in wide] == ["1", "2", "—", "—"]
    assert sorted(row["model"] for row in wide[:2]) == ["clip", "xclip"]
    notes = {row["notes"] for row in wide[2:]}
    assert notes == {"control: reversed", "override: frames 8 -> 16"}
    top = wide[0]
    parts = [float(top[task]) for task in ("direction", "order", "speed")]
    assert float(top["average"]) == pytest.approx(sum(parts) / 3, abs=0.051)
    assert float(wide[0]["average"]) >= float(wide[1]["average"])
    markdown = (out / "leaderboard.md").read_text()
    assert "## synthetic: models × tasks" in markdown
    assert "| rank | model | run | direction | order | speed | average | notes |" in markdown
    latex = (out / "leaderboard.tex").read_text()
    assert "\\toprule" in latex and "xclip\\_16f \\& co" in latex
    assert "frames 8 -\\textgreater{} 16" in latex
    assert "models × tasks" in (out / "leaderboard.html").read_text()


@pytest.mark.parametrize(
    ("benchmark", "task", "chance"),
    [
        ("vitatecs", "direction", 0.5),
        ("vilma", "average", 0.25),
        ("contrast_sets", "verb_lm", 0.2),
        ("rtime", "binary_t2v", 0.5),
        ("synthetic", "average_reversed", 0.5),
        ("rtime", "origin_t2v_r1", None),
        ("not-a-benchmark", "x", None),
    ],
)
def test_each_task_knows_its_chance_level(benchmark: str, task: str, chance: float | None):
    """The leaderboard plot's chance line: the level of the report column the task reads."""
    from foilkit.leaderboard import task_chance

    assert task_chance(benchmark, task) == chance


def test_runs_are_found_at_any_depth_and_each_skipped_folder_is_named(
    demo_runs: Path, tmp_path: Path, capsys
):
    """``leaderboard runs/`` ranks the runs inside folders of run folders (``evaluate --tasks``
    outputs, the demo's ``runs/``), and says which folders it left out and why."""
    root = tmp_path / "runs"
    shutil.copytree(demo_runs / "clip", root / "clip")
    shutil.copytree(demo_runs / "xclip", root / "tasks" / "quick" / "xclip")
    (root / "broken").mkdir()
    (root / "broken" / "results.json").write_text("{}")
    (tmp_path / "empty").mkdir()
    missing, empty, out = tmp_path / "missing", tmp_path / "empty", tmp_path / "board"
    argv = ["leaderboard", str(root), str(empty), str(missing), "--out", str(out)]
    assert main([*argv, "--n-resamples", "20"]) == 0
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert {row["model"] for row in rows} == {"clip", "xclip"}
    assert {row["source"] for row in rows} == {
        str(root / "clip"),
        str(root / "tasks" / "quick" / "xclip"),
    }
    skipped = [line for line in capsys.readouterr().err.splitlines() if "skipped" in line]
    assert len(skipped) == 3, skipped
    assert any(
        f"skipped {root / 'broken'}: " in line and "is not a foilkit results file" in line
        for line in skipped
    )
    assert f"foilkit leaderboard: skipped {empty}: holds no run folder" in "\n".join(skipped)
    assert f"foilkit leaderboard: skipped {missing}: no such folder" in skipped
    assert "Skipped: " in (out / "leaderboard.md").read_text()


def test_nothing_to_rank_names_the_folders_skipped(tmp_path: Path):
    from foilkit.leaderboard import write_leaderboard

    (tmp_path / "runs" / "a").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"skipped .*runs: holds no run folder"):
        write_leaderboard([tmp_path / "runs"], tmp_path / "board")


def _finished(run: Path, when: str) -> Path:
    data = json.loads((run / "results.json").read_text())
    data["invocation"]["finished_at"] = when
    (run / "results.json").write_text(json.dumps(data))
    return run


def test_the_same_model_twice_is_ranked_once_and_each_row_names_its_run(
    demo_runs: Path, tmp_path: Path
):
    """Two runs of xclip are not ranked 1 and 2 (with a paired test of the model against
    itself): the later one is ranked, the other listed unranked, naming the run ranked."""
    first = _variant(demo_runs / "xclip", tmp_path / "first" / "xclip")
    later = _finished(
        _variant(demo_runs / "xclip", tmp_path / "later" / "xclip"), "2099-01-01T00:00:00+00:00"
    )
    out = tmp_path / "board"
    runs = [demo_runs / "clip", first, later]
    assert main(["leaderboard", *map(str, runs), "--out", str(out), "--n-resamples", "20"]) == 0
    rows = list(csv.DictReader((out / "leaderboard.csv").open()))
    for task in ("direction", "order", "speed", "average"):
        ranked = [row for row in rows if row["task"] == task]
        assert sorted(row["rank"] for row in ranked) == ["", "1", "2"]
        assert sorted(row["model"] for row in ranked if row["rank"]) == ["clip", "xclip"]
        (repeat,) = [row for row in ranked if not row["rank"]]
        assert (repeat["source"], repeat["same_model_ranked_from"]) == (str(first), str(later))
        assert ranked[-1] is repeat  # listed after every ranked run
        # the leader is tested against the other model, never a model against itself
        assert ranked[0]["p_value_vs_next"] and not ranked[1]["p_value_vs_next"]
        assert not repeat["p_value_vs_next"]
    wide = list(csv.DictReader((out / "leaderboard_wide.csv").open()))
    assert [(row["rank"], row["model"]) for row in wide][2] == ("—", "xclip")
    assert wide[2]["run"] == str(first)
    assert wide[2]["notes"] == f"same model ranked from {later}"
    assert {row["run"] for row in wide[:2]} == {str(demo_runs / "clip"), str(later)}
    markdown = (out / "leaderboard.md").read_text()
    assert f"| — | xclip | {markdown_text(str(first))} |" in markdown
    page = (out / "leaderboard.html").read_text()
    assert f"same model ranked from {later}" in page


def test_wide_columns_follow_the_benchmark_one_aggregate_then_notes(tmp_path: Path):
    """Per benchmark: the tasks in the benchmark's order, ONE aggregate column (its own summary
    task, else ``mean`` of its tasks, a per-aspect breakdown left out), notes last; the combined
    CSV keeps that shape over several benchmarks (never ``direction | mean | notes | order``)."""
    from foilkit.leaderboard import Entry, rank, wide_tables, write_wide_csv

    def entries(benchmark: str, source: str, values: dict[str, float]) -> list[Entry]:
        return [Entry(benchmark, task, "m", value, source=source) for task, value in values.items()]

    board = rank(
        [
            *entries("vitatecs", "runs/a", {"average": 55.0, "direction": 50.0}),
            *entries("contrast_sets", "runs/b", {"gender": 40.0, "verb_lm": 30.0}),
            *entries(
                "synthetic", "runs/c", {"speed": 1.0, "average": 2.0, "direction": 3.0, "order": 2}
            ),
            *entries(
                "tempcompass",
                "runs/d",
                {"yes_no": 50.0, "multi_choice_action": 90.0, "multi_choice": 60.0},
            ),
        ],
        n_resamples=0,
    )
    wide = {table.benchmark: table for table in wide_tables(board)}
    assert wide["vitatecs"].header == ["rank", "model", "run", "direction", "average", "notes"]
    assert wide["contrast_sets"].header == [
        *("rank", "model", "run", "verb_lm", "gender", "mean", "notes")
    ]
    assert wide["contrast_sets"].rows == [["1", "m", "runs/b", "30.0", "40.0", "35.0", ""]]
    assert wide["synthetic"].header == [
        *("rank", "model", "run", "direction", "order", "speed", "average", "notes")
    ]
    assert wide["synthetic"].rows[0][-2] == "2.0"  # its own average, not a second mean
    assert wide["tempcompass"].header == [
        *("rank", "model", "run", "multi_choice", "multi_choice_action", "yes_no", "mean", "notes")
    ]
    assert wide["tempcompass"].rows[0][-2] == "55.0"  # the aspect breakdown is no extra task
    path = write_wide_csv(list(wide.values()), tmp_path / "wide.csv")
    header = next(csv.reader(path.open()))
    assert header == [
        *("benchmark", "rank", "model", "run", "direction", "verb_lm", "gender", "order", "speed"),
        *("multi_choice", "multi_choice_action", "yes_no", "average", "mean", "notes"),
    ]
