"""``foilkit evaluate vinoground`` end to end: built from its upstream format (a fixture: the
annotations live only on the Hub), synthetic mp4s named after the pairs, a tiny dual encoder and a
tiny video LLM; every video decoded once, the numbers those of the port of Vinoground's scorer
on the run's own per-sample scores, the report's rows the paper's categories; compare, the
leaderboard and the Hub results read the runs."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import datasets
import pytest
from references import vinoground_videoclip_scores
from upstream_formats import VINOGROUND_ROWS, vinoground_csv

from foilkit.compare import compare_runs
from foilkit.evaluation import evaluate
from foilkit.hub_results import task_values
from foilkit.leaderboard import local_entries
from foilkit.scorers.api import ScoreOptions
from foilkit.scorers.video import decoding
from foilkit.synthetic.models import tiny_model_path
from foilkit.synthetic.videos import SyntheticScene, write_video

OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up"}
PAIRS = 3  # pairs 0..2 rendered; pair 3's videos are missing (dropped at build)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("vinoground")
    annotations = folder / "annotations"
    annotations.mkdir()
    (annotations / "vinoground.csv").write_text(vinoground_csv())
    root = folder / "videos"
    for index, direction in zip(range(PAIRS), ("left", "up", "right"), strict=True):
        for role, shown in (("pos", direction), ("neg", OPPOSITE[direction])):
            path = root / "vinoground_videos" / f"{index}_{role}.mp4"
            write_video(path, SyntheticScene(direction=shown), num_frames=12, fps=4)
    return annotations, root


@pytest.fixture(scope="module")
def runs(inputs, tmp_path_factory, n_resamples):
    """A run per model family, with the number of times each video file was opened."""
    annotations, root = inputs
    out = tmp_path_factory.mktemp("vinoground-runs")
    cache = str(out / "datasets-cache")
    models = {
        "clip": {},
        "llava-next-video": {"mode": "choice"},
    }
    made = {}
    real = decoding.open_video
    for name, options in models.items():
        opened: Counter = Counter()

        def counting(view, *args, opened=opened):
            opened[Path(view.source).name] += 1
            return real(view, *args)

        decoding.open_video = counting
        try:
            result = evaluate(
                "vinoground",
                str(tiny_model_path(name)),
                out_dir=out / name,
                videos=root,
                annotations=annotations,
                on_missing="skip",
                n_resamples=n_resamples,
                datasets_cache_dir=cache,
                score_options=ScoreOptions(
                    num_workers=0, progress=False, use_cache=False, num_frames=4, **options
                ),
            )
        finally:
            decoding.open_video = real
        made[name] = (result, opened)
    return made


@pytest.mark.parametrize("model", ["clip", "llava-next-video"])
def test_each_video_decoded_once_and_scores_equal_the_port(runs, model):
    result, opened = runs[model]
    assert opened == {f"{i}_{role}.mp4": 1 for i in range(PAIRS) for role in ("pos", "neg")}
    record = result.results.configs["all"].score.data
    assert record["dataset"]["num_videos"] == 2 * PAIRS
    assert record["throughput"]["decoded_videos"] == 2 * PAIRS
    scores = datasets.Dataset.from_parquet(str(result.run_dir / "scores" / "all.parquet"))
    assert scores.num_rows == PAIRS and not any(scores["error"])
    assert "foil_video" not in scores.column_names
    blocks = [
        [
            [row["caption_score"], row["foil_scores"][0]],
            [row["foil_video_caption_score"], row["foil_video_foil_scores"][0]],
        ]
        for row in scores.to_list()
    ]
    csv_rows = [list(row) for row in VINOGROUND_ROWS[:PAIRS]]
    theirs = vinoground_videoclip_scores(blocks, csv_rows)
    computed = result.results.configs["all"].metrics["winoground_score"]
    for category, values in theirs.items():
        source = computed.overall if category == "all" else computed.groups[category]
        ours = tuple(source[f"{s}_score"] * 100 for s in ("text", "video", "group"))
        assert ours == pytest.approx(values), category


def test_report_rows_are_the_categories_and_coverage_counts_the_missing_pair(runs):
    result, _ = runs["clip"]
    report = result.report.read_text()
    assert "| category | text | video | group | n | tied |" in report
    for category in ("action", "object", "viewpoint", "interaction", "cyclical", "spatial", "all"):
        assert f"| {category} |" in report
    coverage = result.results.configs["all"].coverage
    assert (coverage.benchmark_rows, coverage.dropped_missing_video) == (len(VINOGROUND_ROWS), 1)


def test_compare_leaderboard_and_hub_tasks_read_the_runs(runs):
    clip, llm = runs["clip"][0], runs["llava-next-video"][0]
    tests = compare_runs(clip.run_dir, llm.run_dir, n_resamples=20)
    scopes = tests["all"]["winoground_score"]
    assert "all" in scopes and "interaction" in scopes
    entries = local_entries([clip.run_dir, llm.run_dir])
    assert {entry.benchmark for entry in entries} == {"vinoground"}
    tasks = {value.task.id: value.value for value in task_values(clip.results)}
    computed = clip.results.configs["all"].metrics["winoground_score"].overall
    assert tasks == {
        f"{s}_score": pytest.approx(computed[f"{s}_score"] * 100)
        for s in ("text", "video", "group")
    }
