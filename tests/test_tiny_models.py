"""Every tiny model family reloads from its saved folder through ``from_pretrained`` and runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from foilkit.synthetic.models import (
    COLA_LABELS,
    NLI_LABELS,
    NUM_FRAMES,
    PE_VIDEO_FRAMES,
    TINY_MODELS,
    VIDEOPRISM_FRAMES,
    build_tiny_model,
    tiny_model_path,
)

CAPTIONS = [
    "A red square moves to the right.",
    "Zoë's café: a blue square appears first, then… 日本!",
]


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("tiny-models")


def _frames(count: int, seed: int = 0) -> np.ndarray:
    """``count`` random uint8 frames, T x H x W x C, larger than the models' 32x32 inputs."""
    return np.random.default_rng(seed).integers(0, 256, size=(count, 48, 64, 3), dtype=np.uint8)


def _metadata() -> dict[str, Any]:
    """The metadata of :func:`_frames`' NUM_FRAMES frames, as sampled at 2 fps."""
    return {"total_num_frames": NUM_FRAMES, "fps": 2.0, "frames_indices": list(range(NUM_FRAMES))}


def _timed_inputs(processor: Any, prompt: str, **options: Any) -> Any:
    """The processor's inputs for ``prompt`` and NUM_FRAMES frames with their metadata."""
    frames, metadata = [_frames(NUM_FRAMES)], [_metadata()]
    return processor(
        text=[prompt], videos=frames, video_metadata=metadata, return_tensors="pt", **options
    )


def _finite(tensor: torch.Tensor) -> bool:
    return bool(torch.isfinite(tensor).all())


def _dual_encoder(path: Path, **text_kwargs) -> None:
    from transformers import AutoModel, AutoProcessor

    model, processor = AutoModel.from_pretrained(path).eval(), AutoProcessor.from_pretrained(path)
    inputs = processor(text=CAPTIONS, images=list(_frames(3)), return_tensors="pt", **text_kwargs)
    with torch.no_grad():
        out = model(**inputs)
    assert out.logits_per_image.shape == (3, len(CAPTIONS))
    assert _finite(out.logits_per_image)


def _run_clip(path: Path) -> None:
    _dual_encoder(path, padding=True)


def _run_siglip(path: Path) -> None:
    _dual_encoder(path, padding="max_length")


def _run_align(path: Path) -> None:
    _dual_encoder(path)  # the processor pads to 64 tokens, as for kakaobrain/align-base


def _run_tipsv2(path: Path) -> None:
    _dual_encoder(path)  # the processor pads to 64 tokens, as for google/tipsv2-*


def _run_xclip(path: Path) -> None:
    from transformers import AutoModel, AutoProcessor

    model, processor = AutoModel.from_pretrained(path).eval(), AutoProcessor.from_pretrained(path)
    inputs = processor(
        text=CAPTIONS,
        videos=[list(_frames(NUM_FRAMES, seed)) for seed in range(2)],
        return_tensors="pt",
        padding=True,
    )
    assert inputs["pixel_values"].shape == (2, NUM_FRAMES, 3, 32, 32)
    with torch.no_grad():
        out = model(**inputs)
    assert out.logits_per_video.shape == (2, len(CAPTIONS))
    assert _finite(out.logits_per_video)


def _run_videoprism(path: Path) -> None:
    from transformers import AutoModel, AutoProcessor

    model, processor = AutoModel.from_pretrained(path).eval(), AutoProcessor.from_pretrained(path)
    videos = [torch.from_numpy(_frames(VIDEOPRISM_FRAMES, s)).permute(0, 3, 1, 2) for s in (0, 1)]
    inputs = processor(text=CAPTIONS, videos=videos, do_sample_frames=False, return_tensors="pt")
    assert inputs["pixel_values_videos"].shape == (2, VIDEOPRISM_FRAMES, 3, 32, 32)
    assert inputs["input_ids"].shape == (len(CAPTIONS), 64)  # padded to 64, as the real processor
    with torch.no_grad():
        out = model(**inputs)
    assert out.logits_per_video.shape == (2, len(CAPTIONS)) and _finite(out.logits_per_video)


