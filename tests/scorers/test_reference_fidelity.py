"""foilkit's ``paper`` protocol beside the references' OWN code (``../shared/references``).

Each test runs the reference's unchanged code (imported by ``tests/references.py``, with the
shims it documents) and foilkit on the same videos, frames and tiny models:

* ViLMA's window reading (``vl_bench/data.py``, ``Dataset_v1._read_video`` over torchvision
  0.14.1's ``read_video``) against the frames foilkit's ``read-video`` window rule plans;
* ViLMA's X-CLIP script (``models/video/run_xclip.py``) against foilkit's X-CLIP scores under
  ``paper``: same frames, float16, ``logits_per_video`` units;
* ViLMA's text-only script (``models/text/run.py``, GPT-2 in float16) against foilkit's text LM
  under ``paper``, ties included;
* VITATECS' CLIP4Clip frames and preprocessing (``dataloaders/rawvideo_util.py``,
  ``RawVideoExtractorDecord`` with decord and its PIL bicubic transform) against foilkit's dual
  encoder pixels; CLIP4Clip's ``logit_scale * cosine`` units.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
from references import reference_dir, vilma_module, vitatecs_module

from foilkit.scorers.adapters.dual_encoder import DualEncoderAdapter
from foilkit.scorers.plan import make_plan
from foilkit.scorers.protocols import paper_protocols, resolve_protocol
from foilkit.scorers.video import VideoView, decode_views, probe, sampling_key, window_frames
from foilkit.scorers.video.sampling import SamplingPolicy, _view_generator
from foilkit.synthetic.videos import _encode

RUN = {"num_workers": 0, "progress": False}


def _noise_video(path: Path, seconds: float, fps: Fraction, seed: int = 0) -> Path:
    """An mp4 of distinct random frames, so that each decoded frame names its index."""
    count = round(seconds * fps)
    frames = np.random.default_rng(seed).integers(0, 256, (count, 48, 64, 3), dtype=np.uint8)
    return _encode(path, frames, fps=fps)


def _frame_index(path: Path) -> dict[bytes, int]:
    """Every frame of ``path`` as PyAV decodes it (ViLMA's decoder), by its RGB bytes."""
    import av

    with av.open(str(path)) as container:
        frames = [frame.to_rgb().to_ndarray() for frame in container.decode(video=0)]
    index = {frame.tobytes(): i for i, frame in enumerate(frames)}
    assert len(index) == len(frames)  # distinct frames
    return index


def _vilma_item(name: str, start: float | None, end: float | None, unit: str = "sec") -> dict:
    return {
        "dataset": "RareAct",
        "youtube_id": name,
        "video_file": None,
        "start_time": start,
        "end_time": -1 if end is None else end,
        "time_unit": unit,
        "caption": "a caption",
        "foils": ["a foil"],
    }


def _vilma_dataset(tmp_path: Path, items: dict[str, dict], videos: Path, **kwargs):
    data = vilma_module("vl_bench.data")
    annotations = tmp_path / "items.json"
    annotations.write_text(json.dumps(items))
    return data.Dataset_v2(str(annotations), youtube_dir=str(videos), **kwargs)


# (name, fps, start, end, unit): the audit's two windows, a start between frames, frame-unit
# (``pts``) and whole-video items
WINDOWS = [
    ("rareact", Fraction(25), 10.0, 20.0, "sec"),
    ("coin", Fraction(30000, 1001), 2.0, 3.0, "sec"),
    ("coin", Fraction(30000, 1001), 1.01, 1.52, "sec"),
    ("quva", Fraction(30), 30, 60, "pts"),
    ("coin", Fraction(30000, 1001), None, None, "sec"),
]


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> Path:
    reference_dir("vilma")  # skip before encoding videos no test will read
    folder = tmp_path_factory.mktemp("youtube")
    _noise_video(folder / "rareact.mp4", 21, Fraction(25), seed=1)
    _noise_video(folder / "coin.mp4", 4, Fraction(30000, 1001), seed=2)
    _noise_video(folder / "quva.mp4", 3, Fraction(30), seed=3)
    return folder


@pytest.mark.parametrize(("name", "fps", "start", "end", "unit"), WINDOWS)
def test_vilma_paper_windows_are_read_videos(videos, tmp_path, name, fps, start, end, unit):
    """The frames ViLMA's loader reads for a window are the frames foilkit's ViLMA protocol plans
    (RareAct 10-20 s at 25 fps: 250-500; COIN 2-3 s at 29.97 fps: 59-89)."""
    path = videos / f"{name}.mp4"
    dataset = _vilma_dataset(tmp_path, {"item": _vilma_item(name, start, end, unit)}, videos)
    frames, _, _ = dataset._read_video(dataset.json_data[0], 0)
    index = _frame_index(path)
    reference = [index[frame.permute(1, 2, 0).numpy().tobytes()] for frame in frames]
    assert reference == list(range(reference[0], reference[-1] + 1))

    protocol = resolve_protocol("paper", "vilma", "xclip", accepted=("score_scale",))
    seconds = (lambda v: None if v is None else v / 30) if unit == "pts" else (lambda v: v)
    row = {
        "id": "item",
        "video": str(path),
        "start": seconds(start),
        "end": seconds(end),
        "time_unit": unit,
        "caption": "a caption",
        "foils": ["a foil"],
    }
    plan = make_plan([row], window_rule=protocol.settings["window"])
    (view,) = plan.views.values()
    assert window_frames(view, probe(str(path))) == (reference[0], reference[-1])
    if (name, start) == ("rareact", 10.0):
        assert (reference[0], reference[-1]) == (250, 500)
    if (name, start) == ("coin", 2.0):
        assert (reference[0], reference[-1]) == (59, 89)


@pytest.mark.parametrize(("name", "fps", "start", "end", "unit"), WINDOWS[:3])
def test_vilma_paper_clips_are_dataset_v2s(
    videos, tmp_path, monkeypatch, name, fps, start, end, unit
):
    """ViLMA's 8-frame clip (``Dataset_v2``, its end point drawn as foilkit draws it for the view)
    is the clip foilkit decodes under ViLMA's paper protocol."""
    path = videos / f"{name}.mp4"
    dataset = _vilma_dataset(tmp_path, {"item": _vilma_item(name, start, end)}, videos)
    protocol = resolve_protocol("paper", "vilma", "xclip", accepted=("score_scale",))
    policy = SamplingPolicy(protocol.settings["sampling"], protocol.settings["num_frames"], seed=0)
    row = {
        "id": "item",
        "video": str(path),
        "start": start,
        "end": end,
        "caption": "c",
        "foils": [],
    }
    (view,) = make_plan([row], window_rule=protocol.settings["window"]).views.values()
    draw = _view_generator(0, sampling_key(view))
    monkeypatch.setattr(np.random, "randint", lambda low, high: int(draw.integers(low, high)))
    clip = dataset[0]["video"]
    index = _frame_index(path)
    reference = [index[frame.permute(1, 2, 0).numpy().tobytes()] for frame in clip]
    (decoded,) = decode_views([view], policy)
    assert decoded.indices.tolist() == reference


# --- X-CLIP: ViLMA's run_xclip.py ---------------------------------------------------------------


def _redirect_pretrained(monkeypatch, module, path: str, *names: str) -> None:
    """Make ``module``'s ``<name>.from_pretrained`` load ``path`` (the tiny model) whatever the
    Hub id the reference hard-codes: the only change to how the script runs."""
    for name in names:
        cls = getattr(module, name)
        original = cls.from_pretrained
        monkeypatch.setattr(
            cls, "from_pretrained", lambda _id, *args, _f=original, **kw: _f(path, *args, **kw)
        )


# windows of at most 8 frames: ViLMA takes them whole (no random draw), so the clips are equal
SHORT_WINDOWS = [("coin", 1.0, 1.2), ("coin", 2.0, 2.2), ("rareact", 3.0, 3.2)]


@pytest.mark.parametrize(
    ("script", "model", "units"),
    [
        ("models.video.run_xclip", "xclip", "logit"),  # logits_per_video
        ("models.image.run_clip", "clip", None),  # softmax over texts, mean over frames
    ],
)
def test_vilma_paper_scores_are_the_scripts(
    videos, tmp_path, monkeypatch, tiny_model, script, model, units
):
    """ViLMA's run_xclip.py / run_clip.py (float16) and foilkit's scores under ``paper`` are the
    same numbers: read-video windows, float16, the script's units."""
    import datasets

    import foilkit

    path = tiny_model(model)
    module = vilma_module(script)
    _redirect_pretrained(monkeypatch, module, path, "AutoModel", "AutoProcessor")
    texts = [
        ("a man walks to the left", ["a man walks to the right", "a man runs"]),
        ("the ball rolls down", ["the ball rolls up"]),
        ("she opens the door", ["she closes the door"]),
    ]
    items, rows = {}, []
    for (name, start, end), (caption, foils) in zip(SHORT_WINDOWS, texts):
        key = f"{name}-{start}"
        items[key] = {**_vilma_item(name, start, end), "caption": caption, "foils": foils}
        video = str(videos / f"{name}.mp4")
        rows.append(
            {"id": key, "video": video, "start": start, "end": end, "time_unit": "sec"}
            | {"caption": caption, "foils": foils}
        )
    annotations, output = tmp_path / "items.json", tmp_path / "scores.json"
    annotations.write_text(json.dumps(items))
    args = ["-i", str(annotations), "-o", str(output), "--youtube-dir", str(videos)]
    module.main.main([*args, "--device", "cpu", "--num-workers", "0"], standalone_mode=False)
    reference = json.loads(output.read_text())

    out = tmp_path / "run"
    dataset = datasets.Dataset.from_list(rows)
    scored = foilkit.score(path, dataset, benchmark="vilma", out_dir=str(out), **RUN)
    run = json.loads((out / "run.json").read_text())
    assert run["dtype"] == "float16"
    assert run["protocol"]["settings"].get("score_scale") == units
    for row in scored:
        expected = reference[row["id"]]["scores"]
        ours = [row["caption_score"], *row["foil_scores"]]
        np.testing.assert_allclose(ours, expected, rtol=2e-3, atol=2e-3)
        assert np.argmax(ours) == np.argmax(expected)


# --- text-only: ViLMA's models/text/run.py ------------------------------------------------------


def test_vilma_text_lm_paper_is_run_py_in_float16(tmp_path, monkeypatch, tiny_model):
    """run.py (GPT-2 in float16) and foilkit's text LM under ``paper``: the same perplexities,
    in float16, and the same float16 ties (item ``b``: two texts whose float32 perplexities
    differ); float32, an override, is recorded as one and breaks that tie."""
    import datasets

    import foilkit

    path = tiny_model("gpt2")
    run = vilma_module("models.text.run")
    _redirect_pretrained(monkeypatch, run, path, "GPT2LMHeadModel", "AutoTokenizer")
    items = {
        "a": {
            "caption": "a man is walking to the left",
            "foils": ["a man is walking to the right"],
        },
        "b": {"caption": "the man closes the door", "foils": ["the woman closes the door"]},
        "c": {"caption": "she opens the door", "foils": ["she closes the door", "she opens it"]},
    }
    annotations, output = tmp_path / "items.json", tmp_path / "scores.json"
    annotations.write_text(json.dumps(items))
    run.main.main(
        ["-i", str(annotations), "-o", str(output), "--device", "cpu"], standalone_mode=False
    )
    reference = json.loads(output.read_text())
    rows = [{"id": key, **item} for key, item in items.items()]
    scored = foilkit.score(
        path,
        datasets.Dataset.from_list(rows),
        benchmark="vilma",
        out_dir=str(tmp_path / "run"),
        **RUN,
    )
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert record["dtype"] == "float16" and record["protocol"]["settings"]["dtype"] == "float16"
    for row in scored:
        perplexities = reference[row["id"]]["scores"]
        assert [row["caption_score"], *row["foil_scores"]] == perplexities
    assert len(set(reference["b"]["scores"])) == 1  # run.py's float16 tie
    tie = next(row for row in scored if row["id"] == "b")
    assert [tie["caption_score"]] == tie["foil_scores"]

    full = foilkit.score(
        path, datasets.Dataset.from_list(rows), benchmark="vilma", dtype="float32", **RUN
    )
    untied = next(row for row in full if row["id"] == "b")
    assert [untied["caption_score"]] != untied["foil_scores"]


# --- VITATECS: CLIP4Clip's PIL bicubic preprocessing ---------------------------------------------


def test_vitatecs_paper_pixels_are_rawvideo_utils(tiny_model):
    """RawVideoExtractorDecord's transform (PIL bicubic resize, centre crop, CLIP's
    normalisation) and foilkit's dual encoder under VITATECS' paper protocol see the same
    pixels, hence the same frame embeddings."""
    from PIL import Image

    rawvideo_util = vitatecs_module("dataloaders.rawvideo_util")
    path = tiny_model("clip")
    protocol = resolve_protocol(
        "paper", "vitatecs", "dual-encoder", accepted=DualEncoderAdapter.options
    )
    assert protocol.settings["preprocess"] == "pil"
    adapter = DualEncoderAdapter(
        path, dtype=torch.float32, **protocol.adapter_options(DualEncoderAdapter.options)
    )
    size = adapter.image_processor.crop_size["height"]
    frames = np.random.default_rng(0).integers(0, 256, (5, 48, 64, 3), dtype=np.uint8)
    reference = torch.stack(
        [
            rawvideo_util.RawVideoExtractorDecord(size=size).transform(Image.fromarray(f))
            for f in frames
        ]
    )
    ours = adapter.image_processor(
        images=list(torch.from_numpy(frames).permute(0, 3, 1, 2)), return_tensors="pt"
    )
    assert torch.equal(ours["pixel_values"], reference)
    with torch.inference_mode():
        features = adapter.model.get_image_features(pixel_values=reference)
    expected = torch.nn.functional.normalize(getattr(features, "pooler_output", features), dim=-1)
    (view,) = DualEncoderAdapter(
        path, dtype=torch.float32, pooling="mean-of-similarities", preprocess="pil"
    ).encode_views([torch.from_numpy(frames).permute(0, 3, 1, 2)])
    torch.testing.assert_close(view, expected, rtol=1e-5, atol=1e-6)


def test_vitatecs_paper_scores_are_clip4clips_logits(tiny_model):
    """CLIP4Clip's meanP score is ``logit_scale * cosine`` of the mean-pooled view; VITATECS'
    paper protocol reports that number."""
    path = tiny_model("clip")
    protocol = resolve_protocol(
        "paper", "vitatecs", "dual-encoder", accepted=DualEncoderAdapter.options
    )
    assert paper_protocols("vitatecs")["dual-encoder"].score_scale == "logit"
    options = protocol.adapter_options(DualEncoderAdapter.options)
    logit = DualEncoderAdapter(path, dtype=torch.float32, **options)
    cosine = DualEncoderAdapter(path, dtype=torch.float32, **{**options, "score_scale": "cosine"})
    frames = torch.from_numpy(
        np.random.default_rng(1).integers(0, 256, (4, 3, 48, 64), dtype=np.uint8)
    )
    (view,) = logit.encode_views([frames])
    texts = logit.encode_texts(["a man walks", "a man runs"])
    scale = float(logit.model.logit_scale.detach().exp())
    torch.testing.assert_close(
        logit.similarity(view, texts), scale * cosine.similarity(view, texts)
    )
    assert scale != 1.0


@pytest.mark.parametrize("fps", [Fraction(30000, 1001), Fraction(25)], ids=["29.97", "25"])
def test_vitatecs_paper_pixels_are_raw_video_extractor_decords(tmp_path, tiny_model, fps):
    """End to end: RawVideoExtractorDecord's ``get_video_data`` (decord's frames at
    ``--feature_framerate 1``, its PIL transform) equals foilkit's paper frames (``int-fps``,
    torchcodec) through its paper preprocessing, pixel for pixel; the torch-backend default
    does not."""
    from foilkit.scorers.job import sampling_policy

    rawvideo_util = vitatecs_module("dataloaders.rawvideo_util")
    video = _noise_video(tmp_path / "clip.mp4", 6, fps, seed=4)
    family = DualEncoderAdapter.options
    protocol = resolve_protocol("paper", "vitatecs", "dual-encoder", accepted=family)
    adapter = DualEncoderAdapter(
        tiny_model("clip"), dtype=torch.float32, **protocol.adapter_options(family)
    )
    size = adapter.image_processor.crop_size["height"]
    extractor = rawvideo_util.RawVideoExtractorDecord(framerate=1, size=size)
    reference = extractor.get_video_data(str(video))["video"]
    (decoded,) = decode_views([VideoView(str(video))], sampling_policy(protocol, seed=0))
    ours = adapter.image_processor(images=list(decoded.frames), return_tensors="pt")
    assert torch.equal(ours["pixel_values"], reference)
    default = DualEncoderAdapter(tiny_model("clip"), dtype=torch.float32).image_processor
    torch_backend = default(images=list(decoded.frames), return_tensors="pt")["pixel_values"]
    assert not torch.equal(torch_backend, reference)
