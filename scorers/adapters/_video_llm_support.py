"""What the video LLM adapter needs to know about a model beyond its chat template, as data.

Each question is answered from what transformers declares rather than from lists of model
names: does the model take video at all (:func:`video_refusal`, :func:`broken_video`,
:func:`image_only`); how is the video prefix's KV cache reused (:func:`prefix_reuse`) and how do
the questions about one view decode together on it (:func:`batching`); which part of an omni
model answers in text (:func:`text_part`); which video model's classes read a checkpoint whose
own processor takes no video (:func:`video_variant`). The per-family facts that cannot be
derived are declared here by ``model_type`` or processor class: the prompt of a family without
a chat template (:data:`PLAIN_PROMPTS`), processors that expand the video into per-frame vision
segments (:data:`PER_FRAME_VIDEO_SEGMENTS`) or read the frames' rate as ``fps``
(:data:`RATE_KEYWORD`). One fact is read off the chat template by rendering it: how it writes a
turn's ``content`` (:func:`content_forms`). A missing optional package of
:data:`VIDEO_LLM_EXTRA` is reported as one line naming the install (:func:`naming_the_extra`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

#: How a continuation runs on top of the video prefix, by what the prefix's cache can do.
#: ``crop``: every layer keeps every past key/value and is cut back after the continuation;
#: ``copy``: some layer keeps only a window (sliding-window attention) or a running state
#: (linear attention, convolutions), which cannot be cut back, so each continuation runs on a
#: deep copy of the prefix cache; ``full``: the model returns no cache to reuse, so each text
#: runs in one forward over the whole prompt.
PREFIX_REUSE = ("crop", "copy", "full")
#: How the questions about one view decode together after its prefix (:func:`batching`), by what
#: the prefix's cache layers allow: ``padded``: every layer keeps every past key/value, so
#: questions of any length decode in one batch, left-padded, the pads masked and the positions
#: given; ``same-length``: a layer keeps only a window (sliding-window attention), where a pad
#: would take a real token's place, so only questions of one token length decode together;
#: ``off``: a layer keeps a running state (linear attention, convolutions) that a pad would
#: change, or there is no cache: one question at a time.
BATCHINGS = ("padded", "same-length", "off")

#: Optional packages some video LLMs need (the ``video-llm`` extra of ``pyproject.toml``):
#: ``num2words`` for SmolVLM's processor (it spells frame counts out), ``timm`` for vision
#: towers wrapped from timm (Perception LM).
VIDEO_LLM_EXTRA = ("num2words", "timm")
INSTALL_EXTRA = "pip install 'foilkit[video-llm]'"


@dataclass(frozen=True)
class PlainPrompt:
    """How a family without a chat template is prompted: ``template`` around the question, the
    answer written right after it, separated by ``answer_separator``; ``frames``: the number of
    frames the model takes per view (``None``: any); ``source``: where this format comes from."""

    template: str
    answer_separator: str
    frames: int | None
    source: str

    def render(self, question: str) -> str:
        return self.template.format(question=question)


#: Families whose checkpoints ship no chat template, by ``model_type``.
PLAIN_PROMPTS: dict[str, PlainPrompt] = {
    # transformers' InstructBlipVideo usage example and the Salesforce/instructblip-* model cards
    # pass the bare question as ``text`` (the processor puts the video's query tokens and BOS
    # before it); LAVIS' blip2_vicuna_instruct appends the separately tokenized answer after the
    # prompt (SentencePiece gives its first word a leading space). Its processor writes the
    # placeholders of 4 frames (num_query_tokens x 4), the frame count it was trained with.
    "instructblipvideo": PlainPrompt(
        template="{question}",
        answer_separator=" ",
        frames=4,
        source="transformers InstructBlipVideo usage example; LAVIS blip2_vicuna_instruct",
    ),
}


#: How a system prompt reaches a chat template: a system turn whose content is a list of text
#: parts (the multimodal convention), a system turn whose content is a string (a template that
#: would print a list as its Python repr: Perception LM's ``content|trim``), or the start of the
#: user turn's text (a template with no system role: Molmo2's raises on one).
SYSTEM_FORMS = ("parts", "string", "user")
#: How an answer (an assistant turn) reaches a chat template: a list of text parts, or a string
#: (a template that writes a turn's content as it is: GLM-4.1V's ``{{ msg.content }}``).
ANSWER_FORMS = ("parts", "string")


@dataclass(frozen=True)
class ContentForms:
    """How a chat template writes a text-only turn's ``content``, per role (:func:`content_forms`):
    ``system`` one of :data:`SYSTEM_FORMS`, ``answer`` one of :data:`ANSWER_FORMS`."""

    system: str = "parts"
    answer: str = "parts"


def content_forms(
    render: Callable[[list[dict[str, Any]]], str], text: str, messages: list[dict[str, Any]]
) -> ContentForms:
    """How the chat template (``render``: a conversation, rendered without a generation prompt)
    writes a turn's ``content``: for a system turn before ``messages`` and for an assistant turn
    after them, the first form, a list of text parts then a string, in which it writes ``text``
    as text (not as a list's repr); ``text`` must not occur in ``messages``. A system prompt
    written in neither form opens the user turn (``user``: no system role); an answer written in
    neither keeps the parts (no assistant turns: the answer follows the prompt)."""
    from jinja2 import TemplateError

    def written(turns: Callable[[str | list[dict[str, str]]], list[dict[str, Any]]]) -> str | None:
        for form, content in (("parts", [{"type": "text", "text": text}]), ("string", text)):
            try:
                rendered = render(turns(content))
            except (TemplateError, TypeError, ValueError):  # no such role, or no such content
                continue
            if text in rendered and (form == "string" or str(content) not in rendered):
                return form  # as text, not as the list's repr
        return None

    system = written(lambda content: [{"role": "system", "content": content}, *messages])
    answer = written(lambda content: [*messages, {"role": "assistant", "content": content}])
    return ContentForms(system=system or "user", answer=answer or "parts")


#: Processors (by class name) whose video placeholder becomes one ``<t seconds><|vision_start|>
#: ...<|vision_end|>`` segment per temporal patch. The chat template writes the video part as
#: ``vision_start + video_token + vision_end``; the reference processor replaces that whole
#: part, so the segments stand alone, as the model saw them in training. transformers 5.23's
#: processor replaces only ``video_token`` and leaves the template's own pair around all the
#: segments (its ``Cosmos3EdgeProcessor`` docstring calls such an outer wrapper invalid), so
#: foilkit writes the video part as the bare ``video_token`` before the processor expands it.
#: The value: the reference processor's code.
PER_FRAME_VIDEO_SEGMENTS: dict[str, str] = {
    # every Qwen3-VL-processor family: Qwen3-VL, Qwen3-VL-MoE, Qwen3.5, Qwen3.5-MoE, Qwen4-Exp
    "Qwen3VLProcessor": "transformers 4.57 Qwen3VLProcessor.__call__ (replaces vision_start + "
    "video_token + vision_end whole, as vLLM's and SGLang's Qwen3-VL processors do)",
    # LFM3-VL's processor is transformers' Qwen3VLProcessor (modular_lfm3_vl.py), whose per-frame
    # segments bring their own vision pair; its checkpoints' template is not public
    "Lfm3VlProcessor": "transformers 5.23 Lfm3VlProcessor, a Qwen3VLProcessor "
    "(modular_lfm3_vl.py); Qwen3-VL's reference replaces vision_start + video_token + "
    "vision_end whole",
}


@dataclass(frozen=True)
class BrokenVideo:
    """A family whose video path is broken in transformers itself (its forward fails, or its
    processor writes the video in a layout the checkpoint never read): ``reason`` (one line), in
    the transformers ``versions`` it was observed in (a newer release is scored, and tested,
    again)."""

    versions: tuple[str, ...]
    reason: str


#: Families whose video path is broken in transformers, by ``model_type``.
BROKEN_VIDEO: dict[str, BrokenVideo] = {
    # NemotronH_Omni_Reasoning_V3.forward concatenates get_video_features' pooler_output, one
    # tensor rather than a tuple of per-video tensors (torch.cat raises TypeError); its processor
    # also reads video_metadata as one object, not one per video.
    "nemotron_h_omni": BrokenVideo(
        ("5.23.0",),
        "its forward cannot take video (torch.cat over get_video_features' pooler_output, "
        "a single tensor, raises TypeError)",
    ),
    # Dots3NoteProcessor (5.23) expands the video placeholder into one run of <|video_pad|>
    # tokens, and the Qwen3VLVideoProcessor transformers pairs it with packs 2 frames a patch
    # (the vision tower's RoPE then fails on a size mismatch); the checkpoint reads a video as
    # timestamped <|img|>...<|endofimg|> image blocks, as the native preprocessing of later
    # transformers writes it (Dots3NoteVideoProcessor.preprocess_native, Dots3NoteProcessor
    # ._process_videos: "<|video_pad|> ... is never passed to the model").
    "dots3_note": BrokenVideo(
        ("5.23.0",),
        "its processor writes a video as one untimed run of <|video_pad|> tokens (and its "
        "Qwen3-VL video processor's 2-frame patches fail in the 1-frame vision tower), not the "
        "timestamped <|img|>...<|endofimg|> frame blocks the checkpoint reads",
    ),
    # Kimi_K25Model.get_image_features splits the projected features by each grid's
    # t * h * w / merge**2, but its vision tower pools a video chunk's t frames into one set of
    # h * w / merge**2 features (the ones its processor writes placeholders for), so
    # torch.split raises on every video of more than one frame a chunk (the checkpoints': 4)
    "kimi_k25": BrokenVideo(
        ("5.23.0",),
        "its forward cannot take video (get_image_features splits a video's time-pooled "
        "features by t*h*w of its chunks, 4 times too many: torch.split raises RuntimeError)",
    ),
}


@dataclass(frozen=True)
class ImageOnly:
    """A family whose checkpoints read images only, though transformers gives its processor a
    video processor (inherited, with the rest of its processing, from the family it derives
    from): ``reason`` (one line, what shows it), ``sources`` (where each piece is stated)."""

    reason: str
    sources: str


#: Families whose checkpoints take no video, by ``model_type``.
IMAGE_ONLY: dict[str, ImageOnly] = {
    # North Micro Vision: a Qwen3-VL vision tower before a Command-A-style text model; its
    # processor is Qwen3-VL's with Cohere's token names, video path included
    "cohere_compass": ImageOnly(
        "its checkpoints (Cohere's North Micro Vision) read images only (transformers declares "
        "its vision tower image-only and its tests skip the video path; Cohere's vLLM "
        "implementation accepts images only)",
        sources="transformers 5.23 CohereCompassVisionModel.input_modalities == ('image',) "
        "(Qwen3-VL's tower declares image and video); tests/models/cohere_compass/"
        "test_modeling_cohere_compass.py skips test_get_video_features_* ('CohereCompass does "
        "not support video modeling'); vLLM model_executor/models/cohere_compass.py "
        "(get_supported_mm_limits: image only; get_placeholder_str: 'Only image modality is "
        "supported')",
    ),
}


def image_only(model_type: str | None) -> str | None:
    """Why ``model_type``'s checkpoints cannot be scored on video (:data:`IMAGE_ONLY`), ``None``
    for any other family."""
    entry = IMAGE_ONLY.get(model_type or "")
    if entry is None:
        return None
    return (
        f"model_type {model_type!r} takes no video: {entry.reason}; choose a video model "
        "(one whose checkpoints read video)"
    )


#: Processors (by class name) that place the frames in time from the ``fps`` keyword (their
#: ``video_second_per_grid = temporal_patch_size / fps``, which sets the temporal position ids)
#: and ignore ``video_metadata``'s rate: without it they assume a fixed rate (2 fps for
#: Qwen2.5-Omni, 1 fps for Qwen3-Omni) whatever the frames' real spacing. The value: the
#: reference code that passes the sampled rate as ``fps``.
RATE_KEYWORD: dict[str, str] = {
    "Qwen2_5OmniProcessor": "qwen-omni-utils process_mm_info (video_kwargs fps: the sampled rate)",
    "Qwen3OmniMoeProcessor": "qwen-omni-utils process_mm_info (video_kwargs fps: the sampled rate)",
}


def text_part(config: Any) -> str | None:
    """The ``model_type`` of the part of an omni model that reads video and answers in text,
    ``None`` for a model that is its own text part.

    Omni models (Qwen2.5-Omni, Qwen3-Omni: a *thinker* that reads text, images, video and audio
    and writes text, and a *talker* that speaks) are not image-text-to-text models themselves;
    their thinker is (``MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES``), and its class loads the
    thinker's config and weights from the whole checkpoint."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    if getattr(config, "model_type", None) in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
        return None
    for name in getattr(config, "sub_configs", None) or {}:
        part = getattr(config, name, None)
        if getattr(part, "model_type", None) in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
            return part.model_type
    return None


def bare_video_part(processor: Any, prompt: str) -> str:
    """``prompt`` with each chat-template video part ``vision_start + video_token + vision_end``
    written as the bare ``video_token``, for processors of :data:`PER_FRAME_VIDEO_SEGMENTS`
    (whose expansion brings each frame's own pair); any other processor's prompt unchanged."""
    if type(processor).__name__ not in PER_FRAME_VIDEO_SEGMENTS:
        return prompt
    token, start, end = (
        token_text(getattr(processor, name, None))
        for name in ("video_token", "vision_start_token", "vision_end_token")
    )
    if not (token and start and end):
        return prompt
    return prompt.replace(start + token + end, token)


def token_text(token: Any) -> str | None:
    """A special token's text (an ``AddedToken`` or a str)."""
    return getattr(token, "content", token)


def broken_video(model_type: str | None) -> str | None:
    """Why ``model_type``'s video path fails in the installed transformers (:data:`BROKEN_VIDEO`),
    ``None`` when it is not known to."""
    import transformers

    entry = BROKEN_VIDEO.get(model_type or "")
    if entry is None or transformers.__version__ not in entry.versions:
        return None
    return (
        f"model_type {model_type!r} cannot be scored on video with transformers "
        f"{transformers.__version__}: {entry.reason}; use a transformers release that fixes it"
    )


def takes_video(processor_class: type) -> bool:
    """Whether a processor class declares a video processor among its parts (transformers'
    ``ProcessorMixin.get_attributes``)."""
    attributes = getattr(processor_class, "get_attributes", None)
    names = attributes() if callable(attributes) else getattr(processor_class, "attributes", ())
    return "video_processor" in names


def video_refusal(processor: Any, model_type: str | None, rendered: str | None) -> str | None:
    """Why this model cannot be scored with its video, or ``None`` when it can.

    ``rendered``: a prompt with one video part as the chat template writes it, ``None`` for a
    family prompted without a chat template (:data:`PLAIN_PROMPTS`).
    """
    name = type(processor).__name__
    if not takes_video(type(processor)) or getattr(processor, "video_processor", None) is None:
        return (
            f"model_type {model_type!r} takes no video: its processor ({name}) has no video "
            "processor, so the video-llm adapter would score the texts without the video; "
            "choose a video model (one whose processor has a video processor)"
        )
    if rendered is None:
        return None
    placeholder = token_text(getattr(processor, "video_token", None))
    if isinstance(placeholder, str) and placeholder not in rendered:
        return (
            f"model_type {model_type!r}: its chat template writes no video placeholder "
            f"({placeholder!r}) for a video part, so the video would not reach the model; "
            "pass a processor whose chat template renders {'type': 'video'}"
        )
    return None


def prefix_reuse(cache: Any) -> str:
    """How a continuation reuses the prefix ``cache`` (:data:`PREFIX_REUSE`)."""
    from transformers.cache_utils import Cache, DynamicLayer

    if cache is None:
        return "full"
    layers = getattr(cache, "layers", None) if isinstance(cache, Cache) else None
    # exactly DynamicLayer: its subclasses (sliding window, quantized) cannot be cut back exactly
    if layers and all(type(layer) is DynamicLayer for layer in layers):
        return "crop"
    return "copy"


def batching(cache: Any) -> tuple[str, str | None]:
    """How the questions about one view decode together on its prefix ``cache``
    (:data:`BATCHINGS`), and why they cannot where they cannot (``None`` where they can)."""
    from transformers.cache_utils import (
        Cache,
        DummyLayer,
        DynamicLayer,
        DynamicSlidingWindowLayer,
        LinearAttentionCacheLayerMixin,
    )

    layers = getattr(cache, "layers", None) if isinstance(cache, Cache) else None
    if not layers:
        return "off", "the model returns no cache to decode on"
    # a layer reading another's cache holds nothing of its own (Gemma 3n's shared layers)
    kinds = {type(layer) for layer in layers} - {DummyLayer}
    if any(issubclass(kind, LinearAttentionCacheLayerMixin) for kind in kinds):
        return "off", (
            "a linear-attention or convolution layer keeps a running state, which a pad token "
            "would change and which is not repeated along the batch"
        )
    if kinds <= {DynamicLayer}:
        return "padded", None
    if kinds <= {DynamicLayer, DynamicSlidingWindowLayer}:
        return "same-length", None
    names = ", ".join(
        sorted(kind.__name__ for kind in kinds - {DynamicLayer, DynamicSlidingWindowLayer})
    )
    return "off", f"its cache layers ({names}) are not known to decode in a padded batch"


def free_memory(device: Any) -> int | None:
    """Bytes free on ``device`` for new tensors (a GPU's free memory and what its allocator holds
    unused; the memory the operating system can give on CPU), ``None`` where not known."""
    import torch

    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device))
    if device.type == "cpu":
        import psutil

        return int(psutil.virtual_memory().available)
    return None


