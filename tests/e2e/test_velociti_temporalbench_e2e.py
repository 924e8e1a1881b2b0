"""``foilkit evaluate`` on VELOCITI and TemporalBench, built from their upstream formats, with a
tiny dual encoder, a tiny video LLM and (StrictVLE) a tiny cross-encoder; the numbers equal the
ports of the official scorers on the per-sample scores the run wrote."""

from __future__ import annotations

import json

import datasets
import pytest
from references import (
    temporalbench_qa_accuracy,
    temporalbench_response,
    velociti_classic_vle,
    velociti_strict_vle,
)
from upstream_formats import (
    TEMPORALBENCH_QUESTIONS,
    VELOCITI_ROWS,
    write_temporalbench,
    write_velociti,
)

from foilkit.evaluation import evaluate
from foilkit.scorers.api import ScoreOptions
from foilkit.synthetic.models import tiny_model_path
from foilkit.synthetic.videos import SyntheticScene, write_video

CASES = [
    ("velociti", "clip", None),
    ("velociti", "blip-itm", None),
    ("velociti", "llava-next-video", None),
    ("temporalbench", "clip", None),
    ("temporalbench", "llava-next-video", None),
    ("velociti", "clip", "reversed"),
]
#: the models whose VELOCITI scores are probabilities under the paper protocol: BLIP's ITM
#: probability and the video LLM's entailment probability (StrictVLE applies)
PROBABILITIES = ("blip-itm", "llava-next-video")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Hub clones of both benchmarks and a synthetic mp4 for every video they name."""
    root = tmp_path_factory.mktemp("velociti-temporalbench")
    clones = {
        "velociti": write_velociti(root / "velociti"),
        "temporalbench": write_temporalbench(root / "temporalbench"),
    }
    paths = {f"{row['video_id']}.mp4" for row in VELOCITI_ROWS}
    paths |= {question["video_name"] for question in TEMPORALBENCH_QUESTIONS}
    for index, relative in enumerate(sorted(paths)):
        target = root / "videos" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        scene = SyntheticScene(direction=("left", "right", "up", "down")[index % 4])
        write_video(target, scene, num_frames=12, fps=4)
    return root, clones


@pytest.fixture(scope="module")
def run(inputs, n_resamples):
    """``run(name, model, control)``: that evaluation's run folder, evaluated once per module."""
    root, clones = inputs
    done = {}

    def _run(name: str, model: str, control: str | None = None):
        key = (name, model, control)
        if key not in done:
            run_dir = root / "runs" / "-".join(filter(None, key))
            done[key] = evaluate(
                name,
                str(tiny_model_path(model)),
                out_dir=run_dir,
                videos=root / "videos",
                annotations=clones[name],
                n_resamples=n_resamples,
                datasets_cache_dir=str(root / "datasets-cache"),
                score_options=ScoreOptions(
                    num_workers=0,
                    progress=False,
                    cache_dir=str(root / "embeddings"),
                    control=control,
                ),
            )
        return done[key]

    return _run


@pytest.fixture(scope="module", params=CASES, ids=["-".join(filter(None, c)) for c in CASES])
def evaluated(request, run):
    name, model, control = request.param
    result = run(name, model, control)
    config = "all" if name == "velociti" else "short_qa"
    scores = datasets.Dataset.from_parquet(str(result.run_dir / "scores" / f"{config}.parquet"))
    results = json.loads((result.run_dir / "results.json").read_text())
    metrics = results["configs"][config]["metrics"]["pairwise_foil_accuracy"]
    return name, model, control, result, scores, metrics, results


def test_metrics_equal_the_official_scorers_on_the_run_scores(evaluated):
    name, model, _, _, scores, metrics, results = evaluated
    assert not any(scores["error"]) and scores.num_rows > 0
    overall = metrics["overall"]
    pos = scores["caption_score"]
    neg = [foils[0] for foils in scores["foil_scores"]]
    kind = scores["score_kind"][0]
    if name == "velociti":
        _, right, total = velociti_classic_vle(pos, neg)
        assert overall["accuracy"] == pytest.approx(right / total) and overall["n"] == total
        if model in PROBABILITIES:  # StrictVLE as metrics.py computes it
            assert kind == "probability"
            _, right, total = velociti_strict_vle(pos, neg)
            assert overall["strict_entailment_accuracy"] == pytest.approx(right / total)
            for test, group in metrics["groups"].items():
                keep = [i for i, t in enumerate(scores["test_name"]) if t == test]
                _, right, total = velociti_strict_vle(
                    [pos[i] for i in keep], [neg[i] for i in keep]
                )
                assert group["strict_entailment_accuracy"] == pytest.approx(right / total)
            if model == "llava-next-video":  # the paper protocol: P(Yes) / (P(Yes) + P(No))
                assert results["protocol"]["settings"]["mode"] == "entail"
        else:  # a similarity: no StrictVLE, and the run says which kind
            assert kind == "similarity"
            assert "strict_entailment_accuracy" not in overall
    else:
        questions = {q["idx"]: q for q in TEMPORALBENCH_QUESTIONS}
        preds = [
            {"idx": i, "response": temporalbench_response(c, f, questions[i]["GT"])}
            for i, c, f in zip(scores["id"], pos, neg, strict=True)
        ]
        official = temporalbench_qa_accuracy(
            list(questions.values()), preds, "temporalbench_short_qa.json"
        )
        right, total = official["binary"]
        assert overall["accuracy"] == pytest.approx(right / total)
        right, total = official["multiple_binary"]
        assert overall["multiple_binary_accuracy"] == pytest.approx(right / total)
        for category, (_, (right, total)) in official["category"].items():
            group = metrics["groups"][category]
            assert group["multiple_binary_accuracy"] == pytest.approx(right / total)
        if model == "llava-next-video":  # the paper protocol: option letters, one frame
            assert kind == "probability"
            assert results["protocol"]["settings"]["mode"] == "choice"
            assert results["protocol"]["settings"]["num_frames"] == 1
            assert results["protocol"]["settings"]["prompt"] == "temporalbench"


