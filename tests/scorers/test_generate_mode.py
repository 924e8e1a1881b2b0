"""``generate`` mode: answers in every option order are read by the parser into each text's share;
sampling is repeatable for a seed, resumable, and the same in one process or two."""

from __future__ import annotations

import json

import pytest
import torch
from answering_model import assert_a_batch_reads_each_question_on_its_own_view
from launch import accelerate_launch, launched_score, run_to_success

import foilkit
from foilkit.builders.vitatecs.answers import choice_question
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.api import ScoreOptions
from foilkit.scorers.generate import generate_requests, read_answers
from foilkit.scorers.parsers import get_parser
from foilkit.scorers.requests import Answer, Decoding, Generations, TextsRequest
from foilkit.synthetic.videos import SyntheticScene, render_frames

TEXTS = ("a red square moves left", "a red square moves right")
#: sampled at temperature 1 so the steered model's answers vary; short answers
SAMPLED = {"mode": "generate", "temperature": 1.0, "num_samples": 2, "max_new_tokens": 4}
RUN = {"num_workers": 0, "progress": False, "use_cache": False}


@pytest.fixture(scope="module")
def answering(answering_model) -> str:
    return answering_model


@pytest.fixture(scope="module")
def frames() -> torch.Tensor:
    scene = SyntheticScene(direction="left")
    return torch.from_numpy(render_frames(scene, num_frames=4)).permute(0, 3, 1, 2).contiguous()


def test_answers_become_each_texts_share_in_every_order():
    texts = ("caption", "foil one", "foil two")
    # order 0 shows (caption, foil one, foil two); order 1 (foil one, foil two, caption); ...
    generations = [
        Generations(("A", "(C)")),  # caption; foil two
        Generations(("C", "")),  # caption; refused
        Generations(("I cannot tell", "b")),  # unparseable; B (case matters to lmms-eval's rules)
    ]
    scored = read_answers(texts, generations, get_parser("vitatecs"))
    assert scored.scores == (2 / 6, 0.0, 1 / 6)
    assert scored.details["order_0"] == (0.5, 0.0, 0.5)
    assert scored.details["sample_0"] == (2 / 3, 0.0, 0.0)
    assert scored.details["sample_1"] == (0.0, 0.0, 1 / 3)
    assert [(a.outcome, a.choice, a.order, a.sample) for a in scored.answers] == [
        ("parsed", 0, 0, 0),
        ("parsed", 2, 0, 1),
        ("parsed", 0, 1, 0),
        ("refused", None, 1, 1),
        ("unparseable", None, 2, 0),
        ("unparseable", None, 2, 1),
    ]
    assert scored.answers[0] == Answer("A", "parsed", 0, 0, 0)


def test_each_order_is_asked_with_the_papers_prompt(frames):
    asked = generate_requests(TextsRequest(TEXTS, frames), "vitatecs", Decoding())
    assert [request.messages[-1]["content"][1]["text"] for request in asked] == [
        choice_question(TEXTS),
        choice_question(TEXTS[::-1]),
    ]
    assert (
        asked[0]
        .messages[0]["content"][0]["text"]
        .startswith("You are given a short video clip and two sentences.")
    )
    assert asked[0].frames is frames and asked[0].sample_seed() != asked[1].sample_seed()
    other_video = generate_requests(TextsRequest(TEXTS, frames.flip(0)), "vitatecs", Decoding())
    assert other_video[0].sample_seed() != asked[0].sample_seed()


def test_sampled_answers_repeat_for_a_seed_and_differ_between_seeds(answering, frames):
    requests = [TextsRequest(TEXTS, frames), TextsRequest(TEXTS[::-1], frames)]

    def answers(seed: int) -> list[str]:
        adapter = load_adapter(answering, device="cpu", seed=seed, **{**SAMPLED, "num_samples": 4})
        return [a.text for scored in adapter.score(requests) for a in scored.answers]

    first = answers(0)
    assert first == answers(0)
    assert first != answers(1)
    assert {"A", "B"} <= set(first)  # the steered model answers with letters