def cache_bytes(cache: Any) -> int:
    """The bytes of the keys and values ``cache`` holds (its layers' ``keys`` and ``values``)."""
    import torch

    held = 0
    for layer in getattr(cache, "layers", None) or ():
        for name in ("keys", "values"):
            tensor = getattr(layer, name, None)
            if torch.is_tensor(tensor):
                held += tensor.numel() * tensor.element_size()
    return held


@contextmanager
def naming_the_extra(model_id: str) -> Iterator[None]:
    """Re-raise an ImportError about a package of :data:`VIDEO_LLM_EXTRA` as one line naming
    the install to run; any other error passes unchanged."""
    try:
        yield
    except ImportError as error:
        text = f"{getattr(error, 'name', '') or ''} {error}"
        for package in VIDEO_LLM_EXTRA:
            if re.search(rf"\b{package}\b", text):
                raise ImportError(
                    f"{model_id} needs the package {package!r}, which is not installed: "
                    f"{INSTALL_EXTRA} (or pip install {package})"
                ) from error
        raise


def prefix_cache(output: Any) -> Any:
    """The KV cache of a forward's ``output``: its ``past_key_values``, or its language model's
    where a composite model (InstructBLIP) nests the language model's output."""
    cache = getattr(output, "past_key_values", None)
    nested = getattr(output, "language_model_outputs", None)
    if cache is None and nested is not None:
        cache = getattr(nested, "past_key_values", None)
    return cache