def test_report_has_the_paper_columns_and_rows(evaluated):
    name, model, control, result, _, _, _ = evaluated
    report = result.report.read_text()
    if name == "velociti":
        assert "| test | ClassicVLE | StrictVLE |" in report
        assert "| chrono |" in report and "| agent_random |" in report
        if model not in PROBABILITIES:
            chrono = next(line for line in report.splitlines() if line.startswith("| chrono |"))
            assert chrono.split("|")[3].strip() == "—"  # no StrictVLE on non-probabilities
    else:
        assert "| category | binary accuracy | multiple binary accuracy |" in report
        assert "| Action Effector |" in report and "| Motion Direction/Orientation |" in report
    if control is not None:
        assert json.loads((result.run_dir / "results.json").read_text())["control"] == control


def test_leaderboard_tasks_come_from_the_run(evaluated):
    from foilkit.hub_results import task_values
    from foilkit.run import RunResults

    name, model, control, result, _, metrics, _ = evaluated
    values = {value.task.id: value for value in task_values(RunResults.load(result.run_dir))}
    suffix = f"_{control}" if control else ""
    if name == "velociti":
        expected = round(100 * metrics["groups"]["chrono"]["accuracy"], 2)
        assert values[f"chrono_classic{suffix}"].value == expected
        assert (f"chrono_strict{suffix}" in values) == (model in PROBABILITIES)
    else:
        overall = metrics["overall"]
        assert values["binary_accuracy"].value == round(100 * overall["accuracy"], 2)
        assert values["multiple_binary_accuracy"].value == round(
            100 * overall["multiple_binary_accuracy"], 2
        )


def test_cli_benchmarks_lists_both(capsys):
    from foilkit.cli import main

    assert main(["benchmarks"]) == 0
    out = capsys.readouterr().out
    assert "velociti" in out and "temporalbench" in out


def test_protocols_name_the_reference_files():
    from foilkit.scorers.protocols import describe_protocol, resolve_protocol

    dual = describe_protocol("paper", "velociti", "dual-encoder")
    assert dual.num_frames == 20 and dual.sampling == "segment-middle"
    assert "extract_frames.py" in dual.reference
    llm = describe_protocol("paper", "temporalbench", "video-llm")
    assert "llava-onevision.py" in llm.reference and llm.mode == "choice"
    assert "no scoring code" in describe_protocol("paper", "temporalbench", "dual-encoder").notes
    # the published question belongs to choice mode: another mode given drops it
    accepted = ("mode", "reduction", "prompt")
    paper = resolve_protocol("paper", "temporalbench", "video-llm", accepted=accepted)
    assert paper.settings["prompt"] == "temporalbench"
    other = resolve_protocol(
        "paper", "temporalbench", "video-llm", {"mode": "entail"}, accepted=accepted
    )
    assert "prompt" not in other.settings and other.settings["mode"] == "entail"


@pytest.mark.parametrize("name", ["velociti", "temporalbench"])
def test_compare_and_leaderboard_pair_two_models_per_benchmark(run, name):
    """Runs of two models on one benchmark compare item by item (TemporalBench's question sets
    describe items, they are not scores) and join one local leaderboard."""
    from foilkit.compare import compare_runs
    from foilkit.leaderboard import local_entries

    a, b = (run(name, model).run_dir for model in ("clip", "llava-next-video"))
    config = "all" if name == "velociti" else "short_qa"
    tests = compare_runs(a, b, n_resamples=20, seed=0)
    scopes = tests[config]["pairwise_foil_accuracy"]
    assert "all" in scopes and "mcnemar" in scopes["all"]
    tasks = {entry.task for entry in local_entries([a, b])}
    assert ("chrono_classic" if name == "velociti" else "multiple_binary_accuracy") in tasks


def test_results_upload_keeps_temporalbench_questions_local(run):
    """Per-sample scores copy the benchmark's texts: a TemporalBench upload carries the numbers
    only; a VELOCITI one carries its scores as every benchmark's does."""
    from foilkit.hub_results import prepare_upload

    temporalbench = prepare_upload(run("temporalbench", "clip").run_dir, "me/tb-results")
    assert "results.json" in temporalbench.files and "report.md" in temporalbench.files
    assert not any(name.startswith("scores/") for name in temporalbench.files)
    assert not any(name.endswith(".html") for name in temporalbench.files)
    velociti = prepare_upload(run("velociti", "clip").run_dir, "me/velociti-results")
    assert "scores/all.parquet" in velociti.files
