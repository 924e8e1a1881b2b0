"""Conformance of the MiniCPM families (MiniCPM-V 4.6, MiniCPM-V 4.7, MiniCPM OCR): each tiny twin,
with its real processor classes, a Qwen byte-level BPE carrying MiniCPM-V's named special tokens
(the real Qwen3 one in ``minicpmv4.6-qwen3``) and the chat template reconstructed in
:mod:`foilkit.synthetic.models.minicpm`, is scored as a real checkpoint would be, in every mode
of the video-LLM adapter.

The checks are those of ``test_conformance_more_vlms.py`` (both run ``conformance.py``'s):
the model sees the token ids of the whole rendered chat template; the answer scored on the cached
video prefix scores as one forward over the whole prompt; every frame becomes the ``<image>``
group of ``<|video_pad|>`` tokens the model fills with as many embeddings; the frames' real
times reach the video processor (which takes ``video_metadata`` but, stacking no sub-frames,
lays frames out without a time axis); a reversed view reverses the frames the model sees;
``generate`` and ``entail`` follow the logits; a benchmark scores end to end.
"""

from __future__ import annotations

import pytest
import torch
from conformance import (
    FRAMES,
    INTERVAL,
    TEXTS,
    TIMESTAMPS,
    assert_follows_the_logits,
    assert_rows_scored,
    assert_the_cached_prefix_scores_as_one_forward,
    assert_the_template_reaches_the_model,
    feature_rows,
    has_real_tokenizer,
    load_modes,
    placeholder_count,
    processed,
    prompts_up_to_the_answer,
    reversed_prefixes,
    rows_by_id,
    score_benchmark,
    scored_calls,
)

from foilkit.scorers.adapters import load_adapter
from foilkit.synthetic.models.minicpm import MINICPM_TOKENS, MINICPM_V_CHAT_TEMPLATE

MODES = ("likelihood", "choice", "entail", "generate")
#: where the model writes its answer: the generation prompt with thinking off
ANSWER_OPENS = "<|im_start|>assistant\n<think>\n\n</think>\n\n"


def minicpm_features(model, inputs: dict) -> int:
    """Embeddings the model makes of the video's frames and their slices."""
    features = model.model.get_video_features(
        inputs["pixel_values_videos"], inputs["target_sizes_videos"]
    )
    return feature_rows(features)


def per_frame(pixels: torch.Tensor) -> torch.Tensor:
    """The packed video pixels (``1 x C x patch x width``: each frame's source image, then its
    slices, all of one size here) one row per frame."""
    channels, patch = pixels.shape[1:3]
    return pixels.reshape(channels, patch, FRAMES, -1).permute(2, 0, 1, 3).reshape(FRAMES, -1)


#: model_type -> its twin and what its prompt opens the video with (4.7 ignores image ids for
#: video; the others number it, as their processors' ``use_image_id`` default asks)
FAMILIES = {
    "minicpmv4_6": ("minicpmv4.6", "<image_id>0</image_id><image>"),
    "minicpmv4_7": ("minicpmv4.7", "<image>"),
    "minicpm_ocr": ("minicpm-ocr", "<image_id>0</image_id><image>"),
}


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tiny_model):
    """What the family's prompt opens the video with, its twin's path, and the twin loaded in
    each mode."""
    twin, opens_video = FAMILIES[request.param]
    path = tiny_model(twin)
    return opens_video, path, load_modes(path, MODES)


