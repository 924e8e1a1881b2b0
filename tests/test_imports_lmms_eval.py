"""``foilkit import`` of a samples file written by lmms-eval itself, against a foilkit run of the
same tiny model on the same items: the same answers, zero discordant items, every row counted.

How the samples file is made (live, in this test; ``docs/import.md`` says the same):

* lmms-eval 0.7.3 from PyPI in the virtualenv ``./dev.sh`` makes (``ensure_lmms_eval``; the test
  skips cleanly without it), its own CLI run by ``tests/lmms_eval_cli.py`` (one shim: the
  LLaVA-NeXT-Video class in ``llava_hf``'s model map) as ``lmms-eval --model llava_hf
  --force_simple --tasks tempcompass_multi_choice --log_samples --gen_kwargs max_new_tokens=16``
  on the tiny LLaVA-NeXT-Video folder, 8 frames (``max_frames_num=8``), float32, on the CPU.
  ``--force_simple``: 0.7.3's default ``llava_hf`` (``lmms_eval/models/chat/llava_hf.py``,
  ``generate_until``) passes ``images=[]`` for a video-only document, which transformers 5's
  LLaVA-NeXT image processor refuses (``max() arg is an empty sequence``).
* Its task reads ``lmms-eval/TempCompass`` through ``datasets.load_dataset``, which takes a
  local folder of that name in the working directory before the Hub: the test writes one there
  in the schema of lmms-lab's dataset card (configs ``multi-choice``, ...; split ``test``;
  ``video_id``, ``question``, ``answer``, ``dim``), holding the published questions of two
  TempCompass videos (``../shared/data/tempcompass``; the test skips without it). The videos
  are synthetic mp4s where the task's ``doc_to_visual`` looks:
  ``$HF_HOME/tempcompass/videos/<video_id>.mp4`` (a cache folder that exists skips the
  download of the Hub archive).
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
from references import lmms_eval_cli

from foilkit.cli import main
from foilkit.compare import compare_runs
from foilkit.imports import NO_ANSWER
from foilkit.run import RunFolder, RunResults
from foilkit.synthetic.models import tiny_model_path
from foilkit.synthetic.videos import SyntheticScene, write_video
from tests.openai_server import OpenAICompatibleServer

pytestmark = pytest.mark.slow

VIDEOS = {"1034419625": "left", "1034419625_reverse": "right"}
#: lmms-lab/TempCompass' config -> lmms-eval's task and foilkit's config.
TASK = ("multi-choice", "tempcompass_multi_choice", "multi_choice")
MAX_NEW_TOKENS = 16
FRAMES = 8


def lmms_lab_tempcompass(shared_data: Path, root: Path, config: str) -> int:
    """``root/lmms-eval/TempCompass``: lmms-lab's TempCompass layout (a README declaring the
    config, ``<config>/test-00000-of-00001.parquet``) with the published questions of
    :data:`VIDEOS`; the number of rows."""
    published = json.loads(
        (shared_data / "tempcompass" / "questions" / f"{config}.json").read_text()
    )
    rows = [
        {"video_id": video, "question": item["question"], "answer": item["answer"], "dim": dim}
        for video in VIDEOS
        for dim, items in published[video].items()
        for item in items
    ]
    folder = root / "lmms-eval" / "TempCompass"
    (folder / config).mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(
        str(folder / config / "test-00000-of-00001.parquet")
    )
    (folder / "README.md").write_text(
        f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: test\n"
        f"    path: {config}/test-*\n---\n"
    )
    return len(rows)


@pytest.fixture(scope="module")
def lmms_eval_samples(shared_data: Path, tmp_path_factory) -> tuple[Path, int]:
    """lmms-eval's output folder for the tiny model (its samples and results files), and the
    number of documents it was given."""
    root = tmp_path_factory.mktemp("lmms-eval")
    videos = root / "hf" / "tempcompass" / "videos"
    videos.mkdir(parents=True)
    for name, direction in VIDEOS.items():
        write_video(
            videos / f"{name}.mp4", SyntheticScene(direction=direction), num_frames=12, fps=4
        )
    work = root / "work"
    documents = lmms_lab_tempcompass(shared_data, work, TASK[0])
    model = tiny_model_path("llava-next-video")
    args = ["--model", "llava_hf", "--force_simple", "--tasks", TASK[1], "--batch_size", "1"]
    args += [
        "--model_args",
        f"pretrained={model},dtype=float32,max_frames_num={FRAMES},device_map=cpu",
    ]
    args += ["--device", "cpu", "--gen_kwargs", f"max_new_tokens={MAX_NEW_TOKENS}"]
    args += ["--log_samples", "--output_path", str(root / "out")]
    with OpenAICompatibleServer(lambda body: "Incorrect") as judge:
        env = {
            "HF_HOME": str(root / "hf"),
            "OPENAI_API_URL": f"{judge.base_url}/chat/completions",
            "OPENAI_API_KEY": "sk-test",
        }
        done = lmms_eval_cli(args, cwd=work, env=env)
    (out,) = (root / "out").iterdir()  # lmms-eval's folder for the model
    samples = list(out.glob(f"*_samples_{TASK[1]}.jsonl"))
    assert done.returncode == 0 and samples, f"lmms-eval failed:\n{done.stderr[-4000:]}"
    return out, documents


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
    argv = ["import", str(lmms_eval_samples[0]), "--benchmark", "tempcompass", "--out", str(out)]
    argv += ["--annotations", str(shared_data / "tempcompass"), "--n-resamples", "20"]
    assert main(argv) == 0
    return out


def _samples(folder: Path) -> list[dict]:
    (path,) = folder.glob(f"*_samples_{TASK[1]}.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_lmms_eval_writes_no_document_into_its_samples(lmms_eval_samples):
    """lmms-eval 0.7.3 drops ``doc`` and ``arguments`` from the file it writes
    (``EvaluationTracker.save_results_samples``): an item is named by the fields its task's
    ``process_results`` logs beside the answer; the prompt is ``input``."""
    folder, documents = lmms_eval_samples
    samples = _samples(folder)
    assert len(samples) == documents
    for sample in samples:
        assert "doc" not in sample and "arguments" not in sample
        assert {"video_id", "dim", "question"} <= set(sample["avg_accuracy"])
        assert sample["input"].endswith("\nPlease directly give the best option:")


def test_lmms_evals_samples_import_as_the_answers_foilkit_gives_the_same_model(
    lmms_eval_samples, foilkit_run: Path, imported: Path
):
    folder, documents = lmms_eval_samples
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
