"""Native video-text dual encoders (VideoPrism, PE-Video): chosen from the config, the whole clip
at the model's own frame count, embeddings equal to the model's own forward, order-sensitive,
cached per view, and a views x texts matrix for RTime."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from foilkit.scorers.adapters import adapter_class, load_adapter
from foilkit.scorers.api import ScoreOptions, score, score_matrix, score_rows
from foilkit.scorers.protocols import resolve_protocol
from foilkit.synthetic.models import PE_VIDEO_FRAMES, TINY_MODELS, VIDEOPRISM_FRAMES

FAMILIES = {"videoprism": VIDEOPRISM_FRAMES, "pe-video": PE_VIDEO_FRAMES}
TEXTS = ["a red square moves left", "a blue square moves right", "the ball rolls slowly"]


@pytest.fixture(params=list(FAMILIES))
def encoder(request, tiny_model) -> tuple[str, str]:
    """(family, path of its tiny twin); skipped, naming the package, when one is missing."""
    family = request.param
    missing = TINY_MODELS[family].missing()
    if missing:
        pytest.skip(f"the {family} model needs {', '.join(missing)}: pip install {missing[0]}")
    return family, tiny_model(family)


def _options(cache_dir: str, **options) -> ScoreOptions:
    return ScoreOptions(num_workers=0, progress=False, cache_dir=cache_dir, **options)


def _frames(count: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (count, 3, 48, 64), dtype=torch.uint8, generator=generator)


def test_the_config_chooses_the_adapter_and_its_frame_count(encoder):
    family, path = encoder
    cls = adapter_class(path)
    assert cls.name == family
    assert cls.native_settings(path) == {"num_frames": FAMILIES[family]}


@pytest.mark.parametrize("benchmark", ["vitatecs", "rtime"])
def test_the_paper_protocol_takes_the_models_frame_count(encoder, benchmark):
    family, _ = encoder
    native = {"num_frames": FAMILIES[family]}
    resolved = resolve_protocol("paper", benchmark, family, native=native, accepted=())
    assert resolved.settings["num_frames"] == FAMILIES[family]
    assert resolved.to_record()["from_model"] == native
    assert resolved.reference and "published no scoring code" in resolved.notes
    given = resolve_protocol(
        "paper", benchmark, family, {"num_frames": 2}, native=native, accepted=()
    )
    assert given.overrides == {"num_frames": {"protocol": FAMILIES[family], "given": 2}}


def test_scores_every_row_at_the_models_frame_count(encoder, benchmark, cache_dir):
    family, path = encoder
    scored = score_rows(path, benchmark, None, _options(cache_dir, benchmark="vitatecs"))
    rows, run = scored.rows, scored.run
    assert not any(rows["error"])
    assert all(len(indices) == FAMILIES[family] for indices in rows["frame_indices"])
    assert all(np.isfinite(rows["caption_score"]))
    assert run["num_frames"] == FAMILIES[family]
    assert run["protocol"]["family"] == family
    assert run["protocol"]["from_model"] == {"num_frames": FAMILIES[family]}
    assert run["adapter"]["pooling"] == "native"
    assert run["adapter"]["native_frames"] == FAMILIES[family]


def test_foilkit_score_on_a_model_folder(encoder, saved_benchmark, tmp_path):
    """``foilkit score --model <folder>`` picks the adapter and the model's frame count."""
    import json

    from launch import score_argv

    from foilkit.cli import main

    family, path = encoder
    out = tmp_path / "run"
    argv = score_argv(path, saved_benchmark, out, "--num-workers", "0", "--no-cache")
    assert main([*argv, "--no-progress"]) == 0
    run = json.loads((out / "run.json").read_text())
    assert run["adapter"]["adapter"] == family and run["num_frames"] == FAMILIES[family]
    assert run["errors"]["rows"] == 0


def test_the_adapters_embeddings_are_the_models_own(encoder):
    """The same frames and texts through the model's processor and forward, independently."""
    from transformers import AutoModel, AutoProcessor

    family, path = encoder
    frames = [_frames(FAMILIES[family], seed) for seed in (0, 1)]
    adapter = load_adapter(path, device="cpu")
    views = torch.cat(adapter.encode_views(frames))
    texts = adapter.encode_texts(TEXTS)
    model, processor = AutoModel.from_pretrained(path).eval(), AutoProcessor.from_pretrained(path)
    text_kwargs = {"padding": True} if family == "pe-video" else {}
    inputs = processor(
        text=TEXTS, videos=frames, do_sample_frames=False, return_tensors="pt", **text_kwargs
    )
    inputs.pop("token_type_ids", None)
    with torch.no_grad():
        out = model(**inputs)
    scores = torch.stack([adapter.similarity(view[None], texts) for view in views])
    if family == "videoprism":
        torch.testing.assert_close(views, out.video_embeds)
        torch.testing.assert_close(texts, out.text_embeds)
        with torch.no_grad():
            features = model.get_video_features(pixel_values_videos=inputs["pixel_values_videos"])
        torch.testing.assert_close(views, features.pooler_output.reshape(2, -1))
        torch.testing.assert_close(scores, out.video_embeds @ out.text_embeds.T)
    else:
        torch.testing.assert_close(views, out.video_embeds)
        torch.testing.assert_close(texts, out.text_video_embeds)
        scale, bias = model.text_video_logit_scale, model.text_video_logit_bias
        torch.testing.assert_close(scale * scores + bias, out.logits_video_text)


