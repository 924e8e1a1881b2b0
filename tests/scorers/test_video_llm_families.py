"""The video LLM adapter across families: who is refused (no video), a family without a chat
template (InstructBLIP-Video), and missing optional packages."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
import torch
from answering_model import assert_greedy_answer_follows_the_logits
from conformance import TEXTS, render_view, score_benchmark

from foilkit.builders.velociti.answers import ENTAIL_QUESTION
from foilkit.builders.vitatecs.answers import choice_question
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.adapters._features import token_logprobs
from foilkit.scorers.adapters._video_llm_support import (
    INSTALL_EXTRA,
    PLAIN_PROMPTS,
    VIDEO_LLM_EXTRA,
    takes_video,
    video_variant,
)
from foilkit.scorers.modes import LIKELIHOOD_QUESTION
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic.models import INSTRUCTBLIP_FRAMES

REPO = Path(__file__).resolve().parents[2]


# --- which models take video: transformers' own declarations ------------------------------------


def _processor_class(model_type: str) -> type:
    import transformers
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    return getattr(transformers, PROCESSOR_MAPPING_NAMES[model_type])


@pytest.mark.parametrize("model_type", ["llava", "llava_next", "gemma3", "gemma3n", "paligemma"])
def test_image_only_processors_take_no_video(model_type):
    assert not takes_video(_processor_class(model_type))


@pytest.mark.parametrize(
    "model_type",
    ["llava_next_video", "llava_onevision", "qwen2_vl", "qwen3_5", "gemma4", "instructblipvideo"],
)
def test_video_processors_take_video(model_type):
    assert takes_video(_processor_class(model_type))


def test_every_model_type_with_a_video_processor_is_taken():
    """What the adapter derives agrees with transformers' VIDEO_PROCESSOR_MAPPING_NAMES."""
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    checked = 0
    for model_type in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        name = PROCESSOR_MAPPING_NAMES.get(model_type)
        if model_type not in VIDEO_PROCESSOR_MAPPING_NAMES or not hasattr(transformers, name or ""):
            continue
        variant = video_variant(model_type)  # the checkpoints read with another model's classes
        processor = getattr(transformers, PROCESSOR_MAPPING_NAMES[variant or model_type])
        assert takes_video(processor), model_type
        checked += 1
    assert checked >= 10
    assert video_variant("instructblip") == "instructblipvideo"
    assert video_variant("qwen2_vl") is None and video_variant("llava") is None


def test_an_image_only_model_is_refused_before_scoring(tiny_model):
    with pytest.raises(ValueError, match="model_type 'llava' takes no video") as error:
        load_adapter(tiny_model("llava"), device="cpu")
    assert "\n" not in str(error.value) and "LlavaProcessor" in str(error.value)