@pytest.mark.parametrize(
    "options, message",
    [
        ({"mode": "generate", "num_samples": 3}, "greedy decoding gives the same answer"),
        ({"mode": "generate", "temperature": -1.0}, "temperature must be >= 0"),
        ({"mode": "generate", "top_p": 0.0}, r"top_p must be in \(0, 1\]"),
        ({"mode": "generate", "parser": "vitatec"}, "unknown answer parser"),
        ({"mode": "choice", "temperature": 0.2}, "applies to generate mode only"),
        ({"mode": "generate", "generate_batch_size": 0}, "generate_batch_size must be a whole"),
        ({"mode": "choice", "generate_batch_size": 4}, "applies to generate mode only"),
        ({"mode": "generate", "batch_across_views": "no"}, "batch_across_views must be True or"),
        ({"mode": "likelihood", "batch_across_views": False}, "applies to generate mode only"),
    ],
)
def test_bad_decoding_settings_fail_before_any_answer(answering, options, message):
    with pytest.raises(ValueError, match=message):
        load_adapter(answering, device="cpu", **options)


def test_vitatecs_paper_protocol_samples_the_table_11_prompt_and_choice_stays_available():
    paper = ScoreOptions(benchmark="vitatecs").resolve("video-llm", _VIDEO_LLM_SETTINGS)
    assert paper.settings["mode"] == "generate"
    assert paper.settings["temperature"] == 0.2 and paper.settings["parser"] == "vitatecs"
    assert "probabilities" not in paper.notes  # the old departure note is gone
    choice = ScoreOptions(benchmark="vitatecs", mode="choice").resolve(
        "video-llm", _VIDEO_LLM_SETTINGS
    )
    assert choice.settings["mode"] == "choice"
    assert not {"temperature", "parser", "num_samples"} & set(choice.settings)


def _video_llm_settings() -> tuple[str, ...]:
    from foilkit.scorers.adapters import accepted_settings, adapter_class

    return accepted_settings(adapter_class("x", adapter="video-llm"))


_VIDEO_LLM_SETTINGS = _video_llm_settings()


def _rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


#: the CLI flags of SAMPLED and RUN (batches of one video, no decoding threads, no cache)
FLAGS = ["--mode", "generate", "--temperature", "1", "--num-samples", "2"]
FLAGS += ["--max-new-tokens", "4", "--frames", "4"]
OPTIONS = {**RUN, **SAMPLED, "batch_size": 1, "num_frames": 4}


@pytest.fixture(scope="module")
def whole(answering, saved_benchmark, tmp_path_factory):
    """A generate run of the saved benchmark in this process, from start to end: its folder."""
    out = tmp_path_factory.mktemp("generate") / "whole"
    foilkit.score(answering, str(saved_benchmark), out_dir=str(out), **OPTIONS)
    return out


def test_answers_are_kept_per_row_and_counted_in_the_run_record(whole, benchmark):
    run = json.loads((whole / "run.json").read_text())
    assert run["adapter"]["decoding"] == {
        "strategy": "sample",
        "temperature": 1.0,
        "top_p": 1.0,
        "num_samples": 2,
        "max_new_tokens": 4,
        "seed": 0,
    }
    assert run["adapter"]["parser"] == "vitatecs" and run["mode"] == "generate"
    assert run["adapter"]["batched_decoding"] == {
        "batching": "padded",
        "max_questions": 32,
        "memory_share": 0.25,
        "across_views": "padded",
        "sampled": "one request at a time, its samples drawn from its own seed",
    }
    counts = run["answers"]
    # every row: 2 text groups (caption and proficiency texts) x 2 orders x 2 samples
    assert sum(counts.values()) == len(benchmark) * 8 and counts["parsed"] > 0
    for row in _rows(whole / "scores.jsonl"):
        assert len(row["answers"]) == len(row["answer_outcomes"]) == 4
        assert row["caption_score"] == sum(c == 0 for c in row["answer_choices"]) / 4
        assert row["proficiency_answers"] and row["caption_sample_1"] is not None


