"""``foilkit import`` of the samples files lmms-eval itself writes for its ``tomato`` and
``vinoground`` tasks (``docs/import.md`` says the same).

How the samples files are made: lmms-eval 0.7.3 in the virtualenv ``./dev.sh`` makes (the tests
that run it skip cleanly without it), its own CLI (``tests/lmms_eval_cli.py``) run as
``lmms-eval --model llava_hf --force_simple --tasks tomato,vinoground --log_samples
--gen_kwargs max_new_tokens=16`` on the tiny LLaVA-NeXT-Video folder, 8 frames, float32, on the
CPU (:func:`tests.test_imports_lmms_eval.run_lmms_eval`; lmms-eval's ``tomato`` task imports
OpenCV, ``opencv-python-headless`` in that virtualenv). TOMATO's run is live, in this test (about
30 s). Vinoground's takes minutes (509 documents, see below): its files were made once by the
same code, ``python tests/test_imports_lmms_eval_tomato_vinoground.py
tests/data/imports/lmms-eval-vinoground`` (:func:`make_fixtures`), which keeps the samples of the
pairs asked all four questions and the run's results file; the question files and
``vinoground.csv`` are written again by the test (:func:`vinoground_hub`, seeded). Their datasets
are local folders in lmms-eval's working directory, in the schema the tasks read:

* ``lmms-eval/TOMATO`` (split ``test``): ``id``, ``question``, ``options``, ``answer``,
  ``video_path``, ``reason_type``, ``demonstration_type`` of five published questions
  (``../shared/data/tomato``; the test skips without it), two of which share their question,
  options and video type (``direction`` 0 and 1: only their videos differ); the videos are
  synthetic mp4s under ``$HF_HOME/TOMATO/videos/<demonstration type>/<key>.mp4``. The ``id``
  is a number of this test's: lmms-eval's Hub copy's ids name no published question, and the
  import does not read them.
* ``HanSolo9682/Vinoground`` (split ``lmmseval``): one document per question, ``index``
  ``<pair>_<pos|neg>_<text|video>``, ``major``, ``minor``, ``pos_cap``, ``neg_cap``. lmms-eval's
  ``vinoground_aggregate_results`` needs every one of 500 pairs (``index_to_categories[i]`` for
  ``i`` in ``range(500)``; with fewer it raises and writes no samples), so the split holds the
  four questions of pairs 0-2 and one question of each of pairs 3-499 (509 documents). The
  question files its ``prep_data`` reads, ``vinoground_videos/vinoground_textscore.json`` and
  ``vinoground_videos_concated/vinoground_videoscore.json`` under ``$HF_HOME/vinoground``, are
  written in the published format (``tests/upstream_formats.py``), each pair's caption order
  and its joined video's order drawn from a seeded generator; ``vinoground.csv`` lies beside
  them, as in the Hub repository lmms-eval downloads there.

TOMATO's import is compared with foilkit's run of the same model on the same videos, asked
lmms-eval's prompt (foilkit's TOMATO protocol asks the published one, with the frame count; the
test builds the rows and puts lmms-eval's prompt in their ``prompt`` column): the same answers
item by item, no discordant item. Vinoground has no foilkit run to pair with answer by answer:
lmms-eval asks its questions in the one order of its files and about the Hub's joined videos,
where foilkit asks both orders, about a joined video of its own, and averages. Its checks are
against lmms-eval's own record instead: the pairs each sample names, the prompts foilkit
rebuilds against the ones lmms-eval asked, and the text, video and group scores lmms-eval's own
``vinoground_aggregate_results`` computes from the same answers.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import datasets
import pytest
from references import lmms_eval_python

from foilkit.builders.tomato.answers import lmms_eval_tomato_prompt
from foilkit.cli import main
from foilkit.compare import compare_runs
from foilkit.imports import AMBIGUOUS, NO_ANSWER
from foilkit.run import RunFolder, RunResults
from foilkit.synthetic.models import tiny_model_path
from foilkit.synthetic.videos import SyntheticScene, write_video
from tests.test_imports_lmms_eval import FRAMES, MAX_NEW_TOKENS, run_lmms_eval
from tests.upstream_formats import (
    VINOGROUND_ROWS,
    vinoground_csv,
    vinoground_text_item,
    vinoground_video_item,
)

pytestmark = pytest.mark.slow

#: The published TOMATO questions the test asks: (file stem, question id); direction 0 and 1
#: share their question, options and video type.
TOMATO_QUESTIONS = (("count", "0"), ("count", "1"), ("shape&trend", "0"))
TOMATO_SHARED = (("direction", "0"), ("direction", "1"))
#: foilkit's TOMATO configs of the stems (the import names its rows by config).
TOMATO_CONFIG = {"count": "count", "direction": "direction", "shape&trend": "shape_trend"}
#: Vinoground: the pairs asked all four questions, and the number of pairs lmms-eval needs.
VINOGROUND_ASKED = 3
VINOGROUND_PAIRS = 500
SUFFIX = "\nPlease only output one English character."


def _video(path: Path, direction: str = "left") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_video(path, SyntheticScene(direction=direction), num_frames=12, fps=4)


def _split(folder: Path, config: str, split: str, rows: list[dict]) -> None:
    """``folder`` as a Hub dataset of one ``config`` with one ``split`` holding ``rows``."""
    (folder / "data").mkdir(parents=True)
    datasets.Dataset.from_list(rows).to_parquet(str(folder / "data" / f"{split}.parquet"))
    (folder / "README.md").write_text(
        f"---\nconfigs:\n- config_name: {config}\n  data_files:\n  - split: {split}\n"
        f"    path: data/{split}.parquet\n---\n"
    )


def tomato_hub(shared_data: Path, work: Path, hf_home: Path) -> list[dict]:
    """``work/lmms-eval/TOMATO`` with the questions of :data:`TOMATO_QUESTIONS` and
    :data:`TOMATO_SHARED`, their videos under ``hf_home/TOMATO``; the documents."""
    documents = []
    for number, (stem, question_id) in enumerate(TOMATO_QUESTIONS + TOMATO_SHARED):
        published = json.loads((shared_data / "tomato" / "data" / f"{stem}.json").read_text())
        record = published[question_id]
        video = f"videos/{record['demonstration_type']}/{record['key']}.mp4"
        documents.append(
            {
                "id": str(number),
                "question": record["question"],
                "options": record["options"],
                "answer": record["answer"],
                "video_path": video,
                "reason_type": stem,
                "demonstration_type": record["demonstration_type"],
            }
        )
        _video(hf_home / "TOMATO" / video, "left" if number % 2 else "right")
    _split(work / "lmms-eval" / "TOMATO", "default", "test", documents)
    return documents


def _vinoground_pairs() -> list[tuple[str, ...]]:
    """:data:`VINOGROUND_PAIRS` rows of ``vinoground.csv``: the four of
    ``tests/upstream_formats.py``, then numbered captions."""
    rows = list(VINOGROUND_ROWS)
    for i in range(len(rows), VINOGROUND_PAIRS):
        rows.append(
            (str(i), "action", "", "vid", "0", "5", f"a ball rolls then stops {i}", "vid", "5",
             "10", f"a ball stops then rolls {i}")
        )  # fmt: skip
    return rows


def vinoground_hub(
    work: Path, hf_home: Path, *, videos: bool = True
) -> tuple[list[dict], list[dict], list[dict]]:
    """``work/HanSolo9682/Vinoground`` (split ``lmmseval``) and ``hf_home/vinoground`` (the
    question files, the videos unless not ``videos``, ``vinoground.csv``); the documents and the
    two question lists (textscore, videoscore). Each pair's caption order and joined-video
    order are drawn from a seeded generator."""
    folder = hf_home / "vinoground"
    (folder / "vinoground_videos").mkdir(parents=True)
    video = _video if videos else lambda path, direction="left": None
    pairs = _vinoground_pairs()
    (folder / "vinoground.csv").write_text(vinoground_csv(pairs))
    draw = random.Random(0)
    text_items, video_items, documents = [], [], []
    shared = "vinoground_videos/shared.mp4"
    video(folder / shared)
    for pair in pairs:
        i, major, minor, pos, neg = pair[0], pair[1], pair[2], pair[6], pair[10]
        asked = int(i) < VINOGROUND_ASKED
        for side, caption in (("pos", pos), ("neg", neg)):
            first, second = (pos, neg) if draw.random() < 0.5 else (neg, pos)
            item = vinoground_text_item(
                f"{i}_{side}", first, second, "A" if first == caption else "B"
            )
            item["video_name"] = item["video_name"] if asked else shared
            text_items.append(item)
        pos_first = draw.random() < 0.5
        joined = f"vinoground_videos_concated/{i}.mp4" if asked else shared
        for side, caption in (("pos", pos), ("neg", neg)):
            gt = "A" if (side == "pos") == pos_first else "B"
            video_items.append(vinoground_video_item(f"{i}_{side}", caption, joined, gt))
        if asked:
            video(folder / f"vinoground_videos/{i}_pos.mp4", "left")
            video(folder / f"vinoground_videos/{i}_neg.mp4", "right")
            video(folder / joined, "up")
        kinds = (
            [f"{s}_{k}" for k in ("text", "video") for s in ("pos", "neg")]
            if asked
            else ["pos_text"]
        )
        for kind in kinds:
            documents.append(
                {"index": f"{i}_{kind}", "major": major, "minor": minor or None,
                 "pos_cap": pos, "neg_cap": neg}
            )  # fmt: skip
    (folder / "vinoground_videos" / "vinoground_textscore.json").write_text(json.dumps(text_items))
    (folder / "vinoground_videos_concated").mkdir(exist_ok=True)
    (folder / "vinoground_videos_concated" / "vinoground_videoscore.json").write_text(
        json.dumps(video_items)
    )
    _split(work / "HanSolo9682" / "Vinoground", "default", "lmmseval", documents)
    return documents, text_items, video_items


#: lmms-eval's Vinoground samples and results file (:func:`make_fixtures`).
VINOGROUND_FIXTURES = Path(__file__).parent / "data" / "imports" / "lmms-eval-vinoground"
MODEL_ARGS = f"dtype=float32,max_frames_num={FRAMES}"


def _model_args() -> str:
    return f"pretrained={tiny_model_path('llava-next-video')},{MODEL_ARGS}"


def make_fixtures(out: Path, shared_data: Path, root: Path) -> None:
    """lmms-eval run live (in ``root``) on ``tomato`` and ``vinoground``; ``out`` gets its
    results file and the Vinoground samples of the pairs asked all four questions."""
    tomato_hub(shared_data, root / "work", root / "hf")
    vinoground_hub(root / "work", root / "hf")
    folder = run_lmms_eval(root, "llava_hf", _model_args(), ["tomato", "vinoground"])
    out.mkdir(parents=True, exist_ok=True)
    (results,) = folder.glob("*_results.json")
    (out / results.name).write_bytes(results.read_bytes())
    path, samples = _samples(folder, "vinoground")
    asked = [
        s for s in samples if int(s["vinoground_score"]["index"].split("_")[0]) < VINOGROUND_ASKED
    ]
    _write(asked, out / path.name)


@pytest.fixture(scope="module")
def opencv(tmp_path_factory) -> None:
    """A skip where the lmms-eval virtualenv lacks OpenCV, which its ``tomato`` task imports
    (``./dev.sh`` installs ``opencv-python-headless`` there)."""
    cwd = tmp_path_factory.mktemp("opencv")
    if lmms_eval_python(["-c", "import cv2"], cwd=cwd, env={}).returncode:
        pytest.skip("the lmms-eval virtualenv has no OpenCV (cv2), which its tomato task imports")


@pytest.fixture(scope="module")
def lmms_eval_tomato(shared_data: Path, tmp_path_factory, opencv) -> tuple[Path, list[dict]]:
    """lmms-eval's output folder for the tiny LLaVA-NeXT-Video on ``tomato`` (live), and the
    documents it was given."""
    root = tmp_path_factory.mktemp("lmms-eval-tomato")
    documents = tomato_hub(shared_data, root / "work", root / "hf")
    return run_lmms_eval(root, "llava_hf", _model_args(), ["tomato"]), documents


@pytest.fixture(scope="module")
def lmms_eval_run(tmp_path_factory) -> dict:
    """lmms-eval's Vinoground samples (:data:`VINOGROUND_FIXTURES`) and the question files,
    ``vinoground.csv`` and documents its run was given (written again, without videos)."""
    root = tmp_path_factory.mktemp("lmms-eval-vinoground")
    documents, _, video_items = vinoground_hub(root / "work", root / "hf", videos=False)
    return {
        "folder": VINOGROUND_FIXTURES,
        "hf_home": root / "hf",
        "vinoground": documents,
        "videoscore": video_items,
    }


def _samples(folder: Path, task: str) -> tuple[Path, list[dict]]:
    (path,) = folder.glob(f"*_samples_{task}.jsonl")
    return path, [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write(samples: list[dict], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    return path


def _import(source: Path, benchmark: str, annotations: Path, out: Path) -> RunResults:
    argv = ["import", str(source), "--benchmark", benchmark, "--out", str(out)]
    assert main([*argv, "--annotations", str(annotations), "--n-resamples", "20"]) == 0
    return RunResults.load(out)


def test_tomato_samples_find_their_rows_by_question_options_and_video_type(
    lmms_eval_tomato, shared_data: Path, tmp_path: Path
):
    """Each sample of lmms-eval's ``tomato`` names its row by its reasoning and video type
    (``tomato_score``) and the question and options its prompt shows; the two questions only
    their videos tell apart fail as ambiguous, not guessed; the prompt foilkit rebuilds is the
    one lmms-eval asked; every other row is counted as unanswered."""
    folder, documents = lmms_eval_tomato
    path, samples = _samples(folder, "tomato")
    assert len(samples) == len(documents)
    for sample in samples:
        assert "doc" not in sample and "arguments" not in sample
        assert {"question_id", "reason_type", "demonstration_type"} <= set(sample["tomato_score"])
    out = tmp_path / "run"
    results = _import(path, "tomato", shared_data / "tomato", out)
    entry = results.configs["all"]
    assert entry.score.adapter["prompts_differ"] == 0
    assert entry.score.adapter["parser"] == "tomato"
    unique, shared = len(TOMATO_QUESTIONS), len(TOMATO_SHARED)
    assert entry.coverage.scored == unique
    assert entry.coverage.causes == {AMBIGUOUS: shared, NO_ANSWER: entry.num_rows - unique - shared}
    rows = RunFolder(out).load_scores("all").to_pandas().set_index("id")
    by_prompt = {s["input"]: s["filtered_resps"] for s in samples}
    for stem, question_id in TOMATO_QUESTIONS:
        row = rows.loc[f"{TOMATO_CONFIG[stem]}-{question_id}"]
        asked = lmms_eval_tomato_prompt(row.question, list(row.options))
        assert row.imported_prompt == asked and not isinstance(row.error, str)
        assert list(row.answers) == [by_prompt[asked]]  # lmms-eval's answer, as it wrote it
    for stem, question_id in TOMATO_SHARED:
        assert rows.loc[f"{TOMATO_CONFIG[stem]}-{question_id}"].error == AMBIGUOUS


@pytest.fixture(scope="module")
def foilkit_tomato(lmms_eval_tomato, shared_data: Path, tmp_path_factory) -> Path:
    """foilkit's run of the same tiny model on the same videos, asked lmms-eval's prompt
    (foilkit's TOMATO protocol asks the published one): ``foilkit build`` of the questions with
    a video, its ``prompt`` column replaced by lmms-eval's (``lmms_eval_tomato_prompt``), run
    with ``--dataset``, greedy, 8 frames by linspace (as ``llava_hf`` decodes and samples)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    videos = lmms_eval_tomato[0].parents[1] / "hf" / "TOMATO" / "videos"
    root = tmp_path_factory.mktemp("foilkit-tomato")
    built, out = root / "built", root / "run"
    argv = ["build", "tomato", "--config", "all", "--out", str(built), "--on-missing", "skip"]
    argv += ["--annotations", str(shared_data / "tomato"), "--video-root", str(videos)]
    assert main(argv) == 0
    for path in built.rglob("*.parquet"):
        table = pq.read_table(path)
        asked = [
            lmms_eval_tomato_prompt(question, options)
            for question, options in zip(
                table["question"].to_pylist(), table["options"].to_pylist(), strict=True
            )
        ]
        column = table.schema.get_field_index("prompt")
        pq.write_table(table.set_column(column, "prompt", pa.array(asked)), path)
    argv = ["evaluate", "--benchmark", "tomato", "--config", "all", "--dataset", str(built)]
    argv += ["--model", str(tiny_model_path("llava-next-video")), "--video-root", str(videos)]
    argv += ["--on-missing", "skip", "--min-coverage", "0", "--mode", "generate"]
    argv += ["--temperature", "0", "--max-new-tokens", str(MAX_NEW_TOKENS)]
    argv += ["--num-frames", str(FRAMES), "--sampling", "uniform", "--dtype", "float32"]
    argv += ["--out", str(out), "--n-resamples", "20", "--num-workers", "0", "--no-progress"]
    assert main(argv) == 0
    return out


def test_tomato_imports_as_the_answers_foilkit_gives_the_same_model(
    lmms_eval_tomato, foilkit_tomato: Path, shared_data: Path, tmp_path: Path
):
    """Asked lmms-eval's prompt on the same frames, foilkit's run of the tiny model gives the
    answers lmms-eval logged, item by item, on every row the import places, and ``foilkit
    compare`` finds no discordant item; the two rows the import cannot place are left out."""
    path, _ = _samples(lmms_eval_tomato[0], "tomato")
    imported = tmp_path / "imported"
    _import(path, "tomato", shared_data / "tomato", imported)
    rows = RunFolder(imported).load_scores("all").to_pandas().set_index("id")
    mine = RunFolder(foilkit_tomato).load_scores("all").to_pandas().set_index("id")
    assert len(mine) == len(TOMATO_QUESTIONS + TOMATO_SHARED) and not mine.error.notna().any()
    placed = [f"{TOMATO_CONFIG[stem]}-{question_id}" for stem, question_id in TOMATO_QUESTIONS]
    for row_id in placed:
        assert mine.loc[row_id, "prompt"] == rows.loc[row_id, "imported_prompt"], row_id
        assert list(rows.loc[row_id, "answers"]) == list(mine.loc[row_id, "answers"]), row_id
    tests = compare_runs(foilkit_tomato, imported, n_resamples=20)
    mcnemar = tests["all"]["multiple_choice_accuracy"]["all"]["mcnemar"]
    assert (mcnemar["a_only"], mcnemar["b_only"]) == (0, 0)


def test_tomato_prompt_is_lmms_evals_on_every_published_question(
    shared_data: Path, tmp_path: Path, opencv
):
    """foilkit's port of lmms-eval's TOMATO prompt (``lmms_eval_tomato_prompt``) is what
    lmms-eval's ``construct_prompt`` writes, run by lmms-eval's code, on all 1,484 questions."""
    files = sorted((shared_data / "tomato" / "data").glob("*.json"))
    script = (
        "import json, sys\n"
        "from lmms_eval.tasks.tomato.utils import construct_prompt\n"
        "print(json.dumps([construct_prompt(r['question'], r['options'])[0]"
        " for path in sys.argv[1:] for r in json.load(open(path)).values()]))\n"
    )
    done = lmms_eval_python(
        ["-c", script, *map(str, files)], cwd=tmp_path, env={"HF_HOME": str(tmp_path)}
    )
    assert done.returncode == 0, done.stderr[-4000:]
    theirs = json.loads(done.stdout.strip().splitlines()[-1])
    mine = [
        lmms_eval_tomato_prompt(r["question"], r["options"])
        for path in files
        for r in json.loads(path.read_text()).values()
    ]
    assert len(mine) == 1484 and mine == theirs


def _vinoground_import(lmms_eval_run, samples: list[dict], tmp_path: Path) -> RunResults:
    path, _ = _samples(lmms_eval_run["folder"], "vinoground")
    source = _write(samples, tmp_path / "samples" / path.name)
    return _import(source, "vinoground", lmms_eval_run["hf_home"] / "vinoground", tmp_path / "run")


def _scores(entry) -> list[float]:
    """An imported Vinoground config's text, video and group score as lmms-eval reports them:
    % of its 500 pairs, a pair without all four answers counting as wrong."""
    overall = entry.metrics["winoground_score"].overall
    scores = ("text_score", "video_score", "group_score")
    return [overall[score] * entry.coverage.scored / VINOGROUND_PAIRS * 100 for score in scores]


def _filler(pair: int) -> dict:
    """The ``vinoground_score`` record lmms-eval logged for pair ``pair`` (>= 3) of the run,
    asked its text question about the positive video only (the samples kept leave these
    out): its aggregate needs one record of every pair, and one answer completes no score."""
    categories = ["all", "action", *(["interaction"] if pair == 3 else [])]
    return {"index": f"{pair}_pos", "categories": categories, "question_type": "text", "pred": "x"}


def _lmms_evals_scores(lmms_eval_run, answered: list[list[dict]], tmp_path: Path) -> list:
    """lmms-eval's own ``vinoground_aggregate_results`` on each list of samples' records, their
    ``pred`` the samples' answers: text, video and group score (% of the 500 pairs), per list."""
    records = [
        [{**s["vinoground_score"], "pred": s["filtered_resps"]} for s in samples]
        + [_filler(pair) for pair in range(VINOGROUND_ASKED, VINOGROUND_PAIRS)]
        for samples in answered
    ]
    (tmp_path / "records.json").write_text(json.dumps(records))
    script = (
        "import json, sys\n"
        "from lmms_eval.tasks.vinoground.utils import vinoground_aggregate_results\n"
        "print(json.dumps([[float(x) for x in vinoground_aggregate_results(records)]"
        " for records in json.load(open(sys.argv[1]))]))\n"
    )
    env = {"HF_HOME": str(lmms_eval_run["hf_home"])}
    done = lmms_eval_python(["-c", script, str(tmp_path / "records.json")], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_vinoground_samples_fill_each_pairs_four_questions(lmms_eval_run, tmp_path: Path):
    """lmms-eval's ``vinoground`` samples name their pair and question by ``index`` and
    ``question_type`` (its ``vinoground_score`` record): the pairs asked all four questions are
    scored, with the prompts foilkit asks in the same order, the others counted as unanswered;
    the text, video and group scores are those lmms-eval computed (its results file), which
    counts a pair short of an answer as wrong."""
    path, samples = _samples(lmms_eval_run["folder"], "vinoground")
    asked = [d for d in lmms_eval_run["vinoground"] if int(d["index"].split("_")[0]) < 3]
    assert len(samples) == len(asked) == 4 * VINOGROUND_ASKED
    for sample in samples:
        assert "doc" not in sample and sample["input"].endswith(SUFFIX)
        assert {"index", "question_type", "categories"} <= set(sample["vinoground_score"])
    results = _vinoground_import(lmms_eval_run, samples, tmp_path)
    entry = results.configs["all"]
    assert (entry.coverage.scored, entry.num_rows) == (VINOGROUND_ASKED, VINOGROUND_PAIRS)
    assert entry.coverage.causes == {NO_ANSWER: VINOGROUND_PAIRS - VINOGROUND_ASKED}
    assert entry.score.adapter["prompts_differ"] == 0
    (written,) = path.parent.glob("*_results.json")
    theirs = json.loads(written.read_text())["results"]["vinoground"]["vinoground_score,none"]
    assert _scores(entry) == pytest.approx(theirs)


def _answered(lmms_eval_run, samples: list[dict], answers: str) -> list[dict]:
    """``samples`` with each answer replaced: the GT letter of its question (``truth``), the
    other letter, always ``A``, or drawn at random among letters, lower case and words."""
    truth = {item["idx"]: item["GT"] for item in lmms_eval_run["videoscore"]}
    draw = random.Random(1)
    answered = []
    for sample in samples:
        record = sample["vinoground_score"]
        kind, idx = record["question_type"], record["index"]
        gt = truth[idx]
        if kind == "text":  # the letter its prompt gives the video's own caption
            shown = [line[3:] for line in sample["input"].splitlines()[1:3]]
            pair = next(d for d in lmms_eval_run["vinoground"] if d["index"].startswith(idx))
            gt = "AB"[shown.index(pair["pos_cap"] if idx.endswith("pos") else pair["neg_cap"])]
        answer = {
            "truth": gt,
            "other": {"A": "B", "B": "A"}[gt],
            "A": "A",
            "drawn": draw.choice(["A", "B", "a", "b", "Both", "A video"]),
        }[answers]
        answered.append({**sample, "filtered_resps": answer})
    return answered


def test_vinoground_scores_are_lmms_evals_for_any_answers(lmms_eval_run, tmp_path: Path):
    """lmms-eval's own samples with their answers replaced (:func:`_answered`): the import's
    text, video and group scores over the answered pairs are those lmms-eval's own
    ``vinoground_aggregate_results`` computes over its 500, which reads the GT from the question
    files: so each answer's letter is read as lmms-eval reads it, for each order of the
    captions and of the joined video."""
    _, samples = _samples(lmms_eval_run["folder"], "vinoground")
    kinds = ("truth", "other", "A", "drawn")
    answered = [_answered(lmms_eval_run, samples, kind) for kind in kinds]
    theirs = _lmms_evals_scores(lmms_eval_run, answered, tmp_path)
    for kind, these, expected in zip(kinds, answered, theirs, strict=True):
        mine = _scores(_vinoground_import(lmms_eval_run, these, tmp_path / kind).configs["all"])
        assert mine == pytest.approx(expected), kind
    full = VINOGROUND_ASKED / VINOGROUND_PAIRS * 100
    assert theirs[0] == pytest.approx([full] * 3) and theirs[1] == [0.0, 0.0, 0.0]


if __name__ == "__main__":
    import sys
    import tempfile

    from tests.conftest import SHARED_DATA

    with tempfile.TemporaryDirectory() as scratch:
        make_fixtures(Path(sys.argv[1]), SHARED_DATA, Path(scratch))