def test_a_chat_template_without_video_is_refused(tiny_model, tmp_path):
    """A video processor is not enough: the chat template must write the video placeholder."""
    folder = tmp_path / "qwen2-vl-no-video-template"
    shutil.copytree(tiny_model("qwen2-vl"), folder)
    template = (
        "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
        "{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
        "{% endif %}{% endfor %}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    for path in folder.glob("chat_template.*"):
        path.unlink()
    (folder / "chat_template.jinja").write_text(template)
    with pytest.raises(ValueError, match=r"chat template writes no video placeholder"):
        load_adapter(str(folder), device="cpu")


# --- InstructBLIP-Video: no chat template --------------------------------------------------------


@pytest.fixture(scope="module")
def instructblip(tiny_model):
    path = tiny_model("instructblip-video")
    modes = ("likelihood", "choice", "generate", "entail")
    return {mode: load_adapter(path, mode=mode, device="cpu") for mode in modes}


def _forward(adapter, frames: torch.Tensor, text: str, instruction: str):
    """Logits and ids of one forward over ``text``, the Q-Former reading ``instruction``: as the
    model card calls the processor, with the Q-Former's input of the instruction alone."""
    processor = adapter.processor
    inputs = processor(text=[text], images=[frames], return_tensors="pt")
    qformer = processor.qformer_tokenizer([instruction], return_tensors="pt")
    inputs["qformer_input_ids"] = qformer["input_ids"]
    inputs["qformer_attention_mask"] = qformer["attention_mask"]
    with torch.inference_mode():
        return adapter.model(**inputs).logits[0], inputs["input_ids"][0]


def test_instructblip_video_has_no_chat_template_and_records_its_prompt(instructblip):
    likelihood = instructblip["likelihood"]
    assert not likelihood.processor.chat_template
    record = likelihood.describe()["prompt_format"]
    assert record["template"] == PLAIN_PROMPTS["instructblipvideo"].template == "{question}"
    assert record["answer_separator"] == " " and "InstructBlipVideo" in record["source"]
    prefix, answers = likelihood.prompt_texts(TEXTS)
    assert prefix == LIKELIHOOD_QUESTION and answers == [" " + text for text in TEXTS]


def test_instructblip_video_likelihood_equals_a_full_forward(instructblip):
    likelihood, frames = instructblip["likelihood"], render_view(INSTRUCTBLIP_FRAMES)
    scored = likelihood.score([TextsRequest(TEXTS, frames)])[0]
    question = LIKELIHOOD_QUESTION
    for position, text in enumerate(TEXTS):
        logits, ids = _forward(likelihood, frames, f"{question} {text}", question)
        count = len(likelihood.encode(f"{question} {text}")) - len(likelihood.encode(question))
        expected = token_logprobs(logits[-count - 1 : -1], ids[-count:])
        assert scored.details["num_tokens"][position] == len(expected) > 0
        assert scored.details["logprob_sum"][position] == pytest.approx(
            float(expected.sum()), abs=1e-4
        )


def test_instructblip_video_choice_equals_a_full_forward(instructblip):
    """Each order's question is the prompt and what the Q-Former reads; the letter follows it."""
    choice, frames = instructblip["choice"], render_view(INSTRUCTBLIP_FRAMES)
    probabilities = []
    for order in (TEXTS, TEXTS[::-1]):
        question = choice_question(order)
        logits, _ = _forward(choice, frames, question, question)
        letters = torch.stack(
            [torch.logsumexp(logits[-1, ids], 0) for ids in choice._letter_ids[:2]]
        ).softmax(0)
        probabilities.append(letters if order == TEXTS else letters.flip(0))
    scored = choice.score([TextsRequest(TEXTS, frames)])[0].scores
    assert scored == pytest.approx(torch.stack(probabilities).mean(0).tolist(), abs=1e-5)


def test_instructblip_video_generates_what_its_logits_rank_first(instructblip):
    """Generate mode on the plain prompt, the Q-Former reading the question."""
    frames = render_view(INSTRUCTBLIP_FRAMES)
    assert_greedy_answer_follows_the_logits(instructblip["generate"], frames, TEXTS)


def test_instructblip_video_entail_equals_a_full_forward(instructblip):
    """Each text's entailment question is the prompt and what the Q-Former reads."""
    entail, frames = instructblip["entail"], render_view(INSTRUCTBLIP_FRAMES)
    yes, no = entail._entail_ids
    expected = []
    for text in TEXTS:
        question = ENTAIL_QUESTION.format(caption=text)
        logits, _ = _forward(entail, frames, question, question)
        expected.append(float(logits[-1, [yes, no]].float().softmax(0)[0]))
    scored = entail.score([TextsRequest(TEXTS, frames)])[0].scores
    assert scored == pytest.approx(expected, abs=1e-5)


def test_an_instructblip_checkpoint_is_read_as_instructblip_video(tiny_model):
    """The Salesforce/instructblip-* layout (model_type ``instructblip``, an image processor) is
    scored through the InstructBLIP-Video classes, as a full forward with them scores it."""
    from transformers import InstructBlipVideoForConditionalGeneration, InstructBlipVideoProcessor

    path = tiny_model("instructblip")
    likelihood = load_adapter(path, mode="likelihood", device="cpu")
    assert likelihood.describe()["loaded_as"] == "instructblipvideo"
    assert type(likelihood.model) is InstructBlipVideoForConditionalGeneration
    frames = render_view(INSTRUCTBLIP_FRAMES)
    scored = likelihood.score([TextsRequest(TEXTS[:1], frames)])[0]

    class Independent:  # the video classes loaded by hand
        processor = InstructBlipVideoProcessor.from_pretrained(path)
        model = InstructBlipVideoForConditionalGeneration.from_pretrained(path).eval()

    question, text = LIKELIHOOD_QUESTION, TEXTS[0]
    logits, ids = _forward(Independent, frames, f"{question} {text}", question)
    count = int(scored.details["num_tokens"][0])
    expected = token_logprobs(logits[-count - 1 : -1], ids[-count:])
    assert scored.details["logprob_sum"][0] == pytest.approx(float(expected.sum()), abs=1e-4)


def test_a_checkpoint_without_the_video_token_is_refused(tiny_model, tmp_path):
    folder = tmp_path / "instructblip-no-video-token"
    shutil.copytree(tiny_model("instructblip"), folder)
    config = json.loads((folder / "config.json").read_text())
    del config["video_token_index"]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="has no video placeholder"):
        load_adapter(str(folder), device="cpu")


