"""Scoring protocols: resolution, overrides, validity of every declared protocol, and their
record."""

from __future__ import annotations

import json

import pytest

from foilkit.scorers.adapters import ADAPTERS, accepted_settings, list_adapters
from foilkit.scorers.api import ScoreOptions, score
from foilkit.scorers.job import sampling_policy
from foilkit.scorers.protocols import (
    MODEL_SETTINGS,
    UNIFORM,
    describe_protocol,
    paper_table,
    resolve_protocol,
)
from foilkit.scorers.requests import DECODING_SETTINGS, Decoding

list_adapters()  # import every adapter module, so ADAPTERS is complete
PAPER = paper_table()  # every benchmark's paper protocols, declared in its folder


def _accepted(family: str) -> tuple[str, ...]:
    return accepted_settings(ADAPTERS[family])


@pytest.mark.parametrize(("benchmark", "family"), sorted(PAPER))
def test_every_paper_protocol_is_valid(benchmark, family):
    """Each declared protocol names a reference or says why none, builds a sampling policy (with
    the frame count a model gives where the protocol leaves it to the model), and sets only
    options its family's adapter takes."""
    protocol = PAPER[benchmark, family]
    assert protocol.reference or "published no" in protocol.notes
    resolved = resolve_protocol(
        "paper", benchmark, family, accepted=_accepted(family), native={"num_frames": 16}
    )
    assert resolved.settings["num_frames"] == (protocol.num_frames or 16)
    sampling_policy(resolved, seed=0)
    model_settings = {k for k in protocol.settings() if k in MODEL_SETTINGS}
    assert model_settings <= set(_accepted(family)), (benchmark, family, model_settings)


def test_frames_left_to_a_model_that_names_none_must_be_given():
    resolved = resolve_protocol("paper", "rtime", "pe-video", accepted=_accepted("pe-video"))
    assert "num_frames" not in resolved.settings and "from_model" not in resolved.to_record()
    with pytest.raises(ValueError, match=r"frame count of pe-video models .* \(--num-frames N\)"):
        sampling_policy(resolved, seed=0)
    given = resolve_protocol("paper", "rtime", "pe-video", {"num_frames": 5}, accepted=())
    assert sampling_policy(given, seed=0).num_frames == 5


@pytest.mark.parametrize("family", sorted(UNIFORM))
def test_uniform_is_one_protocol_across_benchmarks(family):
    settings = {
        benchmark: resolve_protocol(
            "uniform", benchmark, family, accepted=_accepted(family)
        ).settings
        for benchmark in ("vitatecs", "vilma", "rtime", "contrast_sets", None)
    }
    assert len({json.dumps(dict(s), sort_keys=True) for s in settings.values()}) == 1


def test_an_explicit_option_overrides_one_setting_and_is_recorded():
    resolved = resolve_protocol(
        "paper", "vilma", "dual-encoder", {"num_frames": 4, "pooling": None}, accepted=("pooling",)
    )
    paper = PAPER["vilma", "dual-encoder"]
    assert resolved.settings["num_frames"] == 4
    assert resolved.settings["pooling"] == paper.pooling  # None means "not given"
    assert resolved.overrides == {"num_frames": {"protocol": paper.num_frames, "given": 4}}
    assert resolved.to_record()["overrides"]["num_frames"]["given"] == 4


def test_an_option_equal_to_the_protocol_is_no_override():
    paper = PAPER["vilma", "dual-encoder"]
    resolved = resolve_protocol(
        "paper", "vilma", "dual-encoder", {"num_frames": paper.num_frames}, accepted=("pooling",)
    )
    assert resolved.overrides == {}


def test_another_sampling_policy_drops_the_protocols_policy_parameters():
    paper = PAPER["vitatecs", "dual-encoder"]
    assert paper.target_fps is not None  # 1 fps in the reference
    resolved = resolve_protocol(
        "paper", "vitatecs", "dual-encoder", {"sampling": "uniform"}, accepted=("pooling",)
    )
    assert resolved.settings["sampling"] == "uniform"
    assert "target_fps" not in resolved.settings and "max_frames" not in resolved.settings


def test_an_option_the_family_does_not_take_is_an_error():
    with pytest.raises(ValueError, match="video-llm adapter takes no 'pooling' option"):
        resolve_protocol(
            "paper", "vitatecs", "video-llm", {"pooling": "mean"}, accepted=("mode", "reduction")
        )


