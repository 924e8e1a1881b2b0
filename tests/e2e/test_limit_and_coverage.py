"""``--limit`` on the real VITATECS annotations with a partial video download, and one coverage
(rows scored / rows selected) wherever a run is shown.

VITATECS direction has 3,800 rows; only the videos of a few of them are rendered here, as after a
partial download. ``--limit`` selects its rows first, so a run needs their videos alone, and
builds no other row; a selected row whose video is missing is still selected, and
``--on-missing`` decides what becomes of it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from annotated_videos import render_videos

from foilkit.builders import build
from foilkit.builders.videos import MissingVideosError
from foilkit.cli import main
from foilkit.evaluation import evaluate
from foilkit.scorers.api import ScoreOptions

NAME, CONFIG, ROWS = "vitatecs", "direction", 3800


@pytest.fixture(scope="module")
def direction(shared_data: Path, tmp_path_factory: pytest.TempPathFactory):
    """Every row of VITATECS direction, text only (the rows as the annotation files give them)."""
    cache = str(tmp_path_factory.mktemp("datasets-cache"))
    rows = build(NAME, CONFIG, annotations=shared_data / NAME, cache_dir=cache, on_missing="keep")
    return rows["test"]


def _videos(rows, indices, root: Path) -> Path:
    """Render the videos of rows ``indices`` (each long enough for its row's window)."""
    durations: dict[str, float] = {}
    for index in indices:
        path, end = rows[index]["video_path"], rows[index]["end"] or 0.0
        durations[path] = max(durations.get(path, 0.0), end)
    render_videos(root, durations)
    return root


def _options() -> ScoreOptions:
    return ScoreOptions(num_workers=0, progress=False, use_cache=False)


@pytest.mark.parametrize(
    ("limit", "seed", "indices"),
    [
        (4, None, range(4)),  # the first 4 rows
        (0.001, None, range(4)),  # a share: ceil(3.8) rows
        (3, 11, sorted(random.Random(11).sample(range(ROWS), 3))),  # a seeded sample
    ],
    ids=["first", "share", "seeded"],
)
def test_a_limit_needs_only_the_videos_of_the_rows_it_selects(
    direction, limit, seed, indices, shared_data, clip_model, tmp_path
):
    """Only the selected rows' videos exist (3,79x of the config's are missing): the run needs
    no ``--on-missing`` and builds only those rows."""
    from foilkit.builders import get_benchmark
    from foilkit.evaluation import load_benchmark_split
    from foilkit.selection import RowSelection

    videos = _videos(direction, indices, tmp_path / "videos")
    selection = RowSelection(limit, seed)
    cache = str(tmp_path / "datasets-cache")
    loaded = load_benchmark_split(
        get_benchmark(NAME),
        CONFIG,
        videos=videos,
        annotations=shared_data / NAME,
        cache_dir=cache,
        selection=selection,
    )
    expected = [direction[i]["id"] for i in indices]
    assert loaded.data["id"] == expected and loaded.limited_from == ROWS
    assert loaded.data.info.splits["test"].num_examples == len(expected)  # no other row built
    result = evaluate(
        NAME,
        clip_model,
        config=CONFIG,
        limit=limit,
        limit_seed=seed,
        out_dir=tmp_path / "run",
        videos=videos,
        annotations=shared_data / NAME,
        n_resamples=20,
        datasets_cache_dir=cache,
        score_options=_options(),
    )
    entry = result.results.configs[CONFIG]
    assert result.folder.load_scores(CONFIG)["id"] == expected
    coverage = entry.coverage
    assert (coverage.scored, coverage.total, coverage.not_selected) == (
        len(expected),
        len(expected),
        ROWS - len(expected),
    )
    assert (coverage.benchmark_rows, entry.limited_from) == (ROWS, ROWS)
    saved = json.loads(result.folder.results.read_text())
    assert saved["limit"] == limit and saved.get("limit_seed") == seed
    assert selection.describe() in result.results.partial()


def test_missing_videos_among_the_selected_rows_are_named_alone(
    direction, shared_data, clip_model, tmp_path
):
    """The first 4 rows are selected whether or not their videos are there: two of them missing
    is an error naming those two (not the config's thousands), and the rows counted as selected
    and not scored with ``--on-missing skip`` or ``keep``."""
    present = [0, 1]
    missing = {direction[i]["video_path"] for i in (2, 3)} - {
        direction[i]["video_path"] for i in present
    }
    videos = _videos(direction, present, tmp_path / "videos")
    common = {
        "config": CONFIG,
        "limit": 4,
        "videos": videos,
        "annotations": shared_data / NAME,
        "n_resamples": 20,
        "datasets_cache_dir": str(tmp_path / "datasets-cache"),
        "score_options": _options(),
    }
    with pytest.raises(MissingVideosError) as error:
        evaluate(NAME, clip_model, out_dir=tmp_path / "error", **common)
    message = str(error.value)
    assert f"{len(missing)} video(s) used by 2 of the 4 rows --limit selected (of {ROWS})" in (
        message
    )
    assert not (tmp_path / "error").exists()  # refused before the run folder or a model
    for policy, failed, dropped in (("skip", 0, 2), ("keep", 2, 0)):
        run = evaluate(NAME, clip_model, out_dir=tmp_path / policy, on_missing=policy, **common)
        coverage = run.results.configs[CONFIG].coverage
        assert (coverage.scored, coverage.failed, coverage.total) == (2, failed, 4), policy
        assert (coverage.dropped_missing_video or 0, coverage.not_selected) == (dropped, ROWS - 4)


def test_one_run_reads_the_same_coverage_everywhere(
    direction, shared_data, clip_model, tmp_path, capsys
):
    """results.json, report.md, report.html, the leaderboard, push-results and the exit status:
    2 of the 4 rows selected were scored (2 dropped, video missing), and 3,796 rows were not
    selected, shown apart, in each."""
    from foilkit.errors import UserError
    from foilkit.hub_results import prepare_upload
    from foilkit.leaderboard import local_entries, rank
    from foilkit.run import RunResults

    videos = _videos(direction, [0, 1], tmp_path / "videos")
    out = tmp_path / "run"
    argv = ["evaluate", "--benchmark", NAME, "--config", CONFIG, "--limit", "4"]
    argv += ["--model", clip_model, "--video-root", str(videos), "--on-missing", "skip"]
    argv += ["--annotations", str(shared_data / NAME), "--out", str(out), "--no-cache"]
    argv += ["--n-resamples", "20", "--num-workers", "0", "--no-progress"]
    assert main(argv) == 3  # 2 / 4 is below the default --min-coverage 0.9
    err = capsys.readouterr().err
    label, left_out = "2 / 4", f"{ROWS - 4} of {ROWS} rows not selected (--limit)"
    assert f"{CONFIG}: {label} rows scored (50%)" in err and left_out in err
    assert "2 dropped at build (video missing)" in err
    coverage = json.loads((out / "results.json").read_text())["configs"][CONFIG]["coverage"]
    assert (coverage["scored"], coverage["dropped_missing_video"], coverage["failed"]) == (2, 2, 0)
    assert coverage["not_selected"] == ROWS - 4 and coverage["benchmark_rows"] == ROWS
    assert RunResults.load(out).configs[CONFIG].coverage.label == label
    report = (out / "report.md").read_text()
    assert f"coverage {label} (50%): 4 of {ROWS} rows selected (--limit)" in report
    html = (out / "report.html").read_text()
    assert f"{label} (50%)" in html and left_out in html
    entries = [e for e in local_entries([out]) if e.task == CONFIG]
    rank(entries)
    (entry,) = entries
    assert entry.coverage == f"{label} (incomplete)" and f"{ROWS - 4} rows not selected" in (
        entry.notes
    )
    with pytest.raises(UserError, match=rf"{CONFIG}: {label} rows scored \(50%\)"):
        prepare_upload(out, "me/results", model_repo="me/clip", dataset_id="me/vitatecs")