def test_instructblip_video_names_the_frames_it_takes(instructblip):
    with pytest.raises(ValueError, match=r"takes 4 frames a view, got 8: score with --frames 4"):
        instructblip["likelihood"].score([TextsRequest(TEXTS, render_view(8))])


@pytest.mark.parametrize("mode", ["likelihood", "choice"])
def test_instructblip_video_scores_a_benchmark_end_to_end(
    mode, tiny_model, benchmark_with_broken, tmp_path
):
    import math

    path = tiny_model("instructblip-video")
    options = {"num_frames": INSTRUCTBLIP_FRAMES}
    result, run = score_benchmark(path, benchmark_with_broken, mode, tmp_path, **options)
    assert run["adapter"]["prompt_format"]["template"] == "{question}"
    assert run["adapter"]["prefix_reuse"] == "crop"
    rows = [row for row in result if not row["error"]]
    assert len(rows) == len(result) - 2  # the corrupt and the missing video
    for row in rows:
        assert len(row["frame_indices"]) == INSTRUCTBLIP_FRAMES
        scores = [row["caption_score"], *row["foil_scores"]]
        assert all(map(math.isfinite, scores))
        if mode == "choice":
            assert sum(scores) == pytest.approx(1.0, abs=1e-5)


# --- optional packages ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        # SmolVLM's processor, and transformers' backend check for timm (Perception LM)
        "Package `num2words` is required to run SmolVLM processor. Install it with "
        "`pip install num2words`.",
        "TimmWrapperConfig requires the timm library but it was not found in your environment.",
    ],
)
def test_a_missing_optional_package_names_the_install(message, tiny_model, monkeypatch):
    from transformers import AutoProcessor

    def missing(*args, **kwargs):
        raise ImportError(message)

    monkeypatch.setattr(AutoProcessor, "from_pretrained", missing)
    with pytest.raises(ImportError) as error:
        load_adapter(tiny_model("qwen2-vl"), device="cpu")
    text = str(error.value)
    assert "\n" not in text and INSTALL_EXTRA in text
    assert any(f"package {package!r}" in text for package in VIDEO_LLM_EXTRA)


def test_a_config_needing_timm_names_the_install_before_an_adapter_is_chosen(
    tiny_model, monkeypatch
):
    """Perception LM's config builds a timm vision config: the ImportError comes while the
    adapter is being chosen from the config."""
    from transformers import AutoConfig

    def missing(*args, **kwargs):
        raise ImportError(
            "\nTimmWrapperConfig requires the timm library but it was not found in your "
            "environment. You can install it with pip:\n`pip install timm`.\n"
        )

    monkeypatch.setattr(AutoConfig, "from_pretrained", missing)
    with pytest.raises(ImportError) as error:
        load_adapter(tiny_model("qwen2-vl"), device="cpu")
    assert str(error.value) == (
        f"{tiny_model('qwen2-vl')} needs the package 'timm', which is not installed: "
        f"{INSTALL_EXTRA} (or pip install timm)"
    )


def test_another_import_error_is_left_alone(tiny_model, monkeypatch):
    from transformers import AutoProcessor

    def missing(*args, **kwargs):
        raise ImportError("No module named 'something_else'")

    monkeypatch.setattr(AutoProcessor, "from_pretrained", missing)
    with pytest.raises(ImportError, match="something_else"):
        load_adapter(tiny_model("qwen2-vl"), device="cpu")


def test_the_video_llm_extra_is_declared_and_pinned():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    declared = {entry.split(">")[0].split("=")[0].strip() for entry in extras["video-llm"]}
    assert declared == set(VIDEO_LLM_EXTRA)
    pins = {
        line.split("==")[0]
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    assert set(VIDEO_LLM_EXTRA) <= pins
