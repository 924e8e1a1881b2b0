"""``foilkit.evaluate`` on each builder: real annotation rows, synthetic mp4s named after a few
of them.

Rows whose video was not rendered are skipped by the builder (``on_missing="skip"``), so each
evaluation scores the rows of the rendered videos with a tiny CLIP and computes the paper's metrics.
"""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np
import pytest
from annotated_videos import render_rows, render_videos, shortest_windows

from foilkit.builders import build
from foilkit.evaluation import evaluate
from foilkit.report import coverage_text, run_table
from foilkit.scorers.api import ScoreOptions

# benchmark, config, how many distinct videos to render
CASES = [
    ("vitatecs", "direction", 3),
    ("vilma", "change_of_state_action", 3),
    ("rtime", "origin", 4),
    ("rtime", "hard", 4),
    ("rtime", "binary", 4),
    ("contrast_sets", "verb_lm", 3),
]


@pytest.fixture(scope="module", params=CASES, ids=[f"{name}-{config}" for name, config, _ in CASES])
def evaluated(
    request,
    shared_data: Path,
    clip_model: str,
    n_resamples: int,
    tmp_path_factory: pytest.TempPathFactory,
):
    name, config, count = request.param
    cache = str(tmp_path_factory.mktemp("datasets-cache"))
    root = tmp_path_factory.mktemp(f"videos-{name}")
    videos = render_rows(name, config, count, root, shared_data, cache)
    run_dir = tmp_path_factory.mktemp("runs") / f"{name}-{config}"
    options = ScoreOptions(
        num_workers=0, progress=False, cache_dir=str(run_dir.parent / "embeddings")
    )
    result = evaluate(
        name,
        clip_model,
        config=config,
        out_dir=run_dir,
        videos=root,
        annotations=shared_data / name,
        on_missing="skip",
        n_resamples=n_resamples,
        datasets_cache_dir=cache,
        score_options=options,
    )
    return name, config, videos, result


def test_run_folder_has_results_report_scores_and_plots(evaluated, is_png):
    _, config, videos, result = evaluated
    run = result.run_dir
    assert (run / "results.json").is_file() and result.report.is_file()
    entry = result.results.configs[config]
    assert entry.num_rows > 0
    # coverage: only a few videos were rendered, the rest of the benchmark was dropped at build
    coverage = entry.coverage
    assert coverage.benchmark_rows == coverage.dropped_missing_video + entry.num_rows
    assert coverage.dropped_missing_video > 0
    assert coverage.scored + coverage.failed == entry.num_rows and coverage.failed == 0
    assert coverage_text(coverage) in result.report.read_text()
    pngs = sorted(p.name for p in run.glob("*.png"))
    assert pngs == (["recall.png"] if config in ("origin", "hard") else ["accuracy.png"])
    assert all(is_png(run / p) for p in pngs)
    if config in ("origin", "hard"):  # a retrieval pool: every view against every caption
        matrix = np.load(run / "scores" / f"{config}-matrix.npy")
        assert matrix.shape == (entry.num_rows, entry.num_rows) and np.isfinite(matrix).all()
    else:
        scores = datasets.Dataset.from_parquet(str(run / "scores" / f"{config}.parquet"))
        assert scores.num_rows == entry.num_rows
        assert set(scores["video_path"]) <= set(videos) and not any(scores["error"])


def test_report_table_shows_every_number_of_results_json(evaluated):
    *_, result = evaluated
    report = result.report.read_text()
    table = run_table(result.results)
    assert table.rows
    for row in table.rows:
        line = next(line for line in report.splitlines() if line.startswith(f"| {row.label} |"))
        for column, cell in row.cells.items():
            assert cell.text() in line, (row.label, column)
        assert line.endswith(f"| {row.n} | {row.tied_text()} |")
        assert row.tied, row.label  # every benchmark's metrics count their ties
    assert "ties=`" in report


