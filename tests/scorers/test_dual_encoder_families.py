"""Image-text dual encoders beyond CLIP/SigLIP on frames: ALIGN and TIPSv2 (chosen from their
config), BLIP's ITC towers (``--adapter dual-encoder`` on a BLIP retrieval checkpoint), each
embedding as the model's own forward does; a model without image and text towers is refused by
name."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from foilkit.scorers.adapters import adapter_class, load_adapter
from foilkit.scorers.api import score

TEXTS = ["a red square moves left", "a blue square moves right", "the ball rolls slowly"]


def _frames(count: int, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (count, 3, 48, 64), dtype=torch.uint8, generator=generator)


def _model_and_processor(path: str, auto_class=None):
    from transformers import AutoModel, AutoProcessor

    model = (auto_class or AutoModel).from_pretrained(path).eval()
    return model, AutoProcessor.from_pretrained(path)


@pytest.mark.parametrize("family", ["align", "tipsv2"])
def test_the_config_chooses_the_dual_encoder_and_every_row_scores(family, tiny_model, benchmark):
    path = tiny_model(family)
    assert adapter_class(path).name == "dual-encoder"
    rows = score(path, benchmark, num_workers=0, progress=False, use_cache=False)
    assert not any(rows["error"]) and np.isfinite(rows["caption_score"]).all()


@pytest.mark.parametrize("family", ["align", "tipsv2"])
def test_frame_and_text_embeddings_are_the_models_own(family, tiny_model):
    """The model's logits are ``cosine / temperature``: the adapter's cosine times its logit
    scale equals them, on frames and texts the model's processor prepares independently."""
    path = tiny_model(family)
    frames = _frames(3)
    adapter = load_adapter(path, device="cpu", pooling="mean-of-similarities")
    view = adapter.encode_views([frames])[0]
    texts = adapter.encode_texts(TEXTS)
    model, processor = _model_and_processor(path)
    with torch.no_grad():
        out = model(**processor(images=list(frames), text=TEXTS, return_tensors="pt"))
    torch.testing.assert_close(view, out.image_embeds, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(texts, out.text_embeds, rtol=1e-4, atol=1e-5)
    assert adapter.logit_scale == pytest.approx(float(1 / model.temperature.detach()))
    logits = adapter.logit_scale * (texts.double() @ view.double().T).T
    torch.testing.assert_close(logits.float(), out.logits_per_image, rtol=1e-4, atol=1e-4)


def test_blip_itc_is_the_dual_encoder_path_of_a_retrieval_checkpoint(tiny_model, benchmark):
    """Named explicitly, the dual encoder scores a BLIP retrieval checkpoint by its ITC cosine
    (``use_itm_head=False``); by default the checkpoint stays with the ITM adapter."""
    from transformers import BlipForImageTextRetrieval

    path = tiny_model("blip-itm")
    assert adapter_class(path).name == "blip-itm"
    adapter = load_adapter(path, adapter="dual-encoder", device="cpu")
    frames = _frames(2)
    views = adapter.encode_views([frames[:1], frames[1:]])
    texts = adapter.encode_texts(TEXTS)
    scores = torch.stack([adapter.similarity(view, texts) for view in views])
    model, processor = _model_and_processor(path, BlipForImageTextRetrieval)
    inputs = processor(images=list(frames), text=TEXTS, return_tensors="pt", padding=True)
    cosines = []
    for image in range(2):  # BLIP's forward pairs images and texts row by row
        with torch.no_grad():
            out = model(
                input_ids=inputs["input_ids"],
                attention_mask=inputs["attention_mask"],
                pixel_values=inputs["pixel_values"][image : image + 1],
                use_itm_head=False,
            )
        cosines.append(out.itm_score[0])
    torch.testing.assert_close(scores, torch.stack(cosines), rtol=1e-4, atol=1e-5)
    rows = score(
        path, benchmark, adapter="dual-encoder", num_workers=0, progress=False, use_cache=False
    )
    assert not any(rows["error"])
    with pytest.raises(ValueError, match="has no learned logit scale.*softmax-mean"):
        load_adapter(path, adapter="dual-encoder", device="cpu", pooling="softmax-mean")


def test_a_model_without_image_and_text_towers_is_refused_by_name(tiny_model):
    """VideoPrism embeds whole clips: the dual encoder names the adapter that handles it."""
    with pytest.raises(ValueError, match=r"no image tower .* its own adapter is 'videoprism'"):
        load_adapter(tiny_model("videoprism"), adapter="dual-encoder", device="cpu")


def test_an_unsupported_video_text_embedder_is_refused_with_the_reason(tmp_path):
    from transformers import EmbeddingGemma2Config

    EmbeddingGemma2Config().save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"model_type='embedding_gemma2'.*hidden states only"):
        adapter_class(str(tmp_path))