def _run_pe_video(path: Path) -> None:
    from transformers import AutoModel, AutoProcessor

    model, processor = AutoModel.from_pretrained(path).eval(), AutoProcessor.from_pretrained(path)
    videos = [torch.from_numpy(_frames(PE_VIDEO_FRAMES, s)).permute(0, 3, 1, 2) for s in (0, 1)]
    inputs = processor(
        text=CAPTIONS, videos=videos, do_sample_frames=False, padding=True, return_tensors="pt"
    )
    assert inputs["pixel_values_videos"].shape == (2, PE_VIDEO_FRAMES, 3, 32, 32)
    with torch.no_grad():
        out = model(**inputs)
    assert out.logits_video_text.shape == (2, len(CAPTIONS)) and _finite(out.logits_video_text)


def _run_pe_audio_video(path: Path) -> None:
    """``from_pretrained`` cannot load a saved PeAudioVideoModel in transformers 5.23; its
    video-text PeVideoModel loads through foilkit's loader and runs."""
    from transformers import AutoConfig, AutoProcessor

    from foilkit.scorers.adapters.video_text import load_pe_video_part

    model = load_pe_video_part(str(path), AutoConfig.from_pretrained(path)).eval()
    processor = AutoProcessor.from_pretrained(path)
    videos = [torch.from_numpy(_frames(PE_VIDEO_FRAMES, s)).permute(0, 3, 1, 2) for s in (0, 1)]
    inputs = processor(
        text=CAPTIONS, videos=videos, do_sample_frames=False, padding=True, return_tensors="pt"
    )
    inputs.pop("token_type_ids", None)
    with torch.no_grad():
        out = model(**inputs)
    assert out.logits_video_text.shape == (2, len(CAPTIONS)) and _finite(out.logits_video_text)


def _run_blip_itm(path: Path) -> None:
    from transformers import AutoProcessor, BlipForImageTextRetrieval

    model, processor = (
        BlipForImageTextRetrieval.from_pretrained(path).eval(),
        AutoProcessor.from_pretrained(path),
    )
    inputs = processor(images=list(_frames(2)), text=CAPTIONS, return_tensors="pt", padding=True)
    with torch.no_grad():
        itm = model(**inputs).itm_score
        cosine = model(**inputs, use_itm_head=False).itm_score
    assert itm.shape == (2, 2) and _finite(itm)
    assert cosine.shape == (2, 2) and _finite(cosine)


