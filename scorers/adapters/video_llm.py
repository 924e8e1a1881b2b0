"""Video LLMs (LLaVA-NeXT-Video, LLaVA-OneVision, Qwen2-VL/2.5-VL, ...) as scorers, in process.

The ``video-llm`` adapter's ``local`` backend. Its modes (``likelihood``, ``choice``,
``entail``, ``generate``), their questions and how answers become scores are
:mod:`foilkit.scorers.modes`' and :mod:`foilkit.scorers.prompts`', shared by every backend; this
module answers their questions from the model's logits (likelihood, choice and entail are
deterministic) or its decoding. Every answer is written as the chat template writes an
assistant turn (a template that puts a space after ``ASSISTANT:`` gets one before the text):
likelihood mode scores the text's tokens (``continuation="answer"``) or the whole turn with its
closing tokens (``continuation="turn"``, as lmms-eval), their mean log-probability (lmms-eval's
``loglikelihood`` for LLaVA models returns minus it, the model's loss) or sum; choice mode
reads the next-token logits of the option letters in every spelling, entail mode those of the
first token of ``Yes`` and of ``No`` as VELOCITI's ``entail_score`` encodes them; a request's
own ``question`` (TempCompass') is asked as it is, each text scored by its ``answer``.

Token ids: the model sees exactly the ids of the whole rendered prompt (chat template, video
placeholder, question, answer) tokenized at once, as transformers tokenizes a rendered chat (a
template that writes ``bos_token`` gets no second BOS from the tokenizer). The video prefix
(everything up to the question in ``choice`` mode, up to the answer in ``likelihood`` mode) is
encoded once per view and each continuation runs on top of its KV cache; the continuation's ids
are the whole prompt's ids past the prefix's, so a SentencePiece tokenizer (LLaVA-NeXT-Video's)
does not gain a ``▁`` at the split. Where a tokenizer merges across the split, that text runs in
one forward over the whole prompt instead. How the cache is reused depends on what its layers
can do (``prefix_reuse``: :func:`._video_llm_support.prefix_reuse`): cropped back after each
continuation, deep-copied per continuation (sliding-window, linear-attention and convolution
layers: Gemma 3/4, Qwen3.5), or not at all. In ``generate`` mode the greedy questions are
decoded together on their views' prefix caches as each alone would be (``batched_decoding``:
:func:`._video_llm_support.batching`, :meth:`VideoLLMAdapter.generate`), at most
``generate_batch_size`` in a batch; a sampled question is decoded alone, from its own seed.

Families (each fact declared or read in :mod:`._video_llm_support`): a model that cannot be
scored with its video is refused before it is loaded (no video processor, no video placeholder
in its chat template, a video path the installed transformers breaks, image-only checkpoints);
a family whose checkpoints ship no chat template is prompted as its model card does
(InstructBLIP-Video), its Q-Former reading the question, never the answer; an omni model
(Qwen2.5-Omni, Qwen3-Omni) is scored through its thinker, given the video without its audio and
its rate as ``fps``; a checkpoint whose processor takes no video but which transformers pairs
with a video model's classes (InstructBLIP) is loaded with those (both ``loaded_as``); a
processor writing per-frame vision segments (Qwen3-VL's) gets the template's video part as the
bare video token (``video_part``).

Chat templates are followed as written: where a template writes a system or assistant turn's
content as it is (GLM-4.1V; Perception LM's system turn), that turn is given as a string, and a
template with no system role (Molmo2's) gets the system prompt at the start of the user turn
(``content_forms``); where its assistant turn opens with something before the answer
(GLM-4.5V/4.6V's empty ``<think></think>``), every prompt ends with that opening, so the answer
is read where the model writes it. Both are recorded (``text_content``, ``answer_lead_in``).

Time axis: models that place frames in time (Qwen2.5-VL's temporal position ids, Qwen3-VL's
frame timestamps) get the view's real sampling interval through ``video_metadata`` instead
of the processor's 24 fps default. The frames are presented in the order shown, starting at
the earliest sampled time and one sampling interval apart, so a ``reversed`` or ``shuffled``
view looks like a video playing that order at the real rate (temporal ids increase).
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from foilkit.answers import LETTERS
from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import token_logprobs
from foilkit.scorers.adapters._qwen_vl_utils import QwenVLUtilsResolution, applies_to
from foilkit.scorers.adapters._video_llm_support import (
    PER_FRAME_VIDEO_SEGMENTS,
    PLAIN_PROMPTS,
    RATE_KEYWORD,
    ContentForms,
    PlainPrompt,
    bare_video_part,
    batching,
    broken_video,
    cache_bytes,
    content_forms,
    free_memory,
    image_only,
    naming_the_extra,
    prefix_cache,
    prefix_reuse,
    takes_video,
    text_continuer,
    text_part,
    token_text,
    video_refusal,
    video_variant,
)
from foilkit.scorers.modes import (
    ENTAIL_ANSWERS,
    LIKELIHOOD_QUESTION,
    Ask,
    FirstTokens,
    VideoLLM,
    _choose,
    questions,
)
from foilkit.scorers.prompts import COUNTS, choice_messages, fit_system_turn, system_prompt
from foilkit.scorers.requests import (
    GenerateRequest,
    Generations,
    TextsRequest,
    presented_metadata,
)

#: How frames are sized before the model: ``default``, by the checkpoint's processor as
#: transformers applies it; ``reference``, by the family's reference preprocessing where foilkit
#: declares one (qwen-vl-utils for the Qwen2-VL, Qwen2.5-VL and Qwen3-VL video processors,
#: :mod:`._qwen_vl_utils`), else the processor's own. The rule applied is recorded in
#: ``processor_settings()["resolution"]``.
PREPROCESSES = ("default", "reference")
_MARKER = "<<foilkit-question>>"
#: The text a probe of the chat template gives a system or answer turn (:func:`content_forms`).
_PROBE = "<<foilkit-turn>>"
#: Generation-config fields that switch on a logits processor of ``model.generate`` beyond
#: greedy, temperature and top-p: a checkpoint setting one is answered by ``model.generate``.
_GENERATE_EXTRAS = (
    "no_repeat_ngram_size",
    "bad_words_ids",
    "suppress_tokens",
    "begin_suppress_tokens",
    "min_length",
    "min_new_tokens",
    "forced_bos_token_id",
    "forced_eos_token_id",
    "sequence_bias",
    "renormalize_logits",
    "remove_invalid_values",
    "exponential_decay_length_penalty",
    "encoder_no_repeat_ngram_size",
)
#: The values that leave such a field off.
_OFF = (None, 0, False, [], ())
#: The most greedy questions about one view decoded in one batch (``generate_batch_size``
#: unset); fewer where the batch's copies of the view's prefix cache would take more than
#: :data:`BATCH_MEMORY_SHARE` of the device's free memory (:meth:`VideoLLMAdapter._batch_rows`).
GENERATE_BATCH_SIZE = 32
#: The share of the device's free memory a batch's caches and logits may take.
BATCH_MEMORY_SHARE = 0.25


def _model_class(model_type: str) -> type:
    """The image-text-to-text model class transformers maps ``model_type`` to."""
    import transformers
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    return getattr(transformers, MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES[model_type])


def _by_view(requests: Sequence[GenerateRequest]) -> list[list[int]]:
    """The requests' positions, grouped by view (in the order each view first comes), so each
    view's prefix is encoded once."""
    views: dict[tuple[int, Any], list[int]] = {}
    for number, request in enumerate(requests):
        views.setdefault((id(request.frames), request.timestamps), []).append(number)
    return list(views.values())