def test_a_killed_generate_run_resumes_to_the_same_file(
    answering, saved_benchmark, whole, tmp_path, killed_at_the_third_batch
):
    dataset, killed = str(saved_benchmark), str(tmp_path / "killed")
    with killed_at_the_third_batch():
        foilkit.score(answering, dataset, out_dir=killed, **OPTIONS)
    with pytest.raises(ValueError, match="temperature"):  # other decoding: another run
        foilkit.score(
            answering, dataset, out_dir=killed, resume=True, **{**OPTIONS, "temperature": 0.5}
        )
    foilkit.score(answering, dataset, out_dir=killed, resume=True, **OPTIONS)
    assert (tmp_path / "killed/scores.jsonl").read_bytes() == (whole / "scores.jsonl").read_bytes()
    resumed = json.loads((tmp_path / "killed/run.json").read_text())
    assert 0 < resumed["throughput"]["resumed_rows"] < resumed["dataset"]["num_rows"]
    # the resumed rows' answers are counted too
    assert resumed["answers"] == json.loads((whole / "run.json").read_text())["answers"]


@pytest.mark.slow
def test_two_processes_generate_the_answers_of_one(answering, saved_benchmark, whole, tmp_path):
    args = launched_score(answering, saved_benchmark, tmp_path / "two", 1, 0, *FLAGS)
    run_to_success([*accelerate_launch(2), *args])
    assert json.loads((tmp_path / "two/run.json").read_text())["hardware"]["num_processes"] == 2
    assert (tmp_path / "two/scores.jsonl").read_bytes() == (whole / "scores.jsonl").read_bytes()


def test_a_retrieval_matrix_is_refused_in_generate_mode(answering, benchmark):
    with pytest.raises(ValueError, match="'generate' compares texts as the options"):
        foilkit.score_matrix(answering, benchmark, mode="generate", **RUN)


@pytest.mark.parametrize(
    "flags, names",
    [
        (["--num-samples", "3"], "--temperature 0.2"),
        (["--temperature", "0.5", "--parser", "vitatec"], "(--parser)"),
    ],
)
def test_bad_generation_flags_are_one_line_before_any_run_folder(
    flags, names, answering, saved_benchmark, tmp_path, capsys
):
    from foilkit.cli import main

    out = tmp_path / "run"
    argv = ["score", "--model", answering, "--dataset", str(saved_benchmark), "--out", str(out)]
    assert main([*argv, "--mode", "generate", "--no-progress", *flags]) == 2
    error = capsys.readouterr().err.strip()
    assert names in error and "\n" not in error and not out.exists()


# --- each view's prefix once for all its questions ---------------------------------------------

#: greedy answers of a few tokens, in batches that hold several views
GREEDY = {**RUN, "mode": "generate", "max_new_tokens": 4, "num_frames": 4, "batch_size": 4}


def _counted_prefixes(monkeypatch) -> list[str]:
    """The prefixes the in-process backend encodes from now on (a forward of the video each)."""
    from foilkit.scorers.adapters.video_llm import VideoLLMAdapter

    encoded: list[str] = []
    original = VideoLLMAdapter._encode_prefix

    def counting(self, request, prefix):
        encoded.append(prefix)
        return original(self, request, prefix)

    monkeypatch.setattr(VideoLLMAdapter, "_encode_prefix", counting)
    return encoded


def _one_at_a_time(monkeypatch) -> None:
    """Today's generation for each question: ``model.generate`` on its whole prompt."""
    from foilkit.scorers.adapters.video_llm import VideoLLMAdapter

    monkeypatch.setattr(VideoLLMAdapter, "_generation_pair", lambda self, messages, prompt: None)