# Each benchmark's reference decoding, as its official inference code calls model.generate:
REFERENCE_DECODING = {
    # llyx97/TempCompass@e1b4631 run_video_llava/inference_dataset.py (Video-LLaVA):
    # do_sample=True, temperature=0.1, max_new_tokens=128, no top_p (transformers' 1.0)
    "tempcompass": Decoding(temperature=0.1, top_p=1.0, num_samples=1, max_new_tokens=128),
    # yale-nlp/TOMATO@fe2025f src/generate_lib/qwen.py, llava_next.py, ...: do_sample=False,
    # max_new_tokens=MAX_TOKENS; src/generate_lib/constant.py: MAX_TOKENS = 1024
    "tomato": Decoding(temperature=0.0, num_samples=1, max_new_tokens=1024),
    # Vinoground/Vinoground@1543a2a eval/llava-onevision.py: do_sample=False, temperature=0,
    # max_new_tokens=4096
    "vinoground": Decoding(temperature=0.0, num_samples=1, max_new_tokens=4096),
    # VITATECS paper, Table 11: sampled at temperature 0.2 (no code published; length unsaid)
    "vitatecs": Decoding(temperature=0.2, num_samples=1),
}


@pytest.mark.parametrize("benchmark", sorted(REFERENCE_DECODING))
def test_paper_generate_mode_decodes_as_the_reference(benchmark):
    """``--mode generate`` under ``paper`` decodes as the benchmark's official code by default;
    an explicit flag wins and is recorded; another mode carries no decoding."""
    family = "video-llm"
    generate = resolve_protocol("paper", benchmark, family, {"mode": "generate"})
    decoding = Decoding(
        **{k: generate.settings[k] for k in DECODING_SETTINGS if k in generate.settings}
    )
    assert decoding == REFERENCE_DECODING[benchmark]
    given = resolve_protocol("paper", benchmark, family, {"mode": "generate", "max_new_tokens": 7})
    assert given.settings["max_new_tokens"] == 7
    assert given.overrides["max_new_tokens"]["given"] == 7
    choice = resolve_protocol("paper", benchmark, family, {"mode": "choice"})
    assert not set(DECODING_SETTINGS) & set(choice.settings)


def test_unknown_protocol_and_setting_are_errors():
    with pytest.raises(ValueError, match="unknown protocol 'papers'"):
        describe_protocol("papers", "vitatecs", "dual-encoder")
    with pytest.raises(ValueError, match="not a protocol setting"):
        resolve_protocol("paper", "vitatecs", "dual-encoder", {"colour": "red"})
    with pytest.raises(ValueError, match="unknown protocol"):
        ScoreOptions(protocol="papers")


def test_unpublished_families_and_benchmarks_say_so():
    unpublished = describe_protocol("paper", "rtime", "text-lm")
    assert "rtime published no scoring code for text-lm models" in unpublished.notes
    assert unpublished.settings() == UNIFORM["text-lm"].settings()
    unknown = describe_protocol("paper", "synthetic", "dual-encoder")
    assert "not a published benchmark" in unknown.notes
    assert unknown.settings() == UNIFORM["dual-encoder"].settings()
    no_benchmark = describe_protocol("paper", None, "text-lm")
    assert "no benchmark named" in no_benchmark.notes


def test_default_protocol_is_paper_with_a_benchmark_else_uniform():
    with_benchmark = ScoreOptions(benchmark="vilma").resolve("text-lm", ("reduction",))
    without = ScoreOptions().resolve("text-lm", ("reduction",))
    assert with_benchmark.name == "paper" and with_benchmark.settings["reduction"] == "vilma"
    assert without.name == "uniform" and without.settings["reduction"] == "mean"


def test_score_records_the_resolved_protocol(tiny_model, benchmark, tmp_path):
    out = tmp_path / "run"
    score(
        tiny_model("gpt2"),
        benchmark,
        benchmark="vilma",
        out_dir=str(out),
        num_workers=0,
        progress=False,
    )
    run = json.loads((out / "run.json").read_text())
    protocol = run["protocol"]
    assert protocol["name"] == "paper" and protocol["family"] == "text-lm"
    assert protocol["settings"]["reduction"] == "vilma"
    assert protocol["reference"] == PAPER["vilma", "text-lm"].reference
    assert run["adapter"]["reduction"] == "vilma"
    assert run["identity"]["protocol"] == "paper"


def test_a_run_does_not_resume_under_another_protocol(tiny_model, benchmark, tmp_path):
    out = str(tmp_path / "run")
    options = {"out_dir": out, "num_workers": 0, "progress": False}
    score(tiny_model("gpt2"), benchmark, benchmark="vilma", **options)
    with pytest.raises(ValueError, match="cannot resume"):
        score(
            tiny_model("gpt2"),
            benchmark,
            benchmark="vilma",
            protocol="uniform",
            resume=True,
            **options,
        )


