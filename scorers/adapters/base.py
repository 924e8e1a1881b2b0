"""What every model adapter is: built from a Hub id or a local path, knows one model family.

Two shapes, as in the papers: ``EmbeddingAdapter`` for models that factorise (a view and a
text are encoded apart, every score is a dot product, so the engine can encode each once and
cache view embeddings), and ``RequestAdapter`` for models that must see a view and a text
together (cross-encoders, video LLMs, text-only LMs), scored through ``TextsRequest``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import torch

from foilkit.errors import fix
from foilkit.scorers.once import once
from foilkit.scorers.requests import TextScores, TextsRequest

if TYPE_CHECKING:
    from foilkit.scorers.placement import Placement


class FrameCountError(ValueError):
    """The model cannot take the frame count asked for (a user error: the fix is a flag)."""


def checked_choice(name: str, value: str | None, choices: tuple[str, ...]) -> str:
    """``value``, or the first of ``choices`` when unset; anything else is an error naming them."""
    value = value or choices[0]
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose from {list(choices)}")
    return value


def frame_count_error(
    model_id: str, native: int, got: int, *, fewer: bool = False
) -> FrameCountError:
    """The error for a frame count the model cannot take: it was trained on exactly ``native``
    frames (its config's ``vision_config.num_frames``); ``fewer``: fewer are spread over them."""
    takes = f"at most {native}" if fewer else f"exactly {native}"
    return FrameCountError(
        f"{model_id} takes {takes} frames per video (its config's vision_config.num_frames), "
        f"not {got}: pass {fix(f'--num-frames {native}', f'num_frames={native}')}"
    )


class Adapter:
    """Base of all adapters.

    Args:
        model_id: Hub id or local path, passed to ``from_pretrained``.
        revision: Hub revision (branch, tag or commit); recorded with every result.
        dtype: parameter and activation dtype.
        device: where the model runs (with ``placement``: where its inputs go, set on loading
            to the dispatched model's first device).
        trust_remote_code: passed to ``from_pretrained``; off unless the user turns it on.
        mode: one of the class's ``modes``; ``None`` picks the first.
        placement: spread the model over devices (``device_map``, see
            :mod:`foilkit.scorers.placement`) instead of moving it whole to ``device``.
    """

    name: ClassVar[str]
    #: the kind of number ``score`` returns (a class default; an option may change it per instance)
    score_kind: str
    modes: ClassVar[tuple[str, ...]] = ("default",)
    #: the protocol settings (``foilkit.scorers.protocols.MODEL_SETTINGS``) this adapter takes as
    #: constructor options, besides ``mode``
    options: ClassVar[tuple[str, ...]] = ()
    needs_video: ClassVar[bool] = True
    #: whether the adapter asks a request's ``question`` (a benchmark's own prompt, the texts as
    #: its answers); the others score the texts alone
    asks_questions: ClassVar[bool] = False
    #: generate mode's LLM judge (:class:`foilkit.scorers.judge.Judge`), set by the run when one
    #: is configured; ``None``: answers are read by the rules alone
    judge: Any = None
    #: whether a ``placement`` may spread the model: it loads through :meth:`_load` and runs it
    #: through its ``forward`` only (accelerate's hooks load offloaded weights around
    #: ``forward``; a parameter read or a sub-model called directly would find them missing)
    spreads: ClassVar[bool] = False
    #: the processor keywords every call passes, beside the loaded processor's own settings
    #: (recorded with them: :meth:`processor_settings`)
    processor_call: ClassVar[dict[str, Any]] = {}

    def __init__(
        self,
        model_id: str,
        *,
        revision: str | None = None,
        dtype: torch.dtype = torch.float32,
        device: str | torch.device = "cpu",
        trust_remote_code: bool = False,
        mode: str | None = None,
        placement: Placement | None = None,
    ):
        mode = mode or self.modes[0]
        if mode not in self.modes:
            raise ValueError(
                f"adapter {self.name!r} has no mode {mode!r}; choose from {list(self.modes)}"
            )
        self.model_id, self.revision, self.dtype = model_id, revision, dtype
        self.device, self.trust_remote_code, self.mode = (
            torch.device(device),
            trust_remote_code,
            mode,
        )
        if placement is not None and not self.spreads:
            raise ValueError(
                f"adapter {self.name!r} runs its model whole on one device (only the video LLM "
                "and text LM adapters spread theirs): leave out device_map (--device-map) and "
                "its options"
            )
        self.placement = placement
        #: the dispatched model's map, summarised (``None`` when the model is on one device)
        self.device_map: dict[str, Any] | None = None

    @classmethod
    def matches(cls, config: Any) -> bool:
        """Whether this adapter handles a model with this ``transformers`` config."""
        return False

    @classmethod
    def check_frames(
        cls,
        model_id: str,
        num_frames: int,
        *,
        revision: str | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        """Raise :class:`FrameCountError` when the model cannot take ``num_frames``
        frames per view, read from its config files before any weight loads (a constraint found
        only once the model is up costs its loading time); default: any count."""

    @classmethod
    def native_settings(
        cls, model_id: str, *, revision: str | None = None, trust_remote_code: bool = False
    ) -> dict[str, Any]:
        """Protocol settings the model itself fixes (``num_frames`` of a video encoder trained on
        a set frame count), read from its config files without loading weights; a protocol that
        leaves a setting to the model takes it from here."""
        return {}

    def _pretrained_kwargs(self) -> dict[str, Any]:
        return {"revision": self.revision, "trust_remote_code": self.trust_remote_code}

    def _load(self, auto_class: Any) -> torch.nn.Module:
        """The model in eval mode: moved whole to ``device``, or dispatched by ``placement``
        (never moved afterwards: accelerate's hooks place each layer's inputs). Loaded once
        per run (:func:`foilkit.scorers.once.once`): another config's adapter of the same
        model, dtype and device takes the weights the first one loaded."""
        placement = None if self.placement is None else repr(self.placement.to_record())
        key = ("model", auto_class, self.model_id, self.dtype, str(self.device), placement)
        key += tuple(sorted(self._pretrained_kwargs().items()))
        model, self.device, self.device_map = once(
            key, lambda: self._load_weights(auto_class), slot="model"
        )
        return model

    def _load_weights(
        self, auto_class: Any
    ) -> tuple[torch.nn.Module, torch.device, dict[str, Any] | None]:
        """:meth:`_load`'s model, the device its inputs go to and its device map's summary."""
        if self.placement is None:
            model = auto_class.from_pretrained(
                self.model_id, dtype=self.dtype, **self._pretrained_kwargs()
            )
            return model.to(self.device).eval(), self.device, None
        from foilkit.scorers.placement import device_map_summary, input_device

        try:
            model = auto_class.from_pretrained(
                self.model_id,
                dtype=self.dtype,
                **self._pretrained_kwargs(),
                **self.placement.pretrained_kwargs(),
            )
        except ValueError as error:
            if "offload_folder" not in str(error):
                raise
            raise ValueError(
                f"{self.model_id} does not fit in max_memory (--max-memory) and part of it must "
                "be written to disk: pass offload_folder (--offload-folder DIR) or allow more "
                "memory"
            ) from error
        device_map = getattr(model, "hf_device_map", None) or {"": str(self.device)}
        return model.eval(), input_device(device_map), device_map_summary(device_map)

    def _pretrained(self, auto_class: Any, **options: Any) -> Any:
        """``auto_class.from_pretrained`` of the model (a processor, tokenizer or config), loaded
        once per run as the weights are (:meth:`_load`)."""
        kwargs = {**self._pretrained_kwargs(), **options}
        key = ("pretrained", auto_class, self.model_id, *sorted(kwargs.items()))
        return once(key, lambda: auto_class.from_pretrained(self.model_id, **kwargs))

    def describe(self) -> dict[str, Any]:
        """What determines this adapter's numbers (recorded in ``run.json``, part of cache keys)."""
        return {"adapter": self.name, "mode": self.mode, "score_kind": self.score_kind}

    def prompt_templates(self) -> dict[str, str] | None:
        """The rendered prompt with a ``{question}`` slot by option count, for adapters that ask
        a question (recorded in ``run.json``); ``None`` for the rest."""
        return None

    def processor_settings(self) -> dict[str, dict[str, Any]]:
        """Every setting of the processors this adapter feeds the model through (image, video
        and audio processors' configs, e.g. a Qwen-VL video processor's ``max_pixels``; the
        tokenizer's length and sides), by processor, for ``run.json``: what the model received
        is then on record, not only the checkpoint's name; ``call``: the keywords each call
        adds (:attr:`processor_call`). See :func:`processor_settings`."""
        settings = processor_settings(self)
        if self.processor_call:
            settings["call"] = dict(self.processor_call)
        return settings

    def backend_record(self) -> dict[str, Any]:
        """Where the model runs, for ``run.json``: here, in this process (a served model's
        adapter records its server, settings and usage)."""
        return {"name": "local"}

    def dtype_record(self) -> str:
        """The dtype as ``run.json`` records it (a served model's adapter: not applicable)."""
        return str(self.dtype).removeprefix("torch.")

    def placement_record(self) -> dict[str, Any] | None:
        """This process's share of a spread model and where its layers went, for ``run.json``
        (``None``: the model is whole on ``device``)."""
        if self.placement is None:
            return None
        return {**self.placement.to_record(), **(self.device_map or {})}


class EmbeddingAdapter(Adapter):
    """A dual encoder: views and texts are embedded apart and compared by dot products."""

    score_kind = "similarity"

    def encode_views(self, frames: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """One ``K x D`` float tensor of L2-normalised embeddings per view (``K`` = 1 or frames)."""
        raise NotImplementedError

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        """An ``N x D`` float tensor of L2-normalised text embeddings."""
        raise NotImplementedError

    def similarity(self, view: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
        """Scores of one view's ``K x D`` embedding against ``N x D`` texts: ``N`` floats."""
        raise NotImplementedError


class RequestAdapter(Adapter):
    """A model that sees a view and its texts together."""

    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        """One ``TextScores`` per request, in order."""
        raise NotImplementedError


def dtype_problem(dtype: torch.dtype, device: torch.device) -> str | None:
    """Why ``device`` cannot run a model in ``dtype`` (``None`` when it can).

    A tiny probe of what the encoders and language models run (matmul, convolution, layer norm,
    softmax): torch 2.14 runs float16 on CPU (slowly), older builds and some accelerators do
    not, and a paper protocol must say so rather than score in another precision silently.
    """
    try:
        with torch.inference_mode():
            x = torch.ones(2, 3, 4, 4, dtype=dtype, device=device)
            conv = torch.nn.functional.conv2d(x, torch.ones(4, 3, 2, 2, dtype=dtype, device=device))
            flat = conv.flatten(1)
            hidden = torch.nn.functional.layer_norm(flat @ flat.T, (2,))
            torch.softmax(hidden, dim=-1).sum().item()
    except (RuntimeError, NotImplementedError, TypeError) as error:
        return f"{device.type} cannot run {str(dtype).removeprefix('torch.')}: {error}"
    return None


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``auto``: bfloat16 on a GPU that supports it, float16 on other GPUs, float32 on CPU."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype in (None, "auto"):
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    names = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
        "float16": torch.float16,
        "fp16": torch.float16,
    }
    if dtype not in names:
        raise ValueError(f"unknown dtype {dtype!r}; choose from 'auto', {sorted(names)}")
    return names[dtype]


#: Where processors live on an adapter or on a transformers processor that bundles several.
_PROCESSOR_PARTS = ("processor", "image_processor", "video_processor", "feature_extractor")
_TOKENIZER_SETTINGS = ("model_max_length", "padding_side", "truncation_side")


def processor_settings(owner: Any) -> dict[str, dict[str, Any]]:
    """``{"image_processor": {...}, "video_processor": {...}, "tokenizer": {...}}``: the
    JSON-able settings of every processor ``owner`` holds (directly or inside a bundled
    ``processor``), each under its attribute name; each setting once, from the object that
    holds it (a processor's ``to_dict()``; a tokenizer's class, length and padding sides)."""
    found: dict[str, Any] = {}
    for part in _PROCESSOR_PARTS:
        value = getattr(owner, part, None)
        if value is None:
            continue
        for inner in _PROCESSOR_PARTS[1:]:  # a bundled processor's own parts
            if getattr(value, inner, None) is not None:
                found.setdefault(inner, getattr(value, inner))
        if part != "processor" or not any(getattr(value, p, None) for p in _PROCESSOR_PARTS[1:]):
            found.setdefault(part, value)
    tokenizer = getattr(owner, "tokenizer", None) or getattr(
        getattr(owner, "processor", None), "tokenizer", None
    )
    settings = {name: _settings(value) for name, value in found.items()}
    if tokenizer is not None:
        settings["tokenizer"] = {
            "class": type(tokenizer).__name__,
            **{key: getattr(tokenizer, key, None) for key in _TOKENIZER_SETTINGS},
        }
    return settings


def _settings(processor: Any) -> dict[str, Any]:
    """A processor's configuration as plain JSON values (its class first)."""
    import json

    data = processor.to_dict() if hasattr(processor, "to_dict") else {}
    out: dict[str, Any] = {"class": type(processor).__name__}
    for key, value in sorted(data.items()):
        if key.startswith("_"):
            continue
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            value = repr(value)
        out[key] = value
    return out