def test_a_runs_prefix_forwards_are_its_views_and_its_answers_todays(
    answering, benchmark, tmp_path, monkeypatch
):
    """A generate run encodes each view's prefix once for all its questions (both text groups,
    both option orders), and writes the answers and scores of one ``model.generate`` per
    question on the whole prompt."""
    encoded = _counted_prefixes(monkeypatch)
    foilkit.score(answering, benchmark, out_dir=str(tmp_path / "reused"), **GREEDY)
    run = json.loads((tmp_path / "reused/run.json").read_text())
    assert len(encoded) == run["throughput"]["views"] < 4 * len(benchmark)
    assert run["throughput"]["prefix_forwards"] == run["throughput"]["views"]  # as recorded
    assert run["throughput"]["decode_batches"] > 0  # a view's questions decoded together
    assert run["throughput"]["cross_view_batches"] > 0  # and several views' in one batch
    # recorded, but no part of what a resumed run must match: it changes no answer
    assert run["adapter"]["batched_decoding"]["batching"] == "padded"
    assert "batched_decoding" not in run["identity"] and run["identity"]["mode"] == "generate"
    _one_at_a_time(monkeypatch)
    foilkit.score(answering, benchmark, out_dir=str(tmp_path / "whole"), **GREEDY)
    assert len(encoded) == run["throughput"]["views"]  # no prefix forward in today's path
    whole = json.loads((tmp_path / "whole/run.json").read_text())
    assert whole["throughput"]["prefix_forwards"] == whole["throughput"]["decode_batches"] == 0
    assert whole["throughput"]["cross_view_batches"] == 0
    reused = (tmp_path / "reused/scores.jsonl").read_bytes()
    assert reused == (tmp_path / "whole/scores.jsonl").read_bytes()


@pytest.mark.parametrize(
    "decoding",
    [Decoding(max_new_tokens=6), Decoding(temperature=1.0, num_samples=3, max_new_tokens=4)],
    ids=["greedy", "sampled"],
)
def test_own_questions_on_a_view_share_its_prefix_and_answer_as_today(
    answering, frames, decoding, monkeypatch
):
    """TempCompass-shaped requests (several questions of their own about each view, the views
    interleaved): one prefix forward per view; greedy answers, and sampled ones drawn from each
    request's seed, are those of ``model.generate`` on each whole prompt."""
    adapter = load_adapter(answering, mode="generate", device="cpu")
    views = [frames, frames.flip(0)]
    asked = [
        TextsRequest(
            TEXTS,
            views[number % 2],
            question=f"Question {number}: which is right?\nA. {TEXTS[0]}\nB. {TEXTS[1]}",
            answers=("A", "B"),
        )
        for number in range(6)
    ]
    requests = [one for request in asked for one in generate_requests(request, "", decoding)]
    encoded = _counted_prefixes(monkeypatch)
    reused = adapter.generate(requests)
    assert len(encoded) == len(views) and len(set(encoded)) == 1  # one prefix text, two videos
    today = [adapter._generate_whole(r, adapter.chat_prompt(r.messages)) for r in requests]
    assert reused == today
    assert all(len(generated.texts) == decoding.num_samples for generated in reused)
    # the greedy questions of both views in one batch; a sampled one alone, from its own seed
    assert adapter.decode_batches == adapter.cross_view_batches == int(decoding.greedy)


# --- the greedy questions about a view decoded in batches -----------------------------------------


def _own_questions(frames: torch.Tensor, count: int, decoding: Decoding) -> list:
    """``count`` greedy questions of their own about one view, each of another length."""
    options = f"A. {TEXTS[0]}\nB. {TEXTS[1]}"
    asked = [
        TextsRequest(
            TEXTS,
            frames,
            question=f"Question {n}: which is right?{' Look again.' * n}\n{options}",
            answers=("A", "B"),
        )
        for n in range(count)
    ]
    return [one for request in asked for one in generate_requests(request, "", decoding)]


@pytest.mark.parametrize("size, batches", [(None, 1), (4, 2), (2, 3), (1, 0)])
def test_a_views_greedy_questions_decode_in_batches_of_at_most_the_size_as_alone(
    answering, frames, size, batches
):
    """Six questions of six lengths about one view: decoded in batches of at most
    ``generate_batch_size`` (default: all six in one), left-padded, the answers that end first
    leaving the batch, each answer the one ``model.generate`` gives on its whole prompt."""
    decoding = Decoding(max_new_tokens=6)
    adapter = load_adapter(answering, mode="generate", device="cpu", generate_batch_size=size)
    requests = _own_questions(frames, 6, decoding)
    answers = adapter.generate(requests)
    assert adapter.prefix_forwards == 1
    assert adapter.decode_batches == batches
    assert adapter.batched_questions == (6 if batches else 0)
    assert answers == [
        adapter._generate_whole(r, adapter.chat_prompt(r.messages)) for r in requests
    ]
    assert len({generated.num_tokens for generated in answers}) > 1  # some ended sooner
    expected = {"batching": "padded", "max_questions": size or 32}
    expected |= {"memory_share": 0.25} if size is None else {}
    if size == 1:
        expected = {"batching": "off", "why": "generate_batch_size=1"}
    record = adapter.describe()["batched_decoding"]
    assert {key: record[key] for key in expected} == expected