def test_a_reversed_clip_is_another_clip(encoder, benchmark, cache_dir):
    """Temporal position embeddings: the reversed control changes every score."""
    _, path = encoder
    forward = score_rows(path, benchmark, None, _options(cache_dir)).rows
    backward = score_rows(path, benchmark, None, _options(cache_dir, control="reversed")).rows
    shuffled = score_rows(path, benchmark, None, _options(cache_dir, control="shuffled")).rows
    assert not any(backward["error"]) and not any(shuffled["error"])
    for other in (backward, shuffled):
        differences = np.abs(np.subtract(forward["caption_score"], other["caption_score"]))
        assert (differences > 1e-6).all(), differences


def test_a_second_run_reads_every_view_from_the_cache(encoder, benchmark, cache_dir):
    _, path = encoder
    first = score_rows(path, benchmark, None, _options(cache_dir))
    second = score_rows(path, benchmark, None, _options(cache_dir))
    assert first.run["throughput"]["cached_views"] == 0
    assert second.run["throughput"]["cached_views"] == second.run["throughput"]["views"] > 0
    assert second.run["throughput"]["decoded_videos"] == 0
    assert second.rows["caption_score"] == first.rows["caption_score"]
    assert second.rows["foil_scores"] == first.rows["foil_scores"]


def test_the_retrieval_matrix_holds_the_rows_scores(encoder, benchmark, cache_dir):
    """RTime's matrix mode: every view against every caption; the diagonal is each row's own."""
    _, path = encoder
    matrix = score_matrix(path, benchmark, num_workers=0, progress=False, cache_dir=cache_dir)
    rows = score_rows(path, benchmark, None, _options(cache_dir)).rows
    assert matrix.scores.shape == (len(rows), len(rows)) and np.isfinite(matrix.scores).all()
    np.testing.assert_allclose(np.diag(matrix.scores), rows["caption_score"], rtol=1e-6)


def test_videoprism_spreads_a_short_clip_over_its_frames_and_refuses_a_long_one(tiny_model):
    from foilkit.scorers.adapters.video_text import spread_frames

    adapter = load_adapter(tiny_model("videoprism"), device="cpu")
    short = _frames(2)
    assert spread_frames(short, 4).equal(short[[0, 0, 1, 1]])
    torch.testing.assert_close(
        adapter.encode_views([short])[0], adapter.encode_views([short[[0, 0, 1, 1]]])[0]
    )
    with pytest.raises(ValueError, match="takes at most 4 frames per video.*--num-frames 4"):
        adapter.encode_views([_frames(VIDEOPRISM_FRAMES + 1)])


def test_pe_video_takes_any_frame_count(tiny_model):
    if TINY_MODELS["pe-video"].missing():
        pytest.skip("the pe-video model needs timm: pip install timm")
    adapter = load_adapter(tiny_model("pe-video"), device="cpu")
    views = adapter.encode_views([_frames(3), _frames(PE_VIDEO_FRAMES), _frames(3, seed=1)])
    assert [view.shape for view in views] == [(1, 32)] * 3
    torch.testing.assert_close(views[0], adapter.encode_views([_frames(3)])[0])


@pytest.fixture
def pe_audio_video(tiny_model) -> str:
    if TINY_MODELS["pe-audio-video"].missing():
        pytest.skip("the pe-audio-video model needs timm: pip install timm")
    return tiny_model("pe-audio-video")


def test_a_pe_av_checkpoint_scores_through_its_video_text_part(pe_audio_video, benchmark):
    """``facebook/pe-av-*`` are PeAudioVideoModels: the pe-video adapter claims them and its
    embeddings equal the whole model's forward (with audio) on the same frames and texts."""
    from foilkit.synthetic.models import SEED, tiny_pe_audio_video

    cls = adapter_class(pe_audio_video)
    assert cls.name == "pe-video"
    assert cls.native_settings(pe_audio_video) == {"num_frames": PE_VIDEO_FRAMES}
    adapter = load_adapter(pe_audio_video, device="cpu")
    frames = [_frames(PE_VIDEO_FRAMES, seed) for seed in (0, 1)]
    texts = TEXTS[:2]  # the whole model pairs each video with one text (and one audio)
    views, embedded = torch.cat(adapter.encode_views(frames)), adapter.encode_texts(texts)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)  # the saved weights
        model, processor = tiny_pe_audio_video()
    inputs = processor(
        videos=frames, text=texts, do_sample_frames=False, padding=True, return_tensors="pt"
    )
    audio = torch.randn(2, 1, 160, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        out = model.eval()(
            input_ids=inputs["input_ids"],
            attention_mask=inputs["attention_mask"],
            pixel_values_videos=inputs["pixel_values_videos"],
            input_values=audio,
        )
    torch.testing.assert_close(views, out.video_embeds)
    torch.testing.assert_close(embedded, out.text_video_embeds)
    rows = score(pe_audio_video, benchmark, num_workers=0, progress=False, use_cache=False)
    assert not any(rows["error"])


def test_a_pe_av_checkpoint_without_its_video_tensors_is_refused(pe_audio_video, tmp_path):
    import shutil

    from safetensors.torch import load_file, save_file

    broken = tmp_path / "broken"
    shutil.copytree(pe_audio_video, broken)
    tensors = load_file(broken / "model.safetensors")
    save_file(
        {k: v for k, v in tensors.items() if not k.startswith("video_model.video_head.")},
        broken / "model.safetensors",
        metadata={"format": "pt"},
    )
    with pytest.raises(ValueError, match=r"without the video-text tensors .*video_head"):
        load_adapter(str(broken), device="cpu")