def test_vilma_with_a_video_llm_in_likelihood_mode(
    shared_data: Path, n_resamples: int, tmp_path: Path
):
    """Likelihood scores are log-probabilities (not probabilities): ViLMA evaluates end to end,
    and the run says which protocol made its numbers, the user's --mode recorded as an override."""
    from foilkit.cli import main
    from foilkit.synthetic.models import tiny_model_path

    name, config = "vilma", "change_of_state_action"
    cache = str(tmp_path / "datasets-cache")
    render_rows(name, config, 2, tmp_path / "videos", shared_data, cache)
    run_dir = tmp_path / "run"
    argv = [
        "evaluate",
        "--benchmark",
        name,
        "--config",
        config,
        "--model",
        str(tiny_model_path("llava-next-video")),
        "--mode",
        "likelihood",
        "--videos",
        str(tmp_path / "videos"),
        "--annotations",
        str(shared_data / name),
        "--on-missing",
        "skip",
        "--min-coverage",  # two videos of the config on purpose: coverage is not the point here
        "0",
        "--out",
        str(run_dir),
        "--n-resamples",
        str(n_resamples),
        "--num-workers",
        "0",
        "--no-progress",
    ]
    assert main(argv) == 0
    import json

    results = json.loads((run_dir / "results.json").read_text())
    entry = results["configs"][config]
    assert entry["run"]["score"]["score_kind"] == "log_probability"
    overall = entry["metrics"]["proficiency_combined_accuracy"]["overall"]
    assert 0.0 <= overall["combined_accuracy"] <= 1.0 and overall["n"] > 0
    protocol = results["protocol"]
    assert protocol["name"] == "paper" and protocol["family"] == "video-llm"
    assert protocol["overrides"]["mode"]["given"] == "likelihood"
    report = (run_dir / "report.md").read_text()
    assert "Scoring protocol **paper** for `video-llm` models" in report
    assert "vilma published no scoring code for video-llm models" in report
    assert "mode `None` -> `likelihood`" in report


def test_vitatecs_with_a_video_llm_in_generate_mode(
    shared_data: Path, n_resamples: int, answering_model: str, tmp_path: Path
):
    """``foilkit evaluate --benchmark vitatecs --mode generate``: the paper's sampled Table 11
    prompt, answers read by VITATECS' parser, kept per item, counted in the report, and the
    accuracy of each sample with its spread."""
    import json

    from foilkit.cli import main

    name, config = "vitatecs", "direction"
    cache = str(tmp_path / "datasets-cache")
    text_only = build(
        name, config, annotations=shared_data / name, cache_dir=cache, on_missing="keep"
    )
    render_videos(tmp_path / "videos", shortest_windows(text_only["test"], 2))
    run_dir = tmp_path / "run"
    argv = ["evaluate", "--benchmark", name, "--config", config, "--mode", "generate"]
    argv += ["--model", answering_model]
    argv += ["--temperature", "1", "--num-samples", "2", "--max-new-tokens", "4"]
    argv += ["--videos", str(tmp_path / "videos"), "--annotations", str(shared_data / name)]
    argv += ["--on-missing", "skip", "--min-coverage", "0", "--out", str(run_dir)]
    argv += ["--n-resamples", str(n_resamples), "--num-workers", "0", "--no-progress"]
    assert main(argv) == 0
    results = json.loads((run_dir / "results.json").read_text())
    entry = results["configs"][config]
    run = entry["run"]["score"]
    assert run["mode"] == "generate" and run["adapter"]["parser"] == "vitatecs"
    # every item: its caption and counterfactual in both orders, 2 samples each
    assert sum(run["answers"].values()) == entry["num_rows"] * 4 and run["answers"]["parsed"]
    protocol = results["protocol"]
    assert protocol["settings"]["mode"] == "generate"
    assert protocol["overrides"]["temperature"] == {"protocol": 0.2, "given": 1.0}
    metric = entry["metrics"]["pairwise_foil_accuracy"]
    (key, spread), *_ = metric["samples"].items()  # the reported column: VITATECS' mean
    assert len(spread["values"]) == 2 and spread["mean"] == pytest.approx(sum(spread["values"]) / 2)
    report = (run_dir / "report.md").read_text()
    counts = ", ".join(f"{n} {outcome}" for outcome, n in run["answers"].items())
    assert f"answers read by parser `vitatecs`: {counts}" in report
    assert f"{key} per sample (2 samples): mean {100 * spread['mean']:.1f}" in report
    scores = datasets.Dataset.from_parquet(str(run_dir / "scores" / f"{config}.parquet"))
    assert all(len(answers) == 4 for answers in scores["answers"])
    from foilkit.html_report import run_items
    from foilkit.run import RunResults

    items = run_items(run_dir, RunResults.load(run_dir))  # the browser shows every answer
    assert [item["a"] for item in items] == scores["answers"]
    assert set(o for row in scores["answer_outcomes"] for o in row) <= {
        "parsed",
        "unparseable",
        "refused",
    }