@pytest.mark.parametrize("free, rows", [(0, 1), (10**15, 32), (None, 32)])
def test_the_default_batch_is_bounded_by_the_devices_free_memory(
    answering, frames, monkeypatch, free, rows
):
    """Without ``generate_batch_size``, a batch holds as many questions as their copies of the
    view's cache fit in a quarter of the free memory, at most 32: none beyond one where no
    memory is free (one question at a time, the same answers); 32 where it is unknown."""
    from foilkit.scorers.adapters import video_llm

    monkeypatch.setattr(video_llm, "free_memory", lambda device: free)
    decoding = Decoding(max_new_tokens=6)
    adapter = load_adapter(answering, mode="generate", device="cpu")
    requests = _own_questions(frames, 3, decoding)
    with torch.inference_mode():
        prefix, ids = adapter._split(requests[0], adapter.chat_prompt(requests[0].messages))
        cache, last = adapter._encode_prefix(requests[0], prefix)
        assert adapter._batch_rows(cache, last, len(ids), decoding) == rows
    answers = adapter.generate(requests)
    assert adapter.decode_batches == (rows > 1)
    assert answers == [
        adapter._generate_whole(r, adapter.chat_prompt(r.messages)) for r in requests
    ]


# --- the greedy questions about several views decoded in one batch --------------------------------


def _view(direction: str, count: int) -> torch.Tensor:
    scene = SyntheticScene(direction=direction)
    return torch.from_numpy(render_frames(scene, num_frames=count)).permute(0, 3, 1, 2).contiguous()


@pytest.mark.parametrize(
    "across, size, batches, across_batches",
    [(True, None, 1, 1), (True, 2, 4, 1), (False, None, 3, 0)],
    ids=["one-batch", "batches-of-two", "per-view"],
)
def test_greedy_questions_about_several_views_decode_together_each_on_its_view(
    answering, across, size, batches, across_batches
):
    """Three questions about each of three views (4 frames, 2 frames of another video: a
    shorter prefix, and the first reversed), the views interleaved: each view's prefix encoded
    once, the questions decoded in batches holding several views' questions (each row on its
    own view's cache, the shorter prefixes padded; at most ``generate_batch_size`` a batch),
    or of one view at a time with ``batch_across_views=False``; every answer is the one
    ``model.generate`` gives on its whole prompt, and the views' answers to one question
    differ (so a row decoded on another view's cache would answer wrongly)."""
    decoding = Decoding(max_new_tokens=6)
    adapter = load_adapter(
        answering,
        mode="generate",
        device="cpu",
        generate_batch_size=size,
        batch_across_views=across,
    )
    views = [_view("left", 4), _view("down", 2), _view("left", 4).flip(0)]
    by_view = [_own_questions(view, 3, decoding) for view in views]
    requests = [request for asked in zip(*by_view) for request in asked]  # interleaved
    answers = adapter.generate(requests)
    assert adapter.prefix_forwards == len(views)
    assert adapter.decode_batches == batches
    assert adapter.cross_view_batches == across_batches
    assert answers == [
        adapter._generate_whole(r, adapter.chat_prompt(r.messages)) for r in requests
    ]
    # the first two views' answers, question by question: not all the same
    assert any(a != b for a, b in zip(answers[0::3], answers[1::3], strict=True))
    # and each row's first logits in one batch of all nine are its own view's
    assert_a_batch_reads_each_question_on_its_own_view(adapter, requests)
    record = adapter.describe()["batched_decoding"]
    expected = {"across_views": "padded"}
    if not across:
        expected = {"across_views": "off", "across_views_why": "batch_across_views=False"}
    assert {key: record.get(key) for key in expected} == expected