def _repeatable(cache: Any) -> bool:
    """Whether every layer of ``cache`` can be repeated along the batch, so that a request's
    samples decode in one batch: not a layer keeping a linear-attention or convolution state
    (a hybrid layer's ``batch_repeat_interleave`` repeats its keys and values, not that state)."""
    from transformers.cache_utils import LinearAttentionCacheLayerMixin

    layers = getattr(cache, "layers", None) or ()
    return bool(layers) and all(
        callable(getattr(layer, "batch_repeat_interleave", None))
        and not isinstance(layer, LinearAttentionCacheLayerMixin)
        for layer in layers
    )


@dataclass(frozen=True)
class _Prefix:
    """A view's prefix as encoded: its KV cache (one row), its last position's logits, the
    shift between its text tokens' multimodal rotary positions and their places (the model's
    ``rope_deltas`` after the prefix forward: M-RoPE families; else ``None``), and the view's key
    (so that a batch knows which views its questions are about)."""

    cache: Any
    last_logits: torch.Tensor
    deltas: torch.Tensor | None
    view: Any

    @property
    def length(self) -> int:
        return self.cache.get_seq_length()


@dataclass(frozen=True)
class _Question:
    """A greedy question waiting for a batch: its request's position, the ids after its
    prefix, the prefix it continues, and its decoding."""

    number: int
    ids: list[int]
    prefix: _Prefix
    decoding: Any


def _stacked(caches: Sequence[Any]) -> Any:
    """One cache holding ``caches`` (one row each, the same layers) along the batch in order (a
    cache given twice holds two rows), each layer's keys and values left-padded with zeros to
    that layer's longest; the pads are for the caller to mask. The caches given are left as
    they are: the stacked one holds new tensors in copies of their layers."""
    from torch.nn.functional import pad

    stacked = copy.copy(caches[0])
    stacked.layers = []
    for layers in zip(*(cache.layers for cache in caches), strict=True):
        layer = copy.copy(layers[0])
        for name in ("keys", "values"):
            tensors = [getattr(one, name, None) for one in layers]
            if all(torch.is_tensor(tensor) and tensor.dim() == 4 for tensor in tensors):
                longest = max(tensor.shape[-2] for tensor in tensors)
                padded = {  # each cache's once, however many rows it has
                    id(tensor): pad(tensor, (0, 0, longest - tensor.shape[-2], 0))
                    for tensor in tensors
                    if tensor.shape[-2] < longest
                }
                rows = [padded.get(id(tensor), tensor) for tensor in tensors]
                setattr(layer, name, torch.cat(rows))
        stacked.layers.append(layer)
    return stacked