def test_the_template_writes_the_reconstructed_turns(family):
    """The reconstructed template renders the turns as MiniCPM-V 4.6's does (parts joined by a
    newline, a bare ``<|video_pad|>``, thinking off unless asked for), and every named token the
    processor looks up is one token of the tokenizer, the model's placeholder ids among them."""
    *_, adapters = family
    processor = adapters["likelihood"].processor
    assert processor.chat_template == MINICPM_V_CHAT_TEMPLATE
    system = {"role": "system", "content": [{"type": "text", "text": "Be brief."}]}
    user = {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "What?"}]}
    answer = {"role": "assistant", "content": [{"type": "text", "text": "A square."}]}
    render = processor.apply_chat_template
    assert render([system, user, answer], tokenize=False) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n<|video_pad|>\nWhat?"
        "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nA square.<|im_end|>\n"
    )
    prompt = "<|im_start|>user\n<|video_pad|>\nWhat?<|im_end|>\n<|im_start|>assistant\n"
    assert render([user], add_generation_prompt=True, tokenize=False) == (
        prompt + "<think>\n\n</think>\n\n"
    )
    thinking = render([user], add_generation_prompt=True, tokenize=False, enable_thinking=True)
    assert thinking == prompt + "<think>\n"
    tokenizer = processor.tokenizer
    for name, token in MINICPM_TOKENS.items():
        assert getattr(tokenizer, name) == token
        assert len(tokenizer.encode(token, add_special_tokens=False)) == 1, token
    config = adapters["likelihood"].model.config
    assert config.video_token_id == tokenizer.convert_tokens_to_ids("<|video_pad|>")
    assert config.image_token_id == tokenizer.convert_tokens_to_ids("<|image_pad|>")


def test_the_families_table_says_what_is_reconstructed():
    """The table marks each family tested by this file, saying in one line that its template and
    named tokens are reconstructed, not the checkpoint's."""
    from foilkit.synthetic.models.families import family as table_row

    for model_type, (twin, _) in FAMILIES.items():
        row = table_row(model_type)
        assert (row.status, row.twin) == ("tested", twin)
        assert row.test == "tests/scorers/test_conformance_minicpm.py"
        assert "reconstructed" in row.reason and "\n" not in row.reason


@pytest.mark.parametrize("mode", ["likelihood", "choice"])
def test_the_model_sees_the_whole_rendered_template(family, mode, frames):
    *_, adapters = family
    adapter = adapters[mode]
    assert_the_template_reaches_the_model(adapter, frames, ANSWER_OPENS)
    if mode == "choice":  # nothing led in before the letter
        assert adapter.describe().get("answer_lead_in", "") == ""


def test_the_cached_video_prefix_scores_as_one_forward_over_the_whole_prompt(family, frames):
    """The video prefix is encoded once and each answer runs on a copy of its cache (Qwen3.5's
    linear-attention layers keep a running state): the answer's log-probability equals one
    forward over the whole prompt."""
    *_, adapters = family
    assert_the_cached_prefix_scores_as_one_forward(adapters["likelihood"], frames, ANSWER_OPENS)


def test_every_frame_becomes_the_video_tokens_the_model_consumes(family, frames):
    """Each frame is one ``<image>`` group (its source image) then rows of ``<slice>`` groups;
    the ``<|video_pad|>`` tokens are as many as the embeddings the model makes of them."""
    opens_video, _, adapters = family
    adapter = adapters["likelihood"]
    prefix, *_ = scored_calls(adapter, frames)
    tokenizer = adapter.tokenizer
    ids = prefix["input_ids"][0]
    shown = tokenizer.decode(ids)
    assert shown.startswith("<|im_start|>user\n" + opens_video)
    count = {
        token: int((ids == tokenizer.convert_tokens_to_ids(token)).sum())
        for token in ("<image>", "</image>", "<slice>", "</slice>", "<image_id>")
    }
    assert count["<image>"] == count["</image>"] == FRAMES  # no frame dropped
    assert count["<slice>"] == count["</slice>"] == 4 * FRAMES  # a 2x2 grid of slices a frame
    assert count["<image_id>"] == opens_video.count("<image_id>")  # one id for the whole video
    with torch.inference_mode():
        consumed = minicpm_features(adapter.model, prefix)
    assert placeholder_count(prefix, adapter.model.config.video_token_id) == consumed > 0