def _run_gpt2(path: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model, tokenizer = (
        AutoModelForCausalLM.from_pretrained(path).eval(),
        AutoTokenizer.from_pretrained(path),
    )
    ids = tokenizer(CAPTIONS[1], return_tensors="pt")["input_ids"]
    assert (
        tokenizer.unk_token_id not in ids[0].tolist()
        or tokenizer.unk_token_id == tokenizer.eos_token_id
    )
    assert tokenizer.decode(ids[0]) == CAPTIONS[1]  # byte-level: every character round-trips
    with torch.no_grad():
        out = model(ids, labels=ids)
    assert out.logits.shape == (1, ids.shape[1], len(tokenizer))
    assert torch.isfinite(out.loss)


def _run_nli(path: Path) -> None:
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(str(path), device="cpu")
    assert [model.config.id2label[i] for i in range(3)] == list(NLI_LABELS)
    scores = model.predict([(CAPTIONS[0], CAPTIONS[1]), (CAPTIONS[1], CAPTIONS[0])])
    assert scores.shape == (2, 3) and np.isfinite(scores).all()


def _run_cola(path: Path) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    assert model.config.label2id == {label: i for i, label in enumerate(COLA_LABELS)}
    with torch.no_grad():
        logits = model(**tokenizer(CAPTIONS, return_tensors="pt", padding=True)).logits
    assert logits.shape == (2, 2) and _finite(logits)


def _run_t5(path: Path) -> None:
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    model, tokenizer = (
        AutoModelForSeq2SeqLM.from_pretrained(path).eval(),
        AutoTokenizer.from_pretrained(path),
    )
    sentinels = tokenizer.convert_tokens_to_ids(["<extra_id_0>", "<extra_id_1>"])
    assert sentinels == [len(tokenizer) - 1, len(tokenizer) - 2]
    inputs = tokenizer(["A man <extra_id_0> the door."], return_tensors="pt")
    assert sentinels[0] in inputs["input_ids"][0].tolist()
    generated = model.generate(**inputs, max_new_tokens=4, do_sample=False)
    assert generated.shape[0] == 1 and 2 <= generated.shape[1] <= 5
    assert generated[0, 0] == model.config.decoder_start_token_id


def _run_roberta_mlm(path: Path) -> None:
    from transformers import pipeline

    fill = pipeline("fill-mask", model=str(path), device="cpu", top_k=3)
    predictions = fill(f"A man {fill.tokenizer.mask_token} the door.")
    assert len(predictions) == 3
    assert all(np.isfinite(p["score"]) and p["sequence"].startswith("A man") for p in predictions)


def _video_llm(
    path: Path,
    placeholder: str,
    tokens_per_video: Callable[[dict], int],
    model_class: Any = None,
    **processor_kwargs,
) -> None:
    """The twin at ``path`` reloads (as ``model_class``, default ``AutoModelForImageTextToText``)
    and runs on a video prompt whose ``placeholder`` the processor expands to the model's
    ``tokens_per_video``."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = (model_class or AutoModelForImageTextToText).from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    messages = [
        {
            "role": "user",
            "content": [{"type": "video"}, {"type": "text", "text": "Describe the video."}],
        }
    ]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.count(placeholder) == 1 and "Describe the video." in prompt
    inputs = processor(
        text=[prompt],
        videos=[_frames(NUM_FRAMES)],
        return_tensors="pt",
        do_sample_frames=False,
        **processor_kwargs,
    )
    video_token_id = processor.tokenizer.convert_tokens_to_ids(placeholder)
    assert video_token_id == model.config.video_token_id
    assert int((inputs["input_ids"] == video_token_id).sum()) == tokens_per_video(inputs)
    with torch.no_grad():
        logits = model(**inputs).logits
    assert logits.shape[:2] == inputs["input_ids"].shape
    assert _finite(logits)


def _run_llava_next_video(path: Path) -> None:
    _video_llm(path, "<video>", lambda inputs: NUM_FRAMES * 4)  # 4x4 patches pooled with stride 2


def _run_llava_onevision(path: Path) -> None:
    # 4x4 patches pooled to 2x2 a frame, and one image_newline after the video
    _video_llm(path, "<video>", lambda inputs: NUM_FRAMES * 4 + 1)


def _run_internvl(path: Path) -> None:
    """The video is its frames' image tiles: ``<video>`` becomes ``Frame{i}: <img>...</img>``
    lines of ``<IMG_CONTEXT>`` tokens (4 a frame), the frames ``pixel_values``."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "Hi"}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.count("<video>") == 1
    inputs = processor(text=[prompt], videos=[_frames(NUM_FRAMES)], return_tensors="pt")
    assert inputs["pixel_values"].shape[0] == NUM_FRAMES
    assert int((inputs["input_ids"] == model.config.image_token_id).sum()) == NUM_FRAMES * 4
    assert f"Frame{NUM_FRAMES}: <img>" in processor.decode(inputs["input_ids"][0])
    with torch.no_grad():
        logits = model(**inputs).logits
    assert logits.shape[:2] == inputs["input_ids"].shape and _finite(logits)


def _run_smolvlm(path: Path) -> None:
    """Each frame is an image of 4 ``<image>`` tokens after its ``Frame from mm:ss:``."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "Hi"}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt == "<|im_start|>User: <video>Hi<end_of_utterance>\nAssistant:"
    inputs = _timed_inputs(processor, prompt)
    assert int((inputs["input_ids"] == model.config.image_token_id).sum()) == NUM_FRAMES * 4
    assert "eight frames" in processor.decode(inputs["input_ids"][0])
    with torch.no_grad():
        logits = model(**inputs).logits
    assert logits.shape[:2] == inputs["input_ids"].shape and _finite(logits)


def _run_video_llama_3(path: Path) -> None:
    def kept_tokens(inputs) -> int:  # 16x32 frames: 2 merged tokens each, minus repeats
        assert inputs["video_grid_thw"].tolist() == [[NUM_FRAMES, 2, 4]]
        return int(inputs["video_compression_mask"].sum())

    _video_llm(path, "<|video_pad|>", kept_tokens)


def _run_perception_lm(path: Path) -> None:
    _video_llm(path, "<|video|>", lambda inputs: NUM_FRAMES * 4)  # 4x4 patches pooled 2x2


def _run_molmo2(path: Path) -> None:
    """``<|video|>`` becomes, per frame, its time and 4 ``<im_patch>`` tokens (4x4 patches
    pooled 2x2) between ``<frame_start>`` and ``<frame_end>``; BOS goes first."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "Hi"}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.startswith("<|video|><|im_start|>user\nHi")
    inputs = _timed_inputs(processor, prompt, do_sample_frames=False)
    assert int((inputs["input_ids"] == model.config.video_token_id).sum()) == NUM_FRAMES * 4
    assert processor.decode(inputs["input_ids"][0]).startswith("<|endoftext|>0.0 <frame_start>")
    with torch.no_grad():
        logits = model(**inputs).logits
    assert logits.shape[:2] == inputs["input_ids"].shape and _finite(logits)


def _run_qwen_omni(path: Path) -> None:
    """An omni checkpoint reloads as its thinker (the class transformers lists for the thinker's
    model type); the omni processor upsizes frames to its own video minimum (at least 128*28*28
    pixels for Qwen2.5-Omni, 128*32*32 for Qwen3-Omni), one token per 2x2 merged patches of 2
    frames."""
    import transformers
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    thinker_type = AutoConfig.from_pretrained(path).thinker_config.model_type
    thinker = getattr(transformers, MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES[thinker_type])
    placeholder = "<|VIDEO|>" if thinker_type.startswith("qwen2_5") else "<|video_pad|>"

    def merged_patches(inputs) -> int:
        assert inputs["video_grid_thw"][0, 0] == NUM_FRAMES // 2
        return int(inputs["video_grid_thw"].prod()) // 4

    _video_llm(path, placeholder, merged_patches, thinker)


def _run_qwen2_vl(path: Path) -> None:
    def merged_patches(inputs) -> int:  # 2 frames x 2 x 2 patches per token; 48x64 frames -> 16x32
        assert inputs["video_grid_thw"].tolist() == [[NUM_FRAMES // 2, 2, 4]]
        return int(inputs["video_grid_thw"].prod()) // 4

    _video_llm(path, "<|video_pad|>", merged_patches)


def _run_minicpm(path: Path) -> None:
    """Each 48x64 frame is a 32x32 source image and a 2x2 grid of 32x32 slices: 5 crops of 4x4
    patches, one ``<|video_pad|>`` each merged 16x, four merged 4x (MiniCPM OCR's default)."""
    per_crop = 4 if json.loads((path / "config.json").read_text())["downsample_mode"] == "4x" else 1
    _video_llm(path, "<|video_pad|>", lambda inputs: NUM_FRAMES * 5 * per_crop)


def _run_qwen3_5(path: Path) -> None:
    def merged_patches(inputs) -> int:  # 2 frames x 2 x 2 patches per token
        assert inputs["video_grid_thw"][0, 0] == NUM_FRAMES // 2
        return int(inputs["video_grid_thw"].prod()) // 4

    _video_llm(path, "<|video_pad|>", merged_patches)


def _run_gemma4(path: Path) -> None:
    def soft_tokens(inputs) -> int:  # a frame's real 8x8 patches (padding at -1), pooled 2x2
        assert int(inputs["num_frames_per_video"][0]) == NUM_FRAMES
        return int((inputs["video_position_ids"][..., 0] >= 0).sum()) // 4

    _video_llm(path, "<|video|>", soft_tokens)


def _run_glm_v(path: Path) -> None:
    """GLM-4.1V / GLM-4.6V: the template's one ``<|video|>`` becomes ``<|image|>`` tokens inside
    ``<|begin_of_video|>...<|end_of_video|>``, one block per 2 frames."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "Hi."}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.count("<|begin_of_video|><|video|><|end_of_video|>") == 1
    inputs = _timed_inputs(processor, prompt, do_sample_frames=False)
    assert inputs["video_grid_thw"].tolist() == [[NUM_FRAMES // 2, 2, 4]]  # 48x64 -> 16x32
    video = inputs["mm_token_type_ids"] == 2
    assert int(video.sum()) == NUM_FRAMES // 2 * 2  # 2x4 patches merged 2x2 per temporal patch
    assert (inputs["input_ids"][video] == model.config.image_token_id).all()
    with torch.no_grad():
        logits = model(**inputs).logits
    assert logits.shape[:2] == inputs["input_ids"].shape and _finite(logits)


def _run_ernie4_5_vl(path: Path) -> None:
    def merged(inputs) -> int:  # 2 frames x 2 x 2 patches per token; 48x64 frames -> 16x32
        assert inputs["video_grid_thw"].tolist() == [[NUM_FRAMES, 2, 4]]
        return int(inputs["video_grid_thw"].prod()) // 8

    _video_llm(path, "<|VIDEO_PLACEHOLDER|>", merged, video_metadata=[_metadata()])


def _run_gemma4_unified(path: Path) -> None:
    def soft_tokens(inputs) -> int:  # a frame's real patches, already pooled 2x2 (16 pixels)
        assert int(inputs["num_frames_per_video"][0]) == NUM_FRAMES
        return int((inputs["video_position_ids"][..., 0] >= 0).sum())

    _video_llm(path, "<|video|>", soft_tokens)


def _run_nemotron_h_omni(path: Path) -> None:
    """Nemotron-H Omni runs on text; its video forward fails inside transformers 5.23 (why foilkit
    refuses it: ``BROKEN_VIDEO``). When this stops raising, lift the refusal and score it."""
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from transformers.video_utils import VideoMetadata

    from foilkit.scorers.adapters._video_llm_support import BROKEN_VIDEO

    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    with torch.no_grad():
        text = processor(text=["Describe the video."], return_tensors="pt")
        assert _finite(model(**text).logits)
        metadata = VideoMetadata(
            total_num_frames=NUM_FRAMES, fps=2.0, frames_indices=list(range(8))
        )
        inputs = processor(
            text=["<video>Describe the video."],
            videos=[_frames(NUM_FRAMES)],
            video_metadata=metadata,  # one object: the processor reads it so
            do_sample_frames=False,
            return_tensors="pt",
        )
        assert "Frame 1 sampled at 0.00 seconds" in processor.tokenizer.decode(
            inputs["input_ids"][0]
        )
        if transformers_version() in BROKEN_VIDEO["nemotron_h_omni"].versions:
            with pytest.raises(TypeError, match="must be tuple of Tensors"):
                model(**inputs)


def _run_cohere_compass(path: Path) -> None:
    """Cohere Compass runs on an image (what its checkpoints read; foilkit refuses it on video:
    ``IMAGE_ONLY``): an image's placeholders are as many as the embeddings the model makes."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    messages = [
        {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "Describe it."}]}
    ]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.count("<|VISION_START|><|IMAGE_PAD|><|VISION_END|>") == 1
    inputs = processor(text=[prompt], images=[_frames(1)[0]], return_tensors="pt")
    assert inputs["image_grid_thw"].tolist() == [[1, 2, 4]]  # 48x64 -> 16x32 in 8x8 patches
    placeholders = int((inputs["input_ids"] == model.config.image_token_id).sum())
    with torch.no_grad():
        features = model.model.get_image_features(inputs["pixel_values"], inputs["image_grid_thw"])
        logits = model(**inputs).logits
    assert placeholders == sum(len(part) for part in features.pooler_output) == 2
    assert logits.shape[:2] == inputs["input_ids"].shape and _finite(logits)