def test_vitatecs_generate_mode_on_a_served_model(
    shared_data: Path, n_resamples: int, tmp_path: Path, monkeypatch, capsys, caplog
):
    """``foilkit evaluate --benchmark vitatecs --mode generate --backend openai --base-url``:
    the protocol's questions go to an OpenAI-compatible server with every frame as an image;
    a run killed part way resumes without asking again what was answered, a repeated run in
    another folder sends nothing (the reply cache), the backend, frames and usage are in the
    record, and the key is never written anywhere."""
    import json

    from foilkit.cli import main
    from tests.openai_server import OpenAICompatibleServer

    secret = "sk-e2e-served-secret-4242"
    monkeypatch.setenv("FOILKIT_SERVED_KEY", secret)
    name, config = "vitatecs", "direction"
    text_only = build(
        name,
        config,
        annotations=shared_data / name,
        cache_dir=str(tmp_path / "datasets-cache"),
        on_missing="keep",
    )
    render_videos(tmp_path / "videos", shortest_windows(text_only["test"], 2))

    def evaluate_served(server: OpenAICompatibleServer, run_dir: Path, *more: str) -> int:
        argv = ["evaluate", "--benchmark", name, "--config", config, "--mode", "generate"]
        argv += ["--backend", "openai", "--base-url", server.base_url, "--model", "served-vlm"]
        argv += ["--api-key-env", "FOILKIT_SERVED_KEY", "--cache-dir", str(tmp_path / "cache")]
        argv += ["--videos", str(tmp_path / "videos"), "--annotations", str(shared_data / name)]
        argv += ["--on-missing", "skip", "--min-coverage", "0", "--out", str(run_dir)]
        argv += ["--n-resamples", str(n_resamples), "--num-workers", "0", "--no-progress"]
        return main([*argv, "--batch-size", "1", "--max-retries", "0", *more])

    # killed part way: after three answers the server's replies are cut off
    with OpenAICompatibleServer(lambda body: "(A)") as server:
        server.malformed = lambda body: len(server.requests) > 3
        assert evaluate_served(server, tmp_path / "run") == 1
    with OpenAICompatibleServer(lambda body: "(A)") as resumed:
        assert evaluate_served(resumed, tmp_path / "run", "--resume") == 0
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    entry = results["configs"][config]
    run = entry["run"]["score"]
    asked = sum(run["answers"].values())  # one greedy answer per question
    assert run["answers"]["parsed"] == asked == entry["num_rows"] * 2
    assert len(resumed.requests) == asked - 3  # the three answered before the kill: cached
    backend = run["backend"]
    assert backend["name"] == "openai" and backend["base_url"] == resumed.base_url
    assert backend["served_model"] == "served-vlm"
    # spend over the run's whole life: the three billed before the kill, and the cut-off replies
    malformed = len(server.requests) - 3  # the replies cut off before the run stopped
    assert backend["usage"]["requests"] == asked and backend["usage"]["malformed_replies"]
    assert backend["usage"]["malformed_replies"] == malformed
    assert backend["usage_earlier_sessions"]["requests"] == 3
    assert backend["api_key_env"] == "FOILKIT_SERVED_KEY" and run["adapter"]["backend"]
    (sent,) = backend["frames_sent"]
    for body in resumed.requests:
        (user,) = [m for m in body["messages"] if m["role"] == "user"]
        images = [p for p in user["content"] if p["type"] == "image_url"]
        assert len(images) == sent["frames"] == run["num_frames"]
        assert user["content"][-1]["text"].startswith("Which of the following best describes")
    assert all(h["authorization"] == f"Bearer {secret}" for h in resumed.headers)
    # the same run in another folder: every reply from the cache
    with OpenAICompatibleServer(lambda body: "(A)") as repeated:
        assert evaluate_served(repeated, tmp_path / "again") == 0
        assert repeated.requests == []
    again = json.loads((tmp_path / "again" / "results.json").read_text())["configs"][config]
    assert again["metrics"] == entry["metrics"]
    assert again["run"]["score"]["backend"]["usage"]["cache_hits"] == asked
    # the key: in no file, output or log line
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or secret.encode() not in path.read_bytes(), path
    output = capsys.readouterr()
    assert secret not in output.out + output.err + caplog.text