def test_each_benchmark_page_lists_its_published_paper_protocols():
    """The protocol table's rows live on each benchmark's docs page (docs/benchmarks/)."""
    from pathlib import Path

    from foilkit.builders import get_benchmark

    pages = Path(__file__).resolve().parents[2] / "docs" / "benchmarks"
    for (benchmark, family), protocol in PAPER.items():
        page = (pages / f"{benchmark.replace('_', '-')}.md").read_text(encoding="utf-8")
        row = f"| {get_benchmark(benchmark).title} | `{family}`"
        assert (row in page) == bool(protocol.reference), (benchmark, row)


def test_a_retrieval_pool_refuses_a_softmax_over_candidates(tiny_model, benchmark):
    from foilkit.scorers.api import score_matrix

    with pytest.raises(ValueError, match="a retrieval pool has none"):
        score_matrix(
            tiny_model("clip"), benchmark, benchmark="vilma", num_workers=0, progress=False
        )


def test_a_view_the_policy_cannot_sample_is_a_row_error(tiny_model, tmp_path):
    """``int-fps`` at 10 frames a second cannot sample an 8 fps video (VITATECS' script asserts):
    that video's rows fail by name, another video's rows score."""
    import datasets

    from foilkit.synthetic.videos import SyntheticScene, write_video

    slow = write_video(tmp_path / "slow.mp4", SyntheticScene(direction="left"), fps=8)
    fast = write_video(
        tmp_path / "fast.mp4", SyntheticScene(direction="right"), fps=12, num_frames=36
    )
    rows = [
        {
            "id": "slow",
            "video": str(slow),
            "caption": "a square moves left",
            "foils": ["a square moves right"],
        },
        {
            "id": "fast",
            "video": str(fast),
            "caption": "a square moves right",
            "foils": ["a square moves left"],
        },
    ]
    dataset = datasets.Dataset.from_list(rows).cast_column("video", datasets.Video())
    result = score(
        tiny_model("clip"),
        dataset,
        sampling="int-fps",
        target_fps=10,
        num_workers=0,
        progress=False,
        use_cache=False,
    )
    errors = dict(zip(result["id"], result["error"]))
    assert (
        "slow.mp4: the 'int-fps' policy cannot take 10 frames a second from a 8.0 fps video"
        in errors["slow"]
    )
    assert errors["fast"] is None


# --- precision: the reference's dtype ---------------------------------------------------------


def test_paper_runs_the_references_float16_and_uniform_does_not(tiny_model, benchmark, tmp_path):
    """ViLMA's run.py runs GPT-2 in float16: so does ``paper`` here (torch 2.14 runs float16 on
    CPU), recorded as a protocol setting; ``uniform`` keeps ``auto`` (float32 on CPU)."""
    options = {"num_workers": 0, "progress": False}
    score(tiny_model("gpt2"), benchmark, benchmark="vilma", out_dir=str(tmp_path / "p"), **options)
    paper = json.loads((tmp_path / "p" / "run.json").read_text())
    assert paper["dtype"] == "float16" and paper["protocol"]["settings"]["dtype"] == "float16"
    assert "departures" not in paper["protocol"]
    score(
        tiny_model("gpt2"),
        benchmark,
        benchmark="vilma",
        protocol="uniform",
        out_dir=str(tmp_path / "u"),
        **options,
    )
    uniform = json.loads((tmp_path / "u" / "run.json").read_text())
    assert uniform["dtype"] == "float32" and "dtype" not in uniform["protocol"]["settings"]


def test_a_dtype_the_device_cannot_run_is_a_recorded_departure(
    tiny_model, benchmark, tmp_path, monkeypatch
):
    """Where the device cannot run the reference's float16, ``paper`` scores in float32 and says
    so in run.json and the report header, never silently; another ``dtype`` given explicitly that
    it cannot run is an error."""
    from foilkit.report import protocol_lines
    from foilkit.run import protocol_from_record
    from foilkit.scorers import job

    why = "cpu cannot run float16: no half kernels in this build"
    monkeypatch.setattr(job, "dtype_problem", lambda dtype, device: why)
    options = {"num_workers": 0, "progress": False}
    out = tmp_path / "run"
    score(tiny_model("gpt2"), benchmark, benchmark="vilma", out_dir=str(out), **options)
    run = json.loads((out / "run.json").read_text())
    assert run["dtype"] == "float32" and run["protocol"]["settings"]["dtype"] == "float32"
    assert run["protocol"]["departures"] == {
        "dtype": {"protocol": "float16", "used": "float32", "why": why}
    }
    (header, _) = protocol_lines(protocol_from_record(run["protocol"]))
    assert "Not followed on this device (these numbers depart from the protocol): dtype " in header
    assert f"`float16` -> `float32` ({why})" in header
    with pytest.raises(ValueError, match="--dtype bfloat16"):
        score(tiny_model("gpt2"), benchmark, benchmark="vilma", dtype="bfloat16", **options)