def _run_dots3_note(path: Path) -> None:
    """Dots 3 Note runs on a video as transformers 5.23 lays it out, which is why foilkit refuses
    it (``BROKEN_VIDEO``): one untimed run of ``<|video_pad|>`` tokens, no ``<|img|>`` frame
    blocks; and with the 2-frame patches of the Qwen3-VL video processor's default the vision
    tower fails. When the layout becomes the checkpoint's, lift the refusal and score it."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from foilkit.scorers.adapters._video_llm_support import BROKEN_VIDEO

    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    inputs = _timed_inputs(processor, "<|video_pad|>Describe the video.", do_sample_frames=False)
    grid = inputs["video_grid_thw"]
    assert int(grid[0, 0]) == NUM_FRAMES  # one frame a temporal patch
    video = inputs["input_ids"][0] == model.config.video_token_id
    assert int(video.sum()) == int(grid.prod()) // 4  # patches merged 2x2
    with torch.no_grad():
        assert _finite(model(**inputs).logits)
    if transformers_version() in BROKEN_VIDEO["dots3_note"].versions:
        shown = processor.tokenizer.decode(inputs["input_ids"][0])
        assert "<|img|>" not in shown and "seconds" not in shown  # no frame blocks, no times
        assert int(video.nonzero()[-1] - video.nonzero()[0]) + 1 == int(video.sum())  # one run
        packed = _timed_inputs(processor, "<|video_pad|>", temporal_patch_size=2)
        with torch.no_grad(), pytest.raises(RuntimeError, match="must match the size"):
            model(**packed)


def transformers_version() -> str:
    import transformers

    return transformers.__version__


def _run_hyperclovax_vision_v2(path: Path) -> None:
    def merged_patches(inputs) -> int:  # 2 frames x 2 x 2 patches per token; 48x64 frames -> 16x32
        assert inputs["video_grid_thw"].tolist() == [[NUM_FRAMES // 2, 2, 4]]
        return int(inputs["video_grid_thw"].prod()) // 4

    metadata = {"total_num_frames": NUM_FRAMES, "fps": 2.0, "frames_indices": list(range(8))}
    _video_llm(path, "<|VIDEO_PAD|>", merged_patches, video_metadata=[metadata])


def _run_cosmos3_edge(path: Path) -> None:
    def merged_patches(inputs) -> int:  # one frame a step, 2 x 2 patches per token
        assert inputs["video_grid_thw"][0, 0] == NUM_FRAMES
        return int(inputs["video_grid_thw"].prod()) // 4

    metadata = {"total_num_frames": NUM_FRAMES, "fps": 2.0, "frames_indices": list(range(8))}
    _video_llm(
        path, "<|video_pad|>", merged_patches, video_metadata=[metadata], return_metadata=True
    )


def _run_lfm3_vl(path: Path) -> None:
    def merged_patches(inputs) -> int:  # 2 frames x 2 x 2 patches per token
        assert inputs["video_grid_thw"][0, 0] == NUM_FRAMES // 2
        return int(inputs["video_grid_thw"].prod()) // 4

    metadata = {"total_num_frames": NUM_FRAMES, "fps": 2.0, "frames_indices": list(range(8))}
    _video_llm(path, "<|video_pad|>", merged_patches, video_metadata=[metadata])


def _run_kimi_k25(path: Path) -> None:
    """Kimi K2.5 runs on text; its processor writes one placeholder per time-pooled feature its
    vision tower makes (4 frames a chunk), but its video forward fails inside transformers 5.23
    (get_image_features splits those features by t*h*w: why foilkit refuses it, ``BROKEN_VIDEO``).
    When this stops raising, lift the refusal and score it."""
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    messages = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "Hi"}]}]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    metadata = {"total_num_frames": NUM_FRAMES, "fps": 2.0, "frames_indices": list(range(8))}
    inputs = processor(
        text=[prompt],
        videos=[_frames(NUM_FRAMES)],
        video_metadata=[metadata],
        do_sample_frames=False,
        return_tensors="pt",
    )
    shown = processor.tokenizer.decode(inputs["input_ids"][0])
    assert shown.count("<|media_begin|>video<|media_content|>") == NUM_FRAMES // 4
    assert "00:00:00.000<|media_begin|>" in shown and "00:00:02.000<|media_begin|>" in shown
    placeholders = int((inputs["input_ids"] == model.config.video_token_id).sum())
    with torch.no_grad():
        text = processor(text=["Describe the video."], return_tensors="pt")
        assert _finite(model(**text).logits)
        tower = model.model.vision_tower(inputs["pixel_values_videos"], inputs["video_grid_thw"])
        assert placeholders == len(tower.pooler_output) > 0
        with pytest.raises(RuntimeError, match="split_with_sizes"):
            model(**{key: inputs[key] for key in ("input_ids", *VIDEO_KEYS)})


VIDEO_KEYS = ("pixel_values_videos", "video_grid_thw")


def _run_muse_glimmer(path: Path) -> None:
    def merged_patches(inputs) -> int:  # 2 frames x 2 x 2 patches per token
        assert inputs["video_grid_thw"][0, 0] == NUM_FRAMES // 2
        return int(inputs["video_grid_thw"].prod()) // 4

    metadata = {"total_num_frames": NUM_FRAMES, "fps": 2.0, "frames_indices": list(range(8))}
    _video_llm(path, "<|video|>", merged_patches, video_metadata=[metadata], return_metadata=True)


def _run_minimax_m3_vl(path: Path) -> None:
    def merged_patches(inputs) -> int:  # 2 frames x 2 x 2 patches per token; frames kept 48x64
        assert inputs["video_grid_thw"].tolist() == [[NUM_FRAMES // 2, 6, 8]]
        return int(inputs["video_grid_thw"].prod()) // 4

    metadata = {"total_num_frames": NUM_FRAMES, "fps": 2.0, "frames_indices": list(range(8))}
    _video_llm(path, "]<]video[>[", merged_patches, video_metadata=[metadata])


def _instructblip(path: Path, model_class: str, visual: np.ndarray, placeholder: str) -> None:
    """An InstructBLIP(-Video) forward on ``visual`` with a bare question, as its model card."""
    import transformers
    from transformers import AutoProcessor

    model = getattr(transformers, model_class).from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    assert not getattr(processor, "chat_template", None)  # as the Salesforce checkpoints
    inputs = processor(text=["Describe the video."], images=[visual], return_tensors="pt")
    placeholder_id = processor.tokenizer.convert_tokens_to_ids(placeholder)
    assert "qformer_input_ids" in inputs
    with torch.no_grad():
        logits = model(**inputs).logits
    assert int((inputs["input_ids"] == placeholder_id).sum()) > 0
    assert logits.shape[:2] == inputs["input_ids"].shape and _finite(logits)


def _run_instructblip_video(path: Path) -> None:
    from foilkit.synthetic.models import INSTRUCTBLIP_FRAMES

    frames = _frames(INSTRUCTBLIP_FRAMES)
    _instructblip(path, "InstructBlipVideoForConditionalGeneration", frames, "<video>")


def _run_instructblip(path: Path) -> None:
    _instructblip(path, "InstructBlipForConditionalGeneration", _frames(1)[0], "<image>")


def _run_llava(path: Path) -> None:
    from transformers import AutoModelForImageTextToText, AutoProcessor

    model = AutoModelForImageTextToText.from_pretrained(path).eval()
    processor = AutoProcessor.from_pretrained(path)
    assert getattr(processor, "video_processor", None) is None  # image input only
    inputs = processor(text=["<image>\nDescribe."], images=[_frames(1)[0]], return_tensors="pt")
    with torch.no_grad():
        logits = model(**inputs).logits
    assert int((inputs["input_ids"] == model.config.image_token_id).sum()) == 16
    assert logits.shape[:2] == inputs["input_ids"].shape and _finite(logits)


RUNNERS = {
    "clip": _run_clip,
    "siglip": _run_siglip,
    "align": _run_align,
    "tipsv2": _run_tipsv2,
    "siglip2": _run_align,  # Siglip2Processor pads to 64 tokens itself
    "chinese-clip": _run_clip,
    "metaclip-2": _run_clip,
    "altclip": _run_clip,
    "xclip": _run_xclip,
    "videoprism": _run_videoprism,
    "pe-video": _run_pe_video,
    "pe-audio-video": _run_pe_audio_video,
    "blip-itm": _run_blip_itm,
    "gpt2": _run_gpt2,
    "nli": _run_nli,
    "cola": _run_cola,
    "t5": _run_t5,
    "roberta-mlm": _run_roberta_mlm,
    "llava-next-video": _run_llava_next_video,
    "llava-onevision": _run_llava_onevision,
    "internvl": _run_internvl,
    "smolvlm": _run_smolvlm,
    "video-llama-3": _run_video_llama_3,
    "perception-lm": _run_perception_lm,
    "molmo2": _run_molmo2,
    "qwen2-vl": _run_qwen2_vl,
    "qwen2.5-omni": _run_qwen_omni,
    "qwen3-omni-moe": _run_qwen_omni,
    "qwen3.5": _run_qwen3_5,
    "qwen3-vl": _run_qwen3_5,  # the same Qwen3-VL processor and grid
    "qwen3-vl-moe": _run_qwen3_5,
    "qwen3.5-moe": _run_qwen3_5,
    "qwen4-exp": _run_qwen3_5,
    "gemma4": _run_gemma4,
    "glm4v": _run_glm_v,
    "glm46v": _run_glm_v,
    "glmga": _run_glm_v,
    "glm5-next": _run_glm_v,
    "ernie4.5-vl": _run_ernie4_5_vl,
    "exaone4.5": _run_qwen2_vl,
    "minicpmv4.6": _run_minicpm,
    "minicpmv4.7": _run_minicpm,
    "minicpm-ocr": _run_minicpm,
    "hyperclovax-vision-v2": _run_hyperclovax_vision_v2,
    "cosmos3-edge": _run_cosmos3_edge,
    "cosmos3-omni": _run_qwen3_5,  # the Reasoner is Qwen3-VL: its processor and grid
    "lfm3-vl": _run_lfm3_vl,
    "kimi-k2.5": _run_kimi_k25,
    "muse-glimmer": _run_muse_glimmer,
    "muse-spark": _run_muse_glimmer,
    "minimax-m3-vl": _run_minimax_m3_vl,
    "gemma4-unified": _run_gemma4_unified,
    "nemotron-h-omni": _run_nemotron_h_omni,
    "cohere-compass": _run_cohere_compass,
    "dots3-note": _run_dots3_note,
    "instructblip-video": _run_instructblip_video,
    "instructblip": _run_instructblip,
    "llava": _run_llava,
}


def test_every_family_has_a_forward_test():
    assert set(RUNNERS) == set(TINY_MODELS)


def _skip_without_requirements(name: str) -> None:
    missing = TINY_MODELS[name].missing()
    if missing:
        pytest.skip(f"the tiny {name} needs {', '.join(missing)} (pip install {missing[0]})")


@pytest.mark.parametrize("name", list(TINY_MODELS))
def test_family_reloads_and_runs(name, tiny_root):
    _skip_without_requirements(name)
    RUNNERS[name](tiny_model_path(name, tiny_root))


@pytest.mark.parametrize("name", list(TINY_MODELS))
def test_build_is_deterministic(name, tmp_path):
    _skip_without_requirements(name)
    first, second = build_tiny_model(name, tmp_path / "a"), build_tiny_model(name, tmp_path / "b")
    # sub-folders too: InstructBLIP saves its Q-Former's tokenizer in qformer_tokenizer/
    files = sorted(str(p.relative_to(first)) for p in first.rglob("*") if p.is_file())
    assert files == sorted(str(p.relative_to(second)) for p in second.rglob("*") if p.is_file())
    for file in files:  # weights, configs and tokenizer files, byte for byte
        assert (first / file).read_bytes() == (second / file).read_bytes(), file


def test_cache_is_reused(tmp_path):
    path = tiny_model_path("gpt2", tmp_path)
    stamp = (path / "model.safetensors").stat().st_mtime_ns
    assert tiny_model_path("gpt2", tmp_path) == path
    assert (path / "model.safetensors").stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no staging folder left behind


def test_losing_a_build_race_keeps_the_winner(tmp_path, monkeypatch):
    """Another process renames its build into place first: ours is discarded, theirs returned."""
    import foilkit.synthetic.models as tiny

    winner = tmp_path / f"gpt2-{tiny.fingerprint()}"

    def build_while_another_process_finishes(name, out_dir):
        winner.mkdir()
        (winner / "marker").write_text("built by the other process")
        return original(name, out_dir)

    original = tiny.build_tiny_model
    monkeypatch.setattr(tiny, "build_tiny_model", build_while_another_process_finishes)
    assert tiny_model_path("gpt2", tmp_path) == winner
    assert (winner / "marker").read_text() == "built by the other process"
    assert [p.name for p in tmp_path.iterdir()] == [winner.name]


def test_unknown_name_lists_the_known_ones(tmp_path):
    with pytest.raises(KeyError, match="clip"):
        tiny_model_path("no-such-model", tmp_path)
