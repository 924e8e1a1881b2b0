"""``foilkit import`` of samples files written by lmms-eval itself: TempCompass' against a foilkit
run of the same tiny model on the same items (the same answers, zero discordant items, every row
counted), VITATECS' in lmms-eval's own option order, TemporalBench's by its documents' ``idx``.

How the samples file is made (live, in this test; ``docs/import.md`` says the same):

* lmms-eval 0.7.3 from PyPI in the virtualenv ``./dev.sh`` makes (``ensure_lmms_eval``; the test
  skips cleanly without it), its own CLI run by ``tests/lmms_eval_cli.py`` (one shim: the
  LLaVA-NeXT-Video class in ``llava_hf``'s model map) as ``lmms-eval --model llava_hf
  --force_simple --tasks tempcompass_multi_choice,vitatecs_direction --log_samples --gen_kwargs
  max_new_tokens=16`` on the tiny LLaVA-NeXT-Video folder, 8 frames (``max_frames_num=8``),
  float32, on the CPU.
  ``--force_simple``: 0.7.3's default ``llava_hf`` (``lmms_eval/models/chat/llava_hf.py``,
  ``generate_until``) passes ``images=[]`` for a video-only document, which transformers 5's
  LLaVA-NeXT image processor refuses (``max() arg is an empty sequence``).
* Its tasks read ``lmms-eval/TempCompass`` and ``lscpku/VITATECS`` through
  ``datasets.load_dataset``, which takes a local folder of that name in the working directory
  before the Hub: the test writes them there in the schema of the Hub datasets (TempCompass:
  config ``multi-choice``, split ``test``, ``video_id``, ``question``, ``answer``, ``dim``;
  VITATECS: config ``Direction``, the published lines' fields), holding the published questions
  of two TempCompass videos and the first three VITATECS direction lines
  (``../shared/data``; the test skips without it). The videos are synthetic mp4s where the
  tasks' ``doc_to_visual`` look: ``$HF_HOME/tempcompass/videos/<video_id>.mp4`` and
  ``$HF_HOME/vitatecs/<src_dataset>/<video_name>`` (a cache folder that exists skips the
  download of the Hub archive).
* TemporalBench: ``lmms-eval --model qwen2_vl --force_simple --tasks temporalbench_short_qa``
  on the tiny Qwen2-VL (``max_num_frames=8``), its dataset ``microsoft/TemporalBench`` a local
  folder (split ``test_short_qa``) of the questions ``tests/upstream_formats.py`` writes in the
  published format, its videos under ``$HF_HOME/temporalbench/``. ``llava_hf`` cannot run
  this task: its ``doc_to_visual`` returns a path string, which ``llava_hf`` flattens into
  characters.
* An answer its rules cannot read goes to its GPT judge at ``$OPENAI_API_URL``: a local server
  that answers "Incorrect" (``tests/openai_server.py``). Nothing leaves the machine.

foilkit's run: ``foilkit evaluate --mode generate --temperature 0 --max-new-tokens 16
--num-frames 8 --sampling uniform --dtype float32``: greedy decoding, as ``llava_hf`` decodes
at temperature 0, and its ``load_video`` frames (``np.linspace(0, n - 1, 8, dtype=int)``; its
decord and foilkit's torchcodec decode these files to the same pixels).
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
from references import lmms_eval_cli, lmms_eval_python

from foilkit.builders.vitatecs.answers import lmms_eval_vitatecs_order, lmms_eval_vitatecs_question
from foilkit.cli import main
from foilkit.compare import compare_runs
from foilkit.imports import NO_ANSWER
from foilkit.run import RunFolder, RunResults
from foilkit.synthetic.models import tiny_model_path
from foilkit.synthetic.videos import SyntheticScene, write_video
from tests.openai_server import OpenAICompatibleServer
from tests.upstream_formats import TEMPORALBENCH_QUESTIONS, write_temporalbench

pytestmark = pytest.mark.slow

VIDEOS = {"1034419625": "left", "1034419625_reverse": "right"}
#: lmms-lab/TempCompass' config -> lmms-eval's task and foilkit's config.
TASK = ("multi-choice", "tempcompass_multi_choice", "multi_choice")
#: lscpku/VITATECS' config -> lmms-eval's task and foilkit's config; its first lines.
VITATECS = ("Direction", "vitatecs_direction", "direction")
VITATECS_LINES = 3
#: lmms-eval's TemporalBench task and foilkit's config (questions: tests/upstream_formats.py).
TEMPORALBENCH = ("temporalbench_short_qa", "short_qa")
MAX_NEW_TOKENS = 16
FRAMES = 8


def _hub_layout(folder: Path, config: str, rows: list[dict]) -> None:
    """``folder`` as a Hub dataset of one ``config``: a README declaring it,
    ``<config>/test-00000-of-00001.parquet`` holding ``rows``."""
    (folder / config).mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(
        str(folder / config / "test-00000-of-00001.parquet")
    )
    (folder / "README.md").write_text(
        f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: test\n"
        f"    path: {config}/test-*\n---\n"
    )


def lmms_lab_tempcompass(shared_data: Path, work: Path, hf_home: Path) -> int:
    """``work/lmms-eval/TempCompass`` in lmms-lab's layout, with the published questions of
    :data:`VIDEOS`, and their videos under ``hf_home``; the number of rows."""
    config = TASK[0]
    published = json.loads(
        (shared_data / "tempcompass" / "questions" / f"{config}.json").read_text()
    )
    rows = [
        {"video_id": video, "question": item["question"], "answer": item["answer"], "dim": dim}
        for video in VIDEOS
        for dim, items in published[video].items()
        for item in items
    ]
    _hub_layout(work / "lmms-eval" / "TempCompass", config, rows)
    videos = hf_home / "tempcompass" / "videos"
    videos.mkdir(parents=True)
    for name, direction in VIDEOS.items():
        write_video(
            videos / f"{name}.mp4", SyntheticScene(direction=direction), num_frames=12, fps=4
        )
    return len(rows)


def vitatecs_hub(shared_data: Path, work: Path, hf_home: Path) -> int:
    """``work/lscpku/VITATECS`` with the first :data:`VITATECS_LINES` published direction lines,
    and their videos under ``hf_home``; the number of rows."""
    lines = (shared_data / "vitatecs" / f"{VITATECS[0]}.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines[:VITATECS_LINES]]
    _hub_layout(work / "lscpku" / "VITATECS", VITATECS[0], rows)
    for row in rows:
        video = hf_home / "vitatecs" / row["src_dataset"] / row["video_name"]
        video.parent.mkdir(parents=True, exist_ok=True)
        write_video(video, SyntheticScene(direction="left"), num_frames=12, fps=4)
    return len(rows)


def temporalbench_hub(work: Path, hf_home: Path) -> int:
    """``work/microsoft/TemporalBench`` with the questions of ``tests/upstream_formats.py`` in
    the split lmms-eval reads (``test_short_qa``), and their videos under ``hf_home``."""
    folder = work / "microsoft" / "TemporalBench"
    (folder / "short_qa").mkdir(parents=True)
    table = datasets.Dataset.from_list(TEMPORALBENCH_QUESTIONS)
    table.to_parquet(str(folder / "short_qa" / "test_short_qa-00000-of-00001.parquet"))
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test_short_qa\n"
        "    path: short_qa/test_short_qa-*\n---\n"
    )
    for video in {question["video_name"] for question in TEMPORALBENCH_QUESTIONS}:
        path = hf_home / "temporalbench" / video
        path.parent.mkdir(parents=True, exist_ok=True)
        write_video(path, SyntheticScene(direction="right"), num_frames=12, fps=4)
    return len(TEMPORALBENCH_QUESTIONS)


def run_lmms_eval(root: Path, model: str, model_args: str, tasks: list[str]) -> Path:
    """lmms-eval's CLI on ``tasks`` (their data laid out under ``root/work`` and ``root/hf``),
    greedy, :data:`MAX_NEW_TOKENS` new tokens, logging its samples; its output folder for the
    model. Its judge is a local server answering "Incorrect"."""
    work, hf_home = root / "work", root / "hf"
    args = ["--model", model, "--force_simple", "--tasks", ",".join(tasks)]
    args += ["--model_args", f"{model_args},device_map=cpu", "--batch_size", "1"]
    args += ["--device", "cpu", "--gen_kwargs", f"max_new_tokens={MAX_NEW_TOKENS}"]
    args += ["--log_samples", "--output_path", str(root / "out")]
    with OpenAICompatibleServer(lambda body: "Incorrect") as judge:
        env = {
            "HF_HOME": str(hf_home),
            "OPENAI_API_URL": f"{judge.base_url}/chat/completions",
            "OPENAI_API_KEY": "sk-test",
        }
        done = lmms_eval_cli(args, cwd=work, env=env)
    # lmms-eval's CLI logs an error and exits 0: its output folder is the evidence
    written = list((root / "out").glob("*/*_samples_*.jsonl"))
    assert done.returncode == 0 and len(written) == len(tasks), done.stderr[-4000:]
    return written[0].parent


@pytest.fixture(scope="module")
def lmms_eval_samples(shared_data: Path, tmp_path_factory) -> tuple[Path, dict[str, int]]:
    """lmms-eval's output folder for the tiny LLaVA-NeXT-Video (its samples and results files)
    on TempCompass and VITATECS, and the number of documents each task was given."""
    root = tmp_path_factory.mktemp("lmms-eval")
    documents = {
        TASK[1]: lmms_lab_tempcompass(shared_data, root / "work", root / "hf"),
        VITATECS[1]: vitatecs_hub(shared_data, root / "work", root / "hf"),
    }
    model_args = f"pretrained={tiny_model_path('llava-next-video')},dtype=float32"
    model_args += f",max_frames_num={FRAMES}"
    return run_lmms_eval(root, "llava_hf", model_args, list(documents)), documents


@pytest.fixture(scope="module")
def lmms_eval_temporalbench(tmp_path_factory) -> tuple[Path, int]:
    """lmms-eval's output folder for the tiny Qwen2-VL on TemporalBench, and the number of its
    documents. Qwen2-VL: ``temporalbench_doc_to_visual`` returns the video's path as a string,
    which ``llava_hf`` takes apart character by character (its ``flatten``); ``qwen2_vl``
    (with qwen-vl-utils) takes it whole."""
    root = tmp_path_factory.mktemp("lmms-eval-temporalbench")
    documents = temporalbench_hub(root / "work", root / "hf")
    model_args = f"pretrained={tiny_model_path('qwen2-vl')},max_num_frames={FRAMES}"
    return run_lmms_eval(root, "qwen2_vl", model_args, [TEMPORALBENCH[0]]), documents


def _samples_file(folder: Path, task: str) -> Path:
    (path,) = folder.glob(f"*_samples_{task}.jsonl")
    return path


@pytest.fixture(scope="module")
def foilkit_run(lmms_eval_samples, shared_data: Path, tmp_path_factory) -> Path:
    """foilkit's run of the same tiny model on the same videos' questions."""
    out = tmp_path_factory.mktemp("foilkit") / "run"
    videos = lmms_eval_samples[0].parents[1] / "hf" / "tempcompass" / "videos"
    argv = ["evaluate", "--benchmark", "tempcompass", "--config", TASK[2]]
    argv += ["--model", str(tiny_model_path("llava-next-video")), "--videos", str(videos)]
    argv += ["--annotations", str(shared_data / "tempcompass"), "--on-missing", "skip"]
    argv += ["--min-coverage", "0", "--mode", "generate", "--temperature", "0"]
    argv += ["--max-new-tokens", str(MAX_NEW_TOKENS), "--num-frames", str(FRAMES)]
    argv += ["--sampling", "uniform", "--dtype", "float32", "--out", str(out)]
    argv += ["--n-resamples", "20", "--num-workers", "0", "--no-progress"]
    assert main(argv) == 0
    return out


@pytest.fixture(scope="module")
def imported(lmms_eval_samples, shared_data: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("imported") / "run"
    samples = _samples_file(lmms_eval_samples[0], TASK[1])
    argv = ["import", str(samples), "--benchmark", "tempcompass", "--out", str(out)]
    argv += ["--annotations", str(shared_data / "tempcompass"), "--n-resamples", "20"]
    assert main(argv) == 0
    return out


def _samples(folder: Path, task: str = TASK[1]) -> list[dict]:
    path = _samples_file(folder, task)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_lmms_eval_writes_no_document_into_its_samples(lmms_eval_samples):
    """lmms-eval 0.7.3 drops ``doc`` and ``arguments`` from the file it writes
    (``EvaluationTracker.save_results_samples``): an item is named by the fields its task's
    ``process_results`` logs beside the answer; the prompt is ``input``."""
    folder, documents = lmms_eval_samples
    samples = _samples(folder)
    assert len(samples) == documents[TASK[1]]
    for sample in samples:
        assert "doc" not in sample and "arguments" not in sample
        assert {"video_id", "dim", "question"} <= set(sample["avg_accuracy"])
        assert sample["input"].endswith("\nPlease directly give the best option:")


def test_lmms_evals_samples_import_as_the_answers_foilkit_gives_the_same_model(
    lmms_eval_samples, foilkit_run: Path, imported: Path
):
    folder, documents = lmms_eval_samples[0], lmms_eval_samples[1][TASK[1]]
    results = RunResults.load(imported)
    entry = results.configs[TASK[2]]
    (source,) = entry.score.adapter["sources"]
    assert (source["tool"], source["model"]) == ("lmms-eval", "llava_hf")
    assert str(tiny_model_path("llava-next-video")) in source["model_args"]
    assert entry.score.adapter["prompts_differ"] == 0  # lmms-eval asked foilkit's prompt
    # every row accounted for: the answered ones scored, the others failed with their cause
    assert (entry.coverage.scored, entry.coverage.failed) == (documents, entry.num_rows - documents)
    assert entry.coverage.causes == {NO_ANSWER: entry.num_rows - documents}
    rows = RunFolder(imported).load_scores(TASK[2]).to_pandas().set_index("id")
    mine = RunFolder(foilkit_run).load_scores(TASK[2]).to_pandas().set_index("id")
    assert len(mine) == documents and not mine.error.any()
    answered = rows.index[rows.error.isna()]
    assert sorted(answered) == sorted(mine.index)
    for row_id in mine.index:  # the same text, item by item: same prompt, frames and decoding
        assert list(rows.loc[row_id, "answers"]) == list(mine.loc[row_id, "answers"]), row_id
        assert rows.loc[row_id, "caption_score"] == mine.loc[row_id, "caption_score"], row_id
    recorded = {
        (s["avg_accuracy"]["video_id"], s["avg_accuracy"]["question"]): s["filtered_resps"]
        for s in _samples(folder)
    }
    for row in mine.itertuples():  # lmms-eval's own record of each answer says the same
        assert recorded[(row.video_id, row.question)] == row.answers[0], row.Index


def test_compare_finds_no_discordant_item(foilkit_run: Path, imported: Path, tmp_path: Path):
    tests = compare_runs(foilkit_run, imported, n_resamples=20)
    mcnemar = tests[TASK[2]]["multiple_choice_accuracy"]["all"]["mcnemar"]
    assert (mcnemar["a_only"], mcnemar["b_only"]) == (0, 0)
    assert main(["compare", str(foilkit_run), str(imported), "--out", str(tmp_path / "cmp")]) == 0
    assert (tmp_path / "cmp" / "comparison.json").is_file()


def _import_vitatecs(samples: Path, shared_data: Path, out: Path) -> RunResults:
    argv = ["import", str(samples), "--benchmark", "vitatecs", "--out", str(out)]
    argv += ["--annotations", str(shared_data / "vitatecs"), "--n-resamples", "20"]
    assert main(argv) == 0
    return RunResults.load(out)


def test_vitatecs_samples_find_their_rows_in_lmms_evals_own_option_order(
    lmms_eval_samples, shared_data: Path, tmp_path: Path
):
    """lmms-eval asks each VITATECS row its two texts in an order seeded by the texts
    (``format_question_and_answer``): every sample finds its row by the source dataset, video
    and question rebuilt in that order, and the prompt foilkit rebuilds is the one lmms-eval
    asked, on every row."""
    folder, documents = lmms_eval_samples[0], lmms_eval_samples[1][VITATECS[1]]
    results = _import_vitatecs(_samples_file(folder, VITATECS[1]), shared_data, tmp_path / "run")
    entry = results.configs[VITATECS[2]]
    assert (entry.coverage.scored, entry.coverage.failed) == (documents, entry.num_rows - documents)
    assert entry.score.adapter["prompts_differ"] == 0
    assert entry.score.adapter["parser"] == "vitatecs"


@pytest.mark.parametrize("letter, accuracy", [("true", 1.0), ("other", 0.0)])
def test_a_vitatecs_letter_is_read_in_the_order_lmms_eval_showed(
    lmms_eval_samples, shared_data: Path, tmp_path: Path, letter: str, accuracy: float
):
    """lmms-eval's own samples with each answer replaced by the letter its ground truth names
    (``gt-answer``: "(B) ..."), or the other letter: the import reads the first as the caption
    on every row and the second as the counterfactual."""
    folder = lmms_eval_samples[0]
    samples = _samples(folder, VITATECS[1])
    for sample in samples:
        true = sample["accuracy"]["gt-answer"][1]
        sample["filtered_resps"] = true if letter == "true" else {"A": "B", "B": "A"}[true]
    source = tmp_path / "lmms-eval" / _samples_file(folder, VITATECS[1]).name
    source.parent.mkdir()
    source.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    results = _import_vitatecs(source, shared_data, tmp_path / "run")
    overall = results.configs[VITATECS[2]].metrics["pairwise_foil_accuracy"].overall
    assert overall["n"] == len(samples) and overall["accuracy"] == accuracy


def test_vitatecs_option_order_is_lmms_evals_on_every_published_row(
    shared_data: Path, tmp_path: Path
):
    """foilkit's port of the order (``lmms_eval_vitatecs_order``) asks every published VITATECS
    line the question lmms-eval's ``format_question_and_answer`` asks, run by lmms-eval's code."""
    files = sorted((shared_data / "vitatecs").glob("*.jsonl"))
    script = (
        "import json, sys\n"
        "from lmms_eval.tasks.vitatecs.utils import format_question_and_answer\n"
        "print(json.dumps([format_question_and_answer(json.loads(line))[0]"
        " for path in sys.argv[1:] for line in open(path) if line.strip()]))\n"
    )
    done = lmms_eval_python(
        ["-c", script, *map(str, files)], cwd=tmp_path, env={"HF_HOME": str(tmp_path)}
    )
    assert done.returncode == 0, done.stderr[-4000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    mine = []
    for path in files:
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                texts = (row["caption"], row["counterfactual"])
                order = lmms_eval_vitatecs_order(*texts)
                mine.append(lmms_eval_vitatecs_question([texts[i] for i in order]))
    assert len(mine) > 10000 and mine == theirs


def test_temporalbench_samples_find_their_rows_by_idx(lmms_eval_temporalbench, tmp_path: Path):
    """lmms-eval's ``temporalbench_short_qa`` samples carry their whole document (its scorer
    logs it as ``temporalbench_score.item``): each finds foilkit's row by ``idx``, asked the
    published question; the letter of its ``GT`` reads as the caption."""
    folder, documents = lmms_eval_temporalbench
    annotations = write_temporalbench(tmp_path / "annotations")
    samples = _samples(folder, TEMPORALBENCH[0])
    assert {s["temporalbench_score"]["item"]["idx"] for s in samples} == {
        q["idx"] for q in TEMPORALBENCH_QUESTIONS
    }
    for name, answer in (("as-run", None), ("true", "GT")):
        source = tmp_path / name / _samples_file(folder, TEMPORALBENCH[0]).name
        source.parent.mkdir()
        for sample in samples:
            if answer:
                sample["filtered_resps"] = sample["temporalbench_score"]["item"][answer]
        source.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
        out = tmp_path / name / "run"
        argv = ["import", str(source), "--benchmark", "temporalbench", "--out", str(out)]
        assert main([*argv, "--annotations", str(annotations), "--n-resamples", "20"]) == 0
        entry = RunResults.load(out).configs[TEMPORALBENCH[1]]
        assert (entry.coverage.scored, entry.coverage.failed) == (documents, 0)
        assert entry.score.adapter["prompts_differ"] == 0
        rows = RunFolder(out).load_scores(TEMPORALBENCH[1]).to_pandas()
        if answer:
            assert list(rows.caption_score) == [1.0] * documents