def test_dtype_problem_probes_the_device():
    import torch

    from foilkit.scorers.adapters import dtype_problem

    assert dtype_problem(torch.float32, torch.device("cpu")) is None
    assert dtype_problem(torch.float16, torch.device("cpu")) is None  # torch 2.14 runs it
    assert "cannot run" in dtype_problem(torch.complex32, torch.device("cpu"))


# --- ViLMA's windows: read_video's rule --------------------------------------------------------


def test_vilma_paper_reads_windows_as_read_video_and_pts_windows_as_slices(tmp_path):
    """ViLMA reads a ``sec`` window with torchvision's ``read_video`` (end frame included) and
    slices a ``pts`` window (end excluded): the plan gives each row its rule."""
    from foilkit.scorers.plan import make_plan
    from foilkit.scorers.video import VideoMetadata, window_frames

    window = resolve_protocol("paper", "vilma", "dual-encoder", accepted=("pooling",)).settings[
        "window"
    ]
    assert window == "read-video"
    assert "window" not in resolve_protocol("paper", "vitatecs", "dual-encoder").settings
    rows = [
        {"id": "rareact", "video": "r.mp4", "start": 10.0, "end": 20.0, "time_unit": "sec"},
        {"id": "coin", "video": "c.mp4", "start": 2.0, "end": 3.0, "time_unit": "sec"},
        {"id": "quva", "video": "q.mp4", "start": 1.0, "end": 2.0, "time_unit": "pts"},
    ]
    rows = [{**row, "caption": "c", "foils": ["f"]} for row in rows]
    plan = make_plan(rows, window_rule=window)
    rules = {row.id: plan.views[row.view].window_rule for row in plan.rows}
    assert rules == {"rareact": "read-video", "coin": "read-video", "quva": "half-open"}
    frames = {
        row.id: window_frames(plan.views[row.view], VideoMetadata(n, fps, n / fps, 64, 48))
        for row, (n, fps) in zip(plan.rows, [(600, 25.0), (150, 30000 / 1001), (90, 30.0)])
    }
    assert frames == {"rareact": (250, 500), "coin": (59, 89), "quva": (30, 59)}
    half_open = make_plan(rows)
    assert window_frames(
        half_open.views[half_open.rows[0].view], VideoMetadata(600, 25.0, 24.0, 64, 48)
    ) == (250, 499)


def test_a_dtype_is_an_override_only_where_the_protocol_declares_one():
    paper = resolve_protocol("paper", "vilma", "text-lm", {"dtype": "float32"}, accepted=())
    assert paper.overrides == {"dtype": {"protocol": "float16", "given": "float32"}}
    uniform = resolve_protocol("uniform", "vilma", "text-lm", {"dtype": "float32"}, accepted=())
    assert uniform.overrides == {} and uniform.settings["dtype"] == "float32"


@pytest.mark.parametrize("benchmark", ["tempcompass", "tomato"])
def test_the_recorded_notes_are_those_of_the_runs_mode(benchmark):
    """A choice-mode protocol's notes ("no generation, no judge") are not those of a generate
    run: it generates, reads answers by the benchmark's rules, and asks the judge only when one
    is configured; a mode with no notes of its own is told apart from the protocol's."""
    accepted = _accepted("video-llm")
    choice = resolve_protocol("paper", benchmark, "video-llm", accepted=accepted)
    assert "no generation, no judge" in choice.notes
    generate = resolve_protocol(
        "paper", benchmark, "video-llm", {"mode": "generate"}, accepted=accepted
    )
    assert "no generation" not in generate.notes and "--judge-model" in generate.notes
    assert generate.to_record()["notes"] == generate.notes
    likelihood = resolve_protocol(
        "paper", benchmark, "video-llm", {"mode": "likelihood"}, accepted=accepted
    )
    assert likelihood.notes.endswith("this run scored with --mode likelihood)")


def test_notes_that_cover_both_question_modes_stay_whole():
    accepted = _accepted("video-llm")
    choice = resolve_protocol("paper", "vinoground", "video-llm", accepted=accepted)
    generate = resolve_protocol(
        "paper", "vinoground", "video-llm", {"mode": "generate"}, accepted=accepted
    )
    assert generate.notes == choice.notes and "--mode generate does" in generate.notes