def text_continuer(model: Any) -> Any:
    """The module that runs text on top of a cache: the model itself, or its ``language_model``
    where the model's forward requires the vision inputs every call (InstructBLIP re-encodes the
    video on each forward)."""
    import inspect

    parameters = inspect.signature(model.forward).parameters.values()
    required = [
        p
        for p in parameters
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
    ]
    language_model = getattr(model, "language_model", None)
    return language_model if required and language_model is not None else model


def video_variant(model_type: str | None) -> str | None:
    """The ``model_type`` whose classes read ``model_type``'s checkpoints with video, where
    transformers pairs them: ``VIDEO_PROCESSOR_MAPPING_NAMES`` names a video processor for
    ``model_type`` that belongs to another image-text-to-text model (InstructBLIP's checkpoints
    are InstructBLIP-Video's: ``instructblip`` -> ``instructblipvideo``). ``None`` otherwise."""
    import transformers
    from transformers.models.auto.configuration_auto import model_type_to_module_name
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    names = VIDEO_PROCESSOR_MAPPING_NAMES.get(model_type)
    names = list(names.values()) if isinstance(names, dict) else [names]
    for name in filter(None, names):
        video_processor = getattr(transformers, name, None)
        if video_processor is None:
            continue
        module = video_processor.__module__.split(".")[2]  # transformers.models.<module>.*
        for candidate in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES:
            if candidate != model_type and model_type_to_module_name(candidate) == module:
                return candidate
    return None