def test_the_frames_real_times_reach_the_video_processor(family, frames, monkeypatch):
    """The video processor is given the frames' real times (0.75 s apart from 0.375 s) as
    ``video_metadata``; stacking no sub-frames (``stack_frames=1``), it lays them out without a
    time axis, so what the model sees is its output at those times, the same as at 24 fps."""
    *_, adapters = family
    adapter = adapters["likelihood"]
    video_processor = adapter.processor.video_processor
    given = []

    def preprocess(videos, **kwargs):
        given.append(kwargs.get("video_metadata"))
        return type(video_processor).preprocess(video_processor, videos, **kwargs)

    monkeypatch.setattr(video_processor, "preprocess", preprocess)
    prefix, *_ = scored_calls(adapter, frames)
    monkeypatch.undo()
    assert given and given[0] is not None, "no video_metadata reached the video processor"
    (metadata,) = given[0]
    metadata = dict(metadata)
    assert metadata["fps"] == pytest.approx(1 / INTERVAL)
    times = [index / metadata["fps"] for index in metadata["frames_indices"]]
    assert times == pytest.approx(list(TIMESTAMPS))
    text = adapter.prompt_texts(TEXTS)[0]
    real = processed(adapter, frames, text, TIMESTAMPS)
    default = processed(adapter, frames, text, tuple(k / 24 for k in range(FRAMES)))
    for key in ("input_ids", "pixel_values_videos", "target_sizes_videos"):
        assert torch.equal(prefix[key], real[key]), key
        assert torch.equal(real[key], default[key]), key


def test_a_reversed_view_reverses_what_the_model_sees(family, frames):
    *_, adapters = family
    forward, backward = reversed_prefixes(adapters["likelihood"], frames)
    before, after = (per_frame(call["pixel_values_videos"]) for call in (forward, backward))
    assert not torch.equal(after, before)
    assert torch.equal(after, before.flip(0))


@pytest.mark.parametrize("mode", ["generate", "entail"])
def test_generate_and_entail_follow_the_logits(family, mode, frames):
    """``--mode "generate"``: a one-token greedy answer is the token a full forward over the
    whole rendered prompt ranks first; ``--mode "entail"``: P(Yes) / (P(Yes) + P(No)) after each
    text's entailment question equals a full forward over the whole prompt."""
    *_, adapters = family
    assert_follows_the_logits(adapters[mode], frames)


@pytest.fixture(scope="module")
def benchmark(benchmark_with_broken):
    """One video's forward and reversed rows, a corrupt and a missing video."""
    ids = ["left-forward", "left-reverse", "corrupt", "missing"]
    return rows_by_id(benchmark_with_broken, ids)


@pytest.mark.parametrize("mode", MODES)
def test_a_benchmark_scores_end_to_end(family, mode, benchmark, tmp_path):
    _, path, _ = family
    generating = {"max_new_tokens": 4} if mode == "generate" else {}  # random tokens: a few do
    result, run = score_benchmark(path, benchmark, mode, tmp_path, **generating)
    assert run["adapter"]["adapter"] == "video-llm" and run["adapter"]["mode"] == mode
    rows = [row for row in result if not row["error"]]
    assert {row["id"] for row in result if row["error"]} == {"corrupt", "missing"}
    assert len(rows) == 2
    assert_rows_scored(rows, mode)


@pytest.mark.skipif(
    not has_real_tokenizer("qwen3"),
    reason="the real Qwen3 tokenizer was not fetched (`./dev.sh test --co -q` fetches it)",
)
def test_the_real_qwen_tokenizer_sees_the_whole_rendered_template(frames):
    """Around the real Qwen3 byte-level BPE (MiniCPM-V's named tokens added), the model sees the
    ids of the whole rendered template, segmented as a Qwen-vocabulary checkpoint segments it."""
    from foilkit.synthetic.models import fidelity_model_path

    adapter = load_adapter(str(fidelity_model_path("minicpmv4.6-qwen3")), device="cpu")
    assert adapter.mode == "likelihood" and len(adapter.tokenizer) == 151_675
    prefix, continuations, _ = scored_calls(adapter, frames)
    for whole, continuation in zip(prompts_up_to_the_answer(adapter, ANSWER_OPENS), continuations):
        expected = processed(adapter, frames, whole, TIMESTAMPS)["input_ids"][0]
        assert prefix["input_ids"][0].tolist() + continuation == expected.tolist()
        assert adapter.tokenizer.decode(expected).endswith(whole.split("<|video_pad|>")[-1])