def _common_length(a: Sequence[int], b: Sequence[int]) -> int:
    """The length of the longest prefix ``a`` and ``b`` share."""
    return next((at for at, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


@register_adapter("video-llm")
class VideoLLMAdapter(VideoLLM):
    """The ``video-llm`` adapter's ``local`` backend (:class:`~foilkit.scorers.modes.VideoLLM`
    holds its modes and settings): ``AutoModelForImageTextToText`` + ``AutoProcessor`` with
    video input, answering in this process.

    Args:
        preprocess: how frames are sized (:data:`PREPROCESSES`): ``default`` or ``reference``.
        generate_batch_size: generate mode: the most greedy questions about one view decoded
            together in one batch (1: one at a time); default :data:`GENERATE_BATCH_SIZE`, fewer
            where the batch would take more than :data:`BATCH_MEMORY_SHARE` of the device's free
            memory. Recorded in ``run.json`` (``batched_decoding``) with how the family batches.
        batch_across_views: generate mode: whether a batch may hold greedy questions about
            several views (each row on its own view's prefix cache: ``across_views`` in
            ``batched_decoding``; default ``True``); ``False``: the questions of one view (one
            prefix) at a time.
        the rest: :class:`~foilkit.scorers.modes.VideoLLM`'s.
    """

    spreads = True
    # what model_inputs adds to every processor call (see video_kwargs)
    processor_call = {
        "do_sample_frames": False,
        "video_metadata": "each view's frame timestamps, where known",
        "return_metadata": True,
    }

    def __init__(
        self,
        model_id: str,
        *,
        preprocess: str | None = None,
        generate_batch_size: int | None = None,
        batch_across_views: bool | None = None,
        **kwargs: Any,
    ):
        super().__init__(model_id, **kwargs)
        self.preprocess = _choose("preprocess", preprocess, PREPROCESSES)
        size, across = generate_batch_size, batch_across_views
        valid = isinstance(size, int) and not isinstance(size, bool) and size >= 1
        self._check_generate_setting("generate_batch_size", size, valid, "a whole number >= 1")
        self.generate_batch_size = size
        valid = isinstance(across, bool)
        self._check_generate_setting("batch_across_views", across, valid, "True or False")
        self.batch_across_views = across is not False  # unset: True
        model_class = self._load_processor()
        #: the reference frame sizing applied before the processor, ``None``: the processor's own
        self.resolution: QwenVLUtilsResolution | None = None
        video_processor = getattr(self.processor, "video_processor", None)
        if self.preprocess == "reference" and self._takes_videos and applies_to(video_processor):
            self.resolution = QwenVLUtilsResolution()
        with naming_the_extra(model_id):
            self.model = self._load(model_class)
        if self.loaded_as is not None:
            self._check_video_token()
        self._continuer = text_continuer(self.model)
        #: whether the forwards can compute the last position's logits alone, and the keyword
        #: asking them to
        self._keeps_logits = all(
            "logits_to_keep" in inspect.signature(module.forward).parameters
            for module in (self.model, self._continuer)
        )
        self._keep = {"logits_to_keep": 1} if self._keeps_logits else {}
        self.prefix_reuse = self._prefix_reuse()
        #: video prefixes encoded so far (the run record's ``prefix_forwards``)
        self.prefix_forwards = 0
        #: how greedy questions about one view decode together (``BATCHINGS``), and why not
        self.batching, self._unbatched_why = self._batching()
        #: batches of several questions decoded so far, the questions in them, and those of
        #: the batches that held questions about more than one view
        self.decode_batches = self.batched_questions = self.cross_view_batches = 0
        #: the view whose prefix cache continuations run on: (key, _Prefix)
        self._view: tuple[Any, _Prefix] | None = None
        self._letter_ids = [self._token_ids(letter) for letter in LETTERS]
        #: entail_score's ids: the first token of each answer, special tokens off
        self._entail_ids = [
            (self.tokenizer.encode(answer, add_special_tokens=False) or [None])[0]
            for answer in ENTAIL_ANSWERS
        ]

    def _load_processor(self) -> Any:
        """Load the processor, and refuse a model that cannot be scored with its video before
        its weights load; return the model class to load (the checkpoint's video variant's,
        where transformers pairs it with one)."""
        import transformers
        from transformers import AutoConfig, AutoModelForImageTextToText, AutoProcessor
        from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

        model_id, kwargs = self.model_id, self._pretrained_kwargs()
        with naming_the_extra(model_id):
            config = AutoConfig.from_pretrained(model_id, **kwargs)
        self.model_type = getattr(config, "model_type", None)
        # whatever its processor and template hold
        broken = broken_video(self.model_type) or image_only(self.model_type)
        if broken is not None:
            raise ValueError(f"{model_id}: {broken}")
        model_class = AutoModelForImageTextToText
        with naming_the_extra(model_id):
            self.processor = self._pretrained(AutoProcessor)
        #: the model_type whose classes read this checkpoint with video, where not its own: a
        #: video variant's, or an omni model's text part (its thinker, read without audio)
        self.loaded_as = text_part(config)
        if self.loaded_as is not None:
            model_class = _model_class(self.loaded_as)
        elif not takes_video(type(self.processor)) and video_variant(self.model_type):
            self.loaded_as = self.model_type = video_variant(self.model_type)
            model_class = _model_class(self.model_type)
            processor_class = getattr(transformers, PROCESSOR_MAPPING_NAMES[self.model_type])
            with naming_the_extra(model_id):
                self.processor = self._pretrained(processor_class)
        self.tokenizer = self.processor.tokenizer
        #: the family's plain prompt where its processor has no chat template, else ``None``
        self.plain_prompt: PlainPrompt | None = None
        if not getattr(self.processor, "chat_template", None):
            self.plain_prompt = PLAIN_PROMPTS.get(self.model_type)
            if self.plain_prompt is None:
                raise ValueError(
                    f"{model_id}: its processor has no chat template and foilkit declares no "
                    f"plain prompt for model_type {self.model_type!r}; add the checkpoint's chat "
                    "template (processor.chat_template) or a PlainPrompt entry for the family"
                )
        #: how the template writes a text-only turn's content (system, answer), and what its
        #: assistant turn writes before the answer (both read off it: see _learn_the_template);
        #: a family prompted without a template gets parts and no system turn
        self.content_forms, self.answer_lead_in = ContentForms(), ""
        if self.plain_prompt is None:
            self._learn_the_template()
        refusal = self._refusal(config)
        if refusal is not None:
            raise ValueError(f"{model_id}: {refusal}")
        self._takes_videos = "videos" in inspect.signature(type(self.processor).__call__).parameters
        # inputs a second tokenizer makes from the prompt for the vision side (InstructBLIP's
        # Q-Former): prefix of their keys -> that tokenizer
        self._instruction_tokenizers = {
            name[: -len("tokenizer")]: getattr(self.processor, name)
            for name in type(self.processor).get_attributes()
            if name.endswith("_tokenizer")
        }
        return model_class

    def _learn_the_template(self) -> None:
        """Two facts of the chat template, read off renders of it, that the prompts follow.

        ``content_forms``: how it writes a turn's ``content`` (:func:`content_forms`): a template
        that writes it as it is (GLM-4.1V's ``{{ msg.content }}``, Perception LM's
        ``content|trim``) would show a list of parts as its Python repr, so the answers that are
        scored (``answer``) and VITATECS' system prompt (``system``, or the start of the user
        turn where the template has no system role) are given as strings there.
        ``answer_lead_in``: what an assistant turn writes before the answer's text
        (GLM-4.5V/4.6V's empty reasoning ``<think></think>\\n``, Qwen3.5's ``\\n</think>\\n\\n``
        after its ``<think>\\n`` prompt); it ends every prompt, so the option letter and the
        answer are read where the model writes its answer, not where it would open its
        reasoning. A whitespace lead-in (a space after ``ASSISTANT:``) stays with the answer,
        whose first token it is part of.
        """
        self.content_forms = content_forms(
            lambda messages: self.processor.apply_chat_template(messages, tokenize=False),
            _PROBE,
            self._messages(_MARKER, None),
        )
        prompt, (answer,) = self._answered(LIKELIHOOD_QUESTION, [_MARKER])
        lead = answer[: answer.index(_MARKER)] if answer else ""
        if lead.strip():
            lead_ids, ids = self.encode(prompt + lead), self.encode(prompt + answer)
            if ids[: len(lead_ids)] == lead_ids:  # it ends at a token boundary
                self.answer_lead_in = lead

    def _text(self, text: str) -> str | list[dict[str, str]]:
        """A text-only turn's ``content`` as the chat template reads it."""
        return text if self.content_forms.answer == "string" else [{"type": "text", "text": text}]

    def _refusal(self, config: Any) -> str | None:
        """Why this model cannot be scored with its video, ``None`` when it can."""
        text_config = config.get_text_config(decoder=True)
        if getattr(text_config, "is_encoder_decoder", False):
            return (
                f"model_type {self.model_type!r} answers with an encoder-decoder language model "
                f"({text_config.model_type}); the video-llm adapter scores decoder-only ones"
            )
        rendered = None
        if self.plain_prompt is None:
            rendered = self._render(self._messages(LIKELIHOOD_QUESTION, None))
        return video_refusal(self.processor, self.model_type, rendered)

    def _check_video_token(self) -> None:
        """A checkpoint read through its video variant's classes must name the video placeholder
        the variant's processor writes, or the video would never reach the model."""
        token = token_text(getattr(self.processor, "video_token", None))
        written = self.tokenizer.convert_tokens_to_ids(token) if token else None
        expected = getattr(self.model.config, "video_token_id", None)
        if written is None or written != expected:
            raise ValueError(
                f"{self.model_id}: model_type {self.loaded_as!r} (which transformers reads this "
                f"checkpoint as) puts the video at token {token!r} (id {written}), but the "
                f"checkpoint's config names video token id {expected}; the checkpoint has no "
                "video placeholder and cannot be scored on video"
            )

    def _check_generate_setting(self, name: str, value: Any, valid: bool, expected: str) -> None:
        """Refuse a generate-mode setting given in another mode, or not ``valid`` (``expected``
        says what it must be); unset (``None``) passes."""
        if value is None:
            return
        if self.mode != "generate":
            raise ValueError(
                f"{name}={value!r} applies to generate mode only; {self.mode} mode "
                "generates nothing"
            )
        if not valid:
            raise ValueError(f"{name} must be {expected}, got {value!r}")

    def _batching(self) -> tuple[str, str | None]:
        """How the greedy questions about one view decode together after its prefix
        (``BATCHINGS``, from the cache the model builds for its own layer types: :func:`batching`),
        and why they decode one at a time where they do."""
        from transformers import DynamicCache

        if self.mode != "generate":
            return "off", None
        if self.generate_batch_size == 1:
            return "off", "generate_batch_size=1"
        if self.prefix_reuse == "full":
            return "off", "no prefix cache to decode on (prefix_reuse 'full')"
        if self._instruction_tokenizers:
            return "off", "the vision side reads each question: each question is its own prefix"
        if not self._plain_decoding():
            return "off", (
                "the checkpoint's generation config switches on more than greedy decoding: "
                "model.generate answers each question"
            )
        taken = inspect.signature(self._continuer.forward).parameters
        if not {"attention_mask", "position_ids"} <= set(taken):
            return "off", "its forward takes no attention mask and position ids"
        return batching(DynamicCache(config=self.model.config))

    def _batching_record(self) -> dict[str, Any]:
        """How generate mode decodes the questions about a view (``run.json``'s
        ``batched_decoding``): the batching, its bound, and why not where it does not batch."""
        if self.batching == "off":
            return {"batching": "off", "why": self._unbatched_why}
        record: dict[str, Any] = {
            "batching": self.batching,
            "max_questions": self.generate_batch_size or GENERATE_BATCH_SIZE,
        }
        if self.generate_batch_size is None:
            record["memory_share"] = BATCH_MEMORY_SHARE
        across, why = self._across_views()
        record["across_views"] = across
        if why is not None:
            record["across_views_why"] = why
        record["sampled"] = "one request at a time, its samples drawn from its own seed"
        return record

    def _across_views(self) -> tuple[str, str | None]:
        """How greedy questions about different views (or different prefixes of one view)
        decode in one batch, each row on its own prefix's cache (:meth:`_decode_batch`), and why
        not where they do not: as the questions about one view do (:attr:`batching`: ``padded``,
        or ``same-length``, one prefix length too), unless ``batch_across_views=False``."""
        if self.batching == "off":
            return "off", "the questions about one view do not batch either"
        if not self.batch_across_views:
            return "off", "batch_across_views=False"
        return self.batching, None

    def _prefix_reuse(self) -> str:
        """How continuations reuse the video prefix's cache (``PREFIX_REUSE``), from the cache
        the model builds for its own layer types."""
        from transformers import DynamicCache

        if not getattr(self.model.config.get_text_config(decoder=True), "use_cache", True):
            return "full"
        return prefix_reuse(DynamicCache(config=self.model.config))

    @classmethod
    def matches(cls, config: Any) -> bool:
        from transformers.models.auto.modeling_auto import (
            MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
        )

        model_type = getattr(config, "model_type", None)
        return (
            model_type in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
            or text_part(config) is not None
        )

    def processor_settings(self) -> dict[str, dict[str, Any]]:
        """The processors' settings and each call's keywords (:meth:`Adapter.processor_settings`),
        and ``resolution``: the rule that sized the frames (``processor``: the video processor's
        own ``size``; ``qwen-vl-utils`` with its constants, under ``preprocess="reference"``)."""
        settings = super().processor_settings()
        rate = RATE_KEYWORD.get(type(self.processor).__name__)
        if rate is not None:  # the omni processors' time axis
            settings.setdefault("call", {})["fps"] = f"each view's sampling rate, as {rate}"
        video_processor = getattr(self.processor, "video_processor", None)
        if getattr(self, "resolution", None) is not None:
            settings["resolution"] = self.resolution.to_record(video_processor)
        else:
            settings["resolution"] = {"rule": "processor"}
            if getattr(self, "preprocess", None) == "reference":
                settings["resolution"]["why"] = (
                    f"foilkit declares no reference preprocessing for "
                    f"{type(video_processor).__name__}: the processor's own"
                )
        return settings

    def _describe(self) -> dict[str, Any]:
        common = {**super()._describe(), "prefix_reuse": self.prefix_reuse}
        if self.mode == "generate":  # how a view's questions decode together
            common["batched_decoding"] = self._batching_record()
        if self.loaded_as is not None:  # an InstructBLIP checkpoint read as InstructBLIP-Video,
            common["loaded_as"] = self.loaded_as  # an omni checkpoint read as its thinker
        segments = PER_FRAME_VIDEO_SEGMENTS.get(type(self.processor).__name__)
        if segments is not None:  # the template's video part, replaced whole as the reference
            common["video_part"] = {"written_as": "video_token", "source": segments}
        if self.content_forms.answer == "string":  # it writes an answer's content as it is
            common["text_content"] = "string"
        if self.answer_lead_in:  # what every prompt ends with: the template's answer opening
            common["answer_lead_in"] = self.answer_lead_in
        if self.plain_prompt is not None:  # no chat template: the family's declared format
            common["prompt_format"] = {
                "template": self.plain_prompt.template,
                "answer_separator": self.plain_prompt.answer_separator,
                "source": self.plain_prompt.source,
            }
        return common

    def prompt_templates(self) -> dict[str, str] | None:
        """Choice mode: the whole rendered prompt (chat template, video placeholder) with a
        ``{question}`` slot, by option count (2 to 5), recorded once per run in ``run.json``;
        an item's prompt in order ``k`` fills the slot with :func:`question_text` of its texts
        in that order (the scores file holds the texts and each order's probabilities)."""
        if self.mode == "likelihood":
            return None
        templates = {}
        for count in COUNTS:
            head, tail = self._prompt(count)
            templates[str(count)] = head + "{question}" + tail
        return templates

    # --- token ids ---------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Ids of ``text`` tokenized whole, as the processor tokenizes a prompt
        (:meth:`special_tokens`)."""
        return list(self.tokenizer(text, **self.special_tokens(text))["input_ids"])

    def special_tokens(self, text: str) -> dict[str, bool]:
        """Tokenizer keywords for a prompt: no special tokens where it already starts with BOS
        (a chat template that writes ``bos_token``, as Perception LM's and Gemma's do), as
        transformers' ``apply_chat_template`` tokenizes a rendered chat; else the tokenizer's
        own (BOS added where it adds one)."""
        bos = self.tokenizer.bos_token
        return {"add_special_tokens": False} if bos and text.startswith(bos) else {}

    def _token_ids(self, letter: str) -> list[int]:
        """Single-token spellings of an option letter as an answer's first token: "A", " A", and
        the token the chat template's assistant turn starts with."""
        ids = {
            tuple(self.tokenizer(variant, add_special_tokens=False)["input_ids"])
            for variant in (letter, " " + letter)
        }
        found = {pieces[0] for pieces in ids if len(pieces) == 1}
        answer = self.answer_token(letter)
        if answer is not None:
            found.add(answer)
        return sorted(found)

    def answer_token(self, letter: str) -> int | None:
        """The first token of ``letter`` written as the chat template writes an answer, if that
        token spells the letter alone; ``None`` when the template renders no answer."""
        prompt, (answer,) = self._answered(LIKELIHOOD_QUESTION, [letter])
        if answer is None:
            return None
        prompt_ids, ids = self.encode(prompt), self.encode(prompt + answer)
        if ids[: len(prompt_ids)] != prompt_ids or len(ids) == len(prompt_ids):
            return None
        first = ids[len(prompt_ids)]
        return first if self.tokenizer.decode([first]).strip() == letter else None

    # --- prompts -----------------------------------------------------------------------------

    def _messages(self, question: str, count: int | None) -> list[dict[str, Any]]:
        return choice_messages(
            self.prompt,
            question,
            count,
            self.system_form()
            if count is not None and system_prompt(self.prompt) is not None
            else "parts",
        )

    def system_form(self) -> str:
        """How VITATECS' system prompt reaches the chat template (``SYSTEM_FORMS``, read off it
        with the answer's form: :attr:`content_forms`); ``parts`` for a family prompted without
        one, whose prompt has no system turn."""
        return self.content_forms.system

    def chat_prompt(self, messages: Sequence[dict[str, Any]]) -> str:
        """The prompt the model is given for a backend-neutral conversation (a
        :class:`GenerateRequest`'s messages): its system turn in the form this template writes
        (:meth:`system_form`), rendered up to the answer."""
        return self._render(fit_system_turn(list(messages), self.system_form()))

    def _render(self, messages: list[dict[str, Any]]) -> str:
        if self.plain_prompt is not None:  # the user turn's text; a system prompt has no place
            (question,) = [
                part["text"] for part in messages[-1]["content"] if part["type"] == "text"
            ]
            return self.plain_prompt.render(question)
        rendered = self.processor.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False
        )
        return bare_video_part(self.processor, rendered) + self.answer_lead_in

    def _answer_text(
        self, messages: list[dict[str, Any]], prompt: str, text: str, turn: bool = False
    ) -> str | None:
        """What follows ``prompt`` when the template writes ``text`` as the assistant's answer,
        up to the end of ``text`` (or of the whole turn, closing tokens included, with ``turn``)."""
        from jinja2 import TemplateError

        if self.plain_prompt is not None:  # the answer follows the prompt; a turn ends at EOS
            answer = self.plain_prompt.answer_separator + text
            return answer + (self.tokenizer.eos_token or "") if turn else answer
        answered = messages + [{"role": "assistant", "content": self._text(text)}]
        try:
            rendered = self.processor.apply_chat_template(
                answered, add_generation_prompt=False, tokenize=False
            )
        except (ValueError, TemplateError):  # no assistant turns: the text follows the prompt
            return None
        rendered = bare_video_part(self.processor, rendered)
        if not rendered.startswith(prompt) or text not in rendered[len(prompt) :]:
            return None
        rest = rendered[len(prompt) :]
        return rest if turn else rest[: rest.index(text) + len(text)]

    def _answered(
        self, question: str, texts: Sequence[str], turn: bool = False
    ) -> tuple[str, list[str | None]]:
        """The prompt asking ``question``, and what follows it when the template writes each of
        ``texts`` as the answer (:meth:`_answer_text`)."""
        messages = self._messages(question, None)
        prompt = self._render(messages)
        return prompt, [self._answer_text(messages, prompt, text, turn) for text in texts]

    def _prompt(self, count: int | None) -> tuple[str, str]:
        """The chat prompt split around the question: (head with the video, tail to the answer,
        the template's :attr:`answer_lead_in` included)."""
        messages = self._messages(_MARKER, count)
        rendered = self._render(messages)
        head, marker, tail = rendered.partition(_MARKER)
        if not marker:
            raise ValueError(f"{self.model_id}: the chat template dropped the question text")
        return head, tail

    def prompt_texts(
        self,
        texts: Sequence[str],
        question: str | None = None,
        answers: Sequence[str] | None = None,
    ) -> tuple[str, list[str]]:
        """The video prefix and, for each model input built from ``texts``, what follows it.

        Likelihood: one continuation per text (the answer). Choice: one per cyclic order of the
        options (the question and the template up to the answer); the first shows ``texts``
        in the order given. Entail: one per text (its entailment question and the template up
        to the answer). With a ``question`` (any mode): the prefix asks it, and each text's
        continuation is its entry of ``answers``. The model sees ``prefix + continuation``
        tokenized whole.
        """
        if question is not None or self.mode == "likelihood":
            turn = question is None and self.continuation == "turn"
            if question is None:  # each text as the answer to the likelihood question
                question, answers = LIKELIHOOD_QUESTION, texts
            answers = list(answers or ())
            prompt, written = self._answered(question, answers, turn)
            return prompt, [
                answer if text is None else text for answer, text in zip(answers, written)
            ]
        asked = questions(self.mode, self.prompt, texts)
        head, tail = self._prompt(asked[0][1] if asked else None)
        return head, [question + tail for question, _ in asked]

    def prompt_pairs(
        self,
        texts: Sequence[str],
        question: str | None = None,
        answers: Sequence[str] | None = None,
    ) -> list[tuple[str, str]]:
        """(prefix, continuation) of each model input built from ``texts`` (``prompt_texts``).

        Where the vision side reads the prompt (a Q-Former's instruction), the question is part
        of the prefix: in choice mode each order's whole prompt is its own prefix (a request's
        own question is in its prefix already).
        """
        prefix, continuations = self.prompt_texts(texts, question, answers)
        if self.mode in ("choice", "entail") and self._instruction_tokenizers and question is None:
            return [(prefix + continuation, "") for continuation in continuations]
        return [(prefix, continuation) for continuation in continuations]

    # --- the model ---------------------------------------------------------------------------

    def video_kwargs(self, request: TextsRequest) -> dict[str, Any]:
        """Processor keywords for the request's frames: all of them, as sampled (a video
        processor that samples by default, Qwen3-VL's or Gemma 4's, would drop some), and their
        time axis when it is known: as ``video_metadata``, and as the ``fps`` keyword to a
        processor that reads the rate from it (:data:`RATE_KEYWORD`, the omni processors); the
        video processor hands the metadata back to the processor, whose placeholder expansion
        reads it (Cosmos3 Edge's asks for it only this way)."""
        kwargs: dict[str, Any] = {"do_sample_frames": False, "return_metadata": True}
        if request.timestamps is not None:
            kwargs["video_metadata"] = [presented_metadata(request.timestamps)]
            if type(self.processor).__name__ in RATE_KEYWORD:
                kwargs["fps"] = kwargs["video_metadata"][0]["fps"]
        return kwargs

    def model_inputs(self, request: TextsRequest, text: str, instruction: str | None = None) -> Any:
        """The processor's inputs for ``text`` (with the video placeholder) and the request's
        frames; a vision side that reads the prompt reads ``instruction`` (default ``text``)."""
        frames = self.plain_prompt.frames if self.plain_prompt is not None else None
        if frames is not None and len(request.frames) != frames:
            raise ValueError(
                f"{self.model_id} (model_type {self.model_type!r}) takes {frames} frames a view, "
                f"got {len(request.frames)}: score with --frames {frames} "
                f"(num_frames={frames} in Python)"
            )
        # a processor may write into the frames it is given (ERNIE 4.5 VL draws each frame's
        # time on it): it gets a copy, so the view's frames stay as decoded for its other texts
        frames = request.frames.clone() if torch.is_tensor(request.frames) else request.frames
        if self._takes_videos:
            sizing = {}
            if self.resolution is not None:
                frames, sizing = self.resolution.prepare(frames, self.processor.video_processor)
            video = {"videos": [frames], **self.video_kwargs(request), **sizing}
        else:  # the processor takes a video as its visual input (InstructBLIP-Video: images=)
            video = {"images": [frames]}
        inputs = self.processor(
            text=[text], return_tensors="pt", **self.special_tokens(text), **video
        )
        if instruction is not None and instruction != text:
            for prefix, tokenizer in self._instruction_tokenizers.items():
                encoded = tokenizer([instruction], return_tensors="pt")
                for key in ("input_ids", "attention_mask"):
                    inputs[prefix + key] = encoded[key]
        # what is not a tensor is the processor's bookkeeping, not a model input (the video
        # metadata Cosmos3 Edge's processor hands back)
        for key in [key for key, value in inputs.items() if not torch.is_tensor(value)]:
            del inputs[key]
        inputs = inputs.to(self.device)
        for key, value in inputs.items():
            if torch.is_floating_point(value):
                inputs[key] = value.to(self.dtype)
        return inputs

    def _encode_prefix(self, request: TextsRequest, prefix: str) -> tuple[Any, torch.Tensor]:
        """Run the video prefix once: its KV cache and its last position's logits."""
        output = self.model(**self.model_inputs(request, prefix), use_cache=True, **self._keep)
        self.prefix_forwards += 1
        cache = prefix_cache(output)
        if self.prefix_reuse == "crop" and prefix_reuse(cache) != "crop":
            raise RuntimeError(
                f"{self.model_id}: the model returned a {type(cache).__name__} whose layers "
                f"cannot be cut back ({prefix_reuse(cache)}), unlike the cache its config "
                "declares; please report this model"
            )
        return cache, output.logits[0, -1]

    def _continue(self, cache: Any, ids: list[int]) -> torch.Tensor:
        """Logits of a continuation on top of the prefix cache, which is left as it was: cut
        back after use (``crop``) or never touched (a deep copy runs it, ``copy``)."""
        tensor = torch.tensor([ids], device=self.device)
        past = copy.deepcopy(cache) if self.prefix_reuse == "copy" else cache
        logits = self._continuer(input_ids=tensor, past_key_values=past, use_cache=True).logits
        if self.prefix_reuse == "crop":
            cache.crop(-len(ids))
        return logits[0]

    def _whole(self, request: TextsRequest, prefix: str, continuation: str, count: int):
        """Logits from one forward over ``prefix + continuation``, no cache: those predicting
        its last ``count`` tokens, then the last position's."""
        inputs = self.model_inputs(request, prefix + continuation, instruction=prefix)
        return self.model(**inputs).logits[0, -count - 1 :]

    @torch.inference_mode()
    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generations]:
        """Answers to each request, ``decoding.num_samples`` of them, as the decoded text of the
        new tokens with special tokens dropped and surrounding spaces stripped (as lmms-eval's
        model wrappers return answers). Sampling draws from the request's own seed
        (:meth:`GenerateRequest.sample_seed`), all its samples in one batch.

        The requests about one view are answered together: the view's prefix (system turn,
        video, everything before the question) is encoded once, and each question continues
        from its KV cache (:meth:`_generation_pair`), decoded as ``model.generate`` decodes:
        the greedy questions in batches of several (:meth:`_decode_batch`, as the family's
        cache allows: :attr:`batching`), those about several views in one batch where the
        family batches across views (:meth:`_across_views`: each row on its own view's cache),
        a sampled one on its own so that its answers are drawn from its seed alone
        (:meth:`_decode`). Where that cannot be done (no cache to reuse, a tokenizer merging
        across the split, a generation config asking for more than greedy, temperature and
        top-p; several samples where a cache layer cannot be repeated along the batch), the
        question runs through ``model.generate`` on its whole prompt."""
        self._view = None
        results: list[Generations | None] = [None] * len(requests)
        across = self._across_views()[0] != "off"
        waiting: list[_Question] = []  # greedy questions, each with its prefix, for a batch
        for numbers in _by_view(requests):
            # each question's continuation after its prefix, by prefix (one for a view's
            # questions, unless they differ before the question: a system prompt per option count)
            by_prefix: dict[str, list[tuple[int, str, list[int]]]] = {}
            for number in numbers:
                request = requests[number]
                prompt = self.chat_prompt(request.messages)
                split = self._split(request, prompt)
                if split is None:
                    results[number] = self._generate_whole(request, prompt)
                else:
                    by_prefix.setdefault(split[0], []).append((number, prompt, split[1]))
            for prefix, asked in by_prefix.items():
                waiting += self._answer_on_prefix(requests, prefix, asked, results)
                if not across:  # this prefix's questions, before the next prefix's
                    waiting = self._decode_waiting(waiting, results, everything=True)
            waiting = self._decode_waiting(waiting, results, everything=False)
        self._decode_waiting(waiting, results, everything=True)
        self._view = None  # the last view's cache goes with the batch
        return results

    def _split(self, request: GenerateRequest, prompt: str) -> tuple[str, list[int]] | None:
        """The request's prefix (:meth:`_generation_pair`) and the token ids of the rest of
        ``prompt``, ``None`` where its answers come from ``model.generate`` on the whole prompt
        (no prefix cache to reuse, a tokenizer merging across the split, a generation config
        asking for more than greedy, temperature and top-p)."""
        pair = self._generation_pair(request.messages, prompt)
        if pair is None or not self._plain_decoding():
            return None
        prefix, _ = pair
        prefix_ids, ids = self.encode(prefix), self.encode(prompt)
        if ids[: len(prefix_ids)] != prefix_ids:  # the tokenizer merges across the split
            return None
        return prefix, ids[len(prefix_ids) :]

    def _prefix_cache(self, request: TextsRequest, prefix: str) -> _Prefix:
        """``prefix`` on the request's view as encoded (its KV cache, its last position's
        logits, its ``rope_deltas``): the view's kept one, else encoded now (and kept in its
        place)."""
        view = (id(request.frames), request.timestamps)
        key = (*view, prefix)
        if self._view is None or self._view[0] != key:
            self._view = None  # the old cache goes before the new (unless a batch waits on it)
            cache, last_logits = self._encode_prefix(request, prefix)
            self._view = (key, _Prefix(cache, last_logits, self._rope_deltas(), view))
        return self._view[1]

    def _answer_on_prefix(
        self,
        requests: Sequence[GenerateRequest],
        prefix: str,
        asked: list[tuple[int, str, list[int]]],
        results: list[Generations | None],
    ) -> list[_Question]:
        """Answer the requests ``asked`` (position, whole prompt, ids after ``prefix``) on one
        view's ``prefix`` cache into ``results``: each sampled one now, on its own; the greedy
        ones, where the family batches, are returned to wait for a batch
        (:meth:`_decode_waiting`)."""
        encoded = self._prefix_cache(requests[asked[0][0]], prefix)
        waiting = []
        for number, prompt, ids in asked:
            request = requests[number]
            if self.batching != "off" and request.decoding.greedy:
                waiting.append(_Question(number, ids, encoded, request.decoding))
            elif request.decoding.num_samples > 1 and not _repeatable(encoded.cache):
                # its samples need a batch of caches
                results[number] = self._generate_whole(request, prompt)
            else:
                results[number] = self._decode(encoded.cache, encoded.last_logits, ids, request)
        return waiting

    def _decode_waiting(
        self, waiting: list[_Question], results: list[Generations | None], everything: bool
    ) -> list[_Question]:
        """Decode the greedy questions ``waiting`` in batches into ``results``: the questions
        that may share a batch (one decoding; where the family batches ``same-length``, one
        question length and one prefix length) in chunks of :meth:`_batch_rows`, those of close
        lengths together. With ``everything``, all of them; else only full chunks, unless the
        questions left would hold more views' caches than a batch has rows (then all). Returns
        the questions left waiting."""
        groups: dict[tuple[Any, ...], list[_Question]] = {}
        for question in waiting:
            key: tuple[Any, ...] = (question.decoding,)
            if self.batching == "same-length":
                key += (len(question.ids), question.prefix.length)
            groups.setdefault(key, []).append(question)
        sizes = {key: self._group_rows(members) for key, members in groups.items()}
        held = {id(question.prefix) for question in waiting}
        everything = everything or len(held) > min(sizes.values(), default=len(held))
        left = []
        for key, members in groups.items():
            members.sort(key=lambda question: len(question.ids))  # a chunk's lengths close
            size = sizes[key]
            while members and (everything or len(members) >= size):
                chunk, members = members[:size], members[size:]
                answers = self._decode_batch(
                    [question.prefix for question in chunk],
                    [question.ids for question in chunk],
                    chunk[0].decoding,
                )
                for question, answer in zip(chunk, answers, strict=True):
                    results[question.number] = answer
            left += members
        return left

    def _group_rows(self, questions: Sequence[_Question]) -> int:
        """:meth:`_batch_rows` for ``questions``, sized by the longest of their prefixes and
        of their questions."""
        longest = max(questions, key=lambda question: question.prefix.length).prefix
        ids = max(len(question.ids) for question in questions)
        return self._batch_rows(longest.cache, longest.last_logits, ids, questions[0].decoding)

    def _batch_rows(
        self, cache: Any, last_logits: torch.Tensor, longest: int, decoding: Any
    ) -> int:
        """How many questions decode together on caches like ``cache`` (the longest
        ``longest`` tokens): ``generate_batch_size`` where given, else
        :data:`GENERATE_BATCH_SIZE`, fewer where their copies of the cache, grown by the
        question and the answer, and their logits (and, batching across views, the views'
        own caches the waiting questions hold) would take more than :data:`BATCH_MEMORY_SHARE`
        of the device's free memory."""
        if self.generate_batch_size is not None:
            return self.generate_batch_size
        free = free_memory(self.device)
        length = cache.get_seq_length()
        if free is None or not length:
            return GENERATE_BATCH_SIZE
        held = cache_bytes(cache)
        row = held * (length + longest + decoding.max_new_tokens) / length
        if self._across_views()[0] != "off":
            row += held
        logits = 1 if self._keeps_logits else max(longest, 1)
        row += logits * last_logits.shape[-1] * 4  # read in float32
        return max(1, min(GENERATE_BATCH_SIZE, int(free * BATCH_MEMORY_SHARE // row)))

    def _generation_pair(
        self, messages: Sequence[dict[str, Any]], prompt: str
    ) -> tuple[str, str] | None:
        """``prompt`` split into the part every question about the view shares (the template
        up to the last user turn's question text, system prompt and video included) and the
        rest; ``None`` where the prefix cache cannot be reused (no cache, or a question the
        template does not write as it is). Where the vision side reads the prompt (a
        Q-Former's instruction), the whole prompt is the prefix."""
        if self.prefix_reuse == "full":
            return None
        if self._instruction_tokenizers:
            return prompt, ""
        *before, last = messages
        content = list(last.get("content") or ())
        texts = [at for at, part in enumerate(content) if part.get("type") == "text"]
        if not texts:
            return None
        content[texts[-1]] = {**content[texts[-1]], "text": _MARKER}
        head, marker, _ = self.chat_prompt([*before, {**last, "content": content}]).partition(
            _MARKER
        )
        if not marker or not prompt.startswith(head):
            return None
        return head, prompt[len(head) :]

    def _plain_decoding(self) -> bool:
        """Whether ``model.generate`` would decode with nothing but the settings it is given
        (greedy, or temperature and top-p): the checkpoint's generation config switches on no
        other logits processor (:data:`_GENERATE_EXTRAS`), so :meth:`_decode` decodes alike."""
        config = self.model.generation_config
        return all(getattr(config, name, None) in _OFF for name in _GENERATE_EXTRAS)

    def _decode(
        self, cache: Any, last_logits: torch.Tensor, ids: list[int], request: GenerateRequest
    ) -> Generations:
        """Answers decoded from the prefix ``cache`` (left as it was: cut back after use, or a
        deep copy used) and its last position's logits, after the question's ``ids``: as
        ``model.generate`` decodes (greedy: the top token; sampled: temperature then top-p,
        every sample of the request drawn in one batch from its seed; an answer ends at an end
        token)."""
        decoding = request.decoding
        count = decoding.num_samples
        length = cache.get_seq_length()
        past = cache if self.prefix_reuse == "crop" and count == 1 else copy.deepcopy(cache)
        if count > 1:
            past.batch_repeat_interleave(count)
        warpers = []
        if not decoding.greedy:
            from transformers import TemperatureLogitsWarper, TopPLogitsWarper

            warpers = [TemperatureLogitsWarper(decoding.temperature)]
            if decoding.top_p < 1.0:
                warpers.append(TopPLogitsWarper(decoding.top_p))
            torch.manual_seed(request.sample_seed())
        logits = last_logits[None].expand(count, -1)
        if ids:
            logits = self._next_logits(ids, count, past)
        ends = torch.tensor(sorted(self._end_ids()), device=self.device)
        pad = self._pad_token_id()
        written = torch.empty(count, 0, dtype=torch.long, device=self.device)
        running = torch.ones(count, dtype=torch.bool, device=self.device)
        try:
            for step in range(decoding.max_new_tokens):
                scores = logits.float()
                if decoding.greedy:
                    tokens = scores.argmax(-1)
                else:
                    for warper in warpers:
                        scores = warper(written, scores)
                    tokens = torch.multinomial(scores.softmax(-1), num_samples=1)[:, 0]
                if pad is not None:
                    tokens = torch.where(running, tokens, pad)
                written = torch.cat([written, tokens[:, None]], 1)
                running &= ~torch.isin(tokens, ends)
                if not running.any() or step + 1 == decoding.max_new_tokens:
                    break
                logits = self._next_logits(tokens[:, None], count, past)
        finally:
            if past is cache and cache.get_seq_length() > length:
                cache.crop(length - cache.get_seq_length())
        return self._generations(written)

    def _next_logits(self, ids: Any, count: int, past: Any) -> torch.Tensor:
        """The logits of the next token after ``ids`` (a list of ids, the same for each of the
        ``count`` rows, or a ``count x n`` tensor), run on top of the cache ``past``."""
        tensor = ids if torch.is_tensor(ids) else torch.tensor([ids] * count, device=self.device)
        output = self._continuer(
            input_ids=tensor, past_key_values=past, use_cache=True, **self._keep
        )
        return output.logits[:, -1]

    def _decode_batch(
        self,
        prefixes: Sequence[_Prefix],
        continuations: Sequence[list[int]],
        decoding: Any,
    ) -> list[Generations]:
        """Greedy answers to several questions, each on its own prefix (``prefixes``: one per
        question, the same one for the questions about one view, or several views' prefixes;
        each left as it was: a stacked copy of their caches decodes them) after its ids in
        ``continuations``: decoded together, as each alone would be.

        The prefixes' caches are stacked along the batch, the shorter ones left-padded to the
        longest (:func:`_stacked`), and the questions left-padded to the longest: a pad sits
        before a prefix or between a prefix and its question, masked out of every attention,
        and each token is given the position it has without the pads (:meth:`_batch_logits`,
        an M-RoPE family's shifted by its own prefix's ``rope_deltas``), so a question's tokens,
        and its answer's, are where they are when decoded alone on its prefix. A question
        whose answer has ended leaves the batch (the cache keeps the others' rows only)."""
        rows, device = len(continuations), self.device
        lengths = torch.tensor([prefix.length for prefix in prefixes], device=device)
        width = int(lengths.max())
        spans = torch.tensor([len(ids) for ids in continuations], device=device)
        longest = int(spans.max())
        pads = longest - spans
        pad = self._pad_token_id()
        filler = 0 if pad is None else pad
        past = _stacked([prefix.cache for prefix in prefixes])
        steps = torch.arange(longest, device=device)
        mask = torch.cat(
            [
                (torch.arange(width, device=device)[None] >= (width - lengths)[:, None]).long(),
                (steps[None] >= pads[:, None]).long(),
            ],
            1,
        )
        deltas = None
        if prefixes[0].deltas is not None:
            deltas = torch.cat([prefix.deltas.reshape(1, -1) for prefix in prefixes]).to(device)
        logits = torch.stack([prefix.last_logits for prefix in prefixes])
        if longest:
            ids = torch.tensor(
                [[filler] * (longest - len(one)) + list(one) for one in continuations],
                device=device,
            )
            positions = lengths[:, None] + (steps[None] - pads[:, None]).clamp(min=0)
            asked = self._batch_logits(ids, mask, positions, past, deltas)
            logits = torch.where((spans > 0)[:, None], asked, logits)
        positions = (lengths + spans)[:, None]
        ends = torch.tensor(sorted(self._end_ids()), device=device)
        written = torch.full((rows, 0), filler, dtype=torch.long, device=device)
        active = torch.arange(rows, device=device)  # the rows still answering
        for step in range(decoding.max_new_tokens):
            tokens = logits.float().argmax(-1)
            column = torch.full((rows,), filler, dtype=torch.long, device=device)
            column[active] = tokens
            written = torch.cat([written, column[:, None]], 1)
            going = ~torch.isin(tokens, ends)
            if not going.any() or step + 1 == decoding.max_new_tokens:
                break
            if not going.all():  # the ended answers leave the batch
                kept = going.nonzero()[:, 0]
                past.batch_select_indices(kept)
                active, tokens, mask, positions = (
                    active[kept],
                    tokens[kept],
                    mask[kept],
                    positions[kept],
                )
                deltas = None if deltas is None else deltas[kept]
            mask = torch.cat([mask, torch.ones_like(mask[:, :1])], 1)
            logits = self._batch_logits(tokens[:, None], mask, positions, past, deltas)
            positions = positions + 1
        if rows > 1:
            self.decode_batches += 1
            self.batched_questions += rows
            self.cross_view_batches += len({prefix.view for prefix in prefixes}) > 1
        return [self._generations(written[row : row + 1]) for row in range(rows)]

    def _batch_logits(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        positions: torch.Tensor,
        past: Any,
        deltas: torch.Tensor | None,
    ) -> torch.Tensor:
        """The logits of the next token after each row of ``ids`` on top of the cache
        ``past``: ``mask`` covers the cached and the new tokens (0: a pad), ``positions`` are
        the new tokens' positions in text order; a family placing tokens by multimodal rotary
        positions (M-RoPE: Qwen2-VL and its kin) gets them on its three axes, each row's shifted
        by its prefix's ``deltas`` (:meth:`_rope_deltas`, one per row) as the model shifts a
        continuation's."""
        if deltas is not None:
            positions = (positions + deltas.to(positions.device)).unsqueeze(0).expand(3, -1, -1)
        output = self._continuer(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            past_key_values=past,
            use_cache=True,
            **self._keep,
        )
        return output.logits[:, -1]

    def _rope_deltas(self) -> torch.Tensor | None:
        """The shift the model keeps from its last prefix forward between a text token's
        multimodal rotary position and its place in the sequence (``rope_deltas``: M-RoPE
        families), ``None`` for a family whose positions are the places."""
        for module in (self.model, getattr(self.model, "model", None)):
            deltas = getattr(module, "rope_deltas", None)
            if torch.is_tensor(deltas):
                return deltas
        return None

    def _generate_whole(self, request: GenerateRequest, prompt: str) -> Generations:
        """Answers from ``model.generate`` on the whole prompt, the video encoded again."""
        decoding = request.decoding
        inputs = self.model_inputs(request, prompt)
        sampling = {}
        if not decoding.greedy:
            sampling = {
                "temperature": decoding.temperature,
                "top_p": decoding.top_p,
                "top_k": 0,  # off, whatever the checkpoint's generation_config says
            }
            torch.manual_seed(request.sample_seed())
        output = self.model.generate(
            **inputs,
            do_sample=not decoding.greedy,
            num_beams=1,
            repetition_penalty=1.0,
            max_new_tokens=decoding.max_new_tokens,
            num_return_sequences=decoding.num_samples,
            pad_token_id=self._pad_token_id(),
            **sampling,
        )
        return self._generations(output[:, inputs["input_ids"].shape[1] :])

    def _generations(self, new: torch.Tensor) -> Generations:
        """The answers in ``new`` (one row of generated ids per sample), each up to its end."""
        texts, counts, ends = [], [], self._end_ids()
        for ids in new.cpu().tolist():  # each up to its first end token (a shorter one's pads go)
            kept = next((ids[:at] for at, token in enumerate(ids) if token in ends), ids)
            counts.append(len(kept))
            texts.append(self.tokenizer.decode(kept, skip_special_tokens=True).strip())
        return Generations(tuple(texts), tuple(counts))

    def _end_ids(self) -> set[int]:
        """The tokens that end an answer: the generation config's EOS ids and the tokenizer's."""
        ends = getattr(self.model.generation_config, "eos_token_id", None)
        ends = set(ends if isinstance(ends, list) else [] if ends is None else [ends])
        if self.tokenizer.eos_token_id is not None:
            ends.add(self.tokenizer.eos_token_id)
        return ends

    def _pad_token_id(self) -> int | None:
        pad = self.tokenizer.pad_token_id
        return pad if pad is not None else next(iter(sorted(self._end_ids())), None)

    @torch.inference_mode()
    def answer_logprobs(self, requests: Sequence[TextsRequest]) -> list[list[torch.Tensor]]:
        """Per request, per answer: its tokens' log-probabilities (:meth:`VideoLLM.answer_logprobs`;
        the answers as :meth:`prompt_texts` writes them)."""
        self._view = None
        results = []
        for request in requests:
            pairs = self.prompt_pairs(request.texts, request.question, request.answers)
            results.append(
                [
                    token_logprobs(logits[:-1], torch.tensor(targets, device=logits.device)).cpu()
                    for logits, targets in map(self._forward, [request] * len(pairs), pairs)
                ]
            )
        self._view = None  # the last view's cache goes with the batch
        return results

    @torch.inference_mode()
    def first_tokens(self, asks: Sequence[Ask]) -> list[FirstTokens]:
        """Per ask, the answers' next-token logits after its prompt (each option letter's
        spellings pooled by logsumexp), with their vocabulary probabilities."""
        self._view = None
        results, prompts = [], {}
        for ask in asks:
            if ask.count not in prompts:  # rendered once per option count
                prompts[ask.count] = self._prompt(ask.count)
            head, tail = prompts[ask.count]
            pair = (head, ask.question + tail)
            if self._instruction_tokenizers:  # the vision side reads the question: all prefix
                pair = (head + ask.question + tail, "")
            logits, _ = self._forward(ask.request, pair)
            answer = logits[-1].float()
            ids = self._answer_ids(ask.answers)
            vocabulary = answer.softmax(0)
            results.append(
                FirstTokens(
                    torch.stack([torch.logsumexp(answer[one], 0) for one in ids]).cpu(),
                    torch.stack([vocabulary[one].sum() for one in ids]).cpu(),
                )
            )
        self._view = None
        return results

    def _answer_ids(self, answers: Sequence[str]) -> list[list[int]]:
        """The token ids spelling each one-token answer as an answer's first token: entail's
        ``Yes``/``No`` as the reference encodes them, the option letters in every spelling."""
        if tuple(answers) == ENTAIL_ANSWERS:
            if None in self._entail_ids:
                raise ValueError(f"{self.model_id}: the tokenizer encodes 'Yes' or 'No' as nothing")
            return [[token] for token in self._entail_ids]
        letter_ids = self._letter_ids[: len(answers)]
        if any(not ids for ids in letter_ids):
            raise ValueError(
                f"{self.model_id}: option letters {''.join(answers)} are not single tokens"
            )
        return letter_ids

    def _forward(
        self, request: TextsRequest, pair: tuple[str, str]
    ) -> tuple[torch.Tensor, list[int]]:
        """The continuation's tokens after the prefix, and the logits predicting each of them
        then the next: on top of the view's prefix cache, kept for the next pair on the same
        view and prefix (a caption group, a proficiency group), or one forward over the whole
        prompt where there is no cache to reuse or the tokenizer merges across the split."""
        prefix, continuation = pair
        prefix_ids, ids = self.encode(prefix), self.encode(prefix + continuation)
        if self.prefix_reuse != "full" and ids[: len(prefix_ids)] == prefix_ids:
            encoded = self._prefix_cache(request, prefix)
            targets = ids[len(prefix_ids) :]
            logits = encoded.last_logits[None]
            if targets:
                logits = torch.cat([logits, self._continue(encoded.cache, targets)])
            return logits, targets
        targets = ids[_common_length(prefix_ids, ids) :]
        return self._whole(request, prefix, continuation, len(targets)), targets
