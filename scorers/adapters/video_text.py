"""Native video-text dual encoders: the whole clip goes through the model's own video tower.

Unlike an image-text model on frames (``dual_encoder.py``), these models embed a clip as one
sequence, with temporal position information, so a view and its reversal score differently.
Views and texts still factorise: the engine embeds each view and each text once and caches the
view embeddings; every score is the dot product of the two.

``videoprism`` (``VideoPrismClipModel``, Google's VideoPrism LvT)
    Frames resized to the processor's size (288 x 288 for the released checkpoints) with pixels
    in [0, 1] (``do_normalize=False``), exactly ``vision_config.num_frames`` (16) of them: a view
    with fewer (a window shorter than that many frames) has them spread over the model's slots
    by ``floor(k * T / N)``, as VideoPrism's own reader (``read_and_preprocess_video`` of its
    video-text demo: ``np.linspace(0, T, N, endpoint=False)``) repeats frames of short clips; a
    view with more is refused. Texts are padded to the processor's 64 tokens (the text tower pools
    the class token appended after them). Both embeddings come L2-normalised from the model, so
    the score is their cosine. The model's ``logits_per_video`` normalise over the videos of a
    batch, so they are no per-pair score.
``pe-video`` (``PeVideoModel``, Meta's Perception Encoder audio-visual, video-text part)
    Frames as its ``PeVideoVideoProcessor`` makes them (``num_frames`` of its config, 16 for
    ``facebook/pe-av-*-16-frame``, by linspace with both ends: foilkit's ``uniform``); any frame
    count runs (rotary positions). The video embedding is ``video_head`` over the video
    encoder's pooled output, the text embedding ``text_video_head`` over the text model's last
    hidden state at the first token, as in the model's ``forward``; its logit is
    ``logit_scale * (video . text) + logit_bias``, one positive scale per model, so foilkit
    scores the dot product behind it (the same decisions and rankings). In transformers 5.23
    ``PeVideoModel`` has no ``get_video_features`` (it is defined inside ``__init__``), so the
    adapter calls the towers directly. The released PE-AV checkpoints
    (``facebook/pe-av-*``) are ``PeAudioVideoModel``s, whose video-text part is a
    ``PeVideoModel`` (``video_model``, its text tower tied to the top-level ``text_model``); in
    transformers 5.23 a saved ``PeAudioVideoModel`` does not load back through
    ``from_pretrained`` (its tied audio weights fail), so the adapter builds that
    ``PeVideoModel`` from the config and loads exactly its tensors from the checkpoint
    (:func:`load_pe_video_part`), refusing a checkpoint that lacks any of them.

Both need the model's native frame count: :meth:`VideoTextEncoderAdapter.native_settings`
reads it from the video processor config (``num_frames``), else the model config
(``vision_config.num_frames``), so the protocol's frames are the model's own and are recorded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import torch

from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import pooled
from foilkit.scorers.adapters.base import EmbeddingAdapter, frame_count_error
from foilkit.scorers.once import once


def native_frame_count(config: Any, video_processor: Any, *, fixed: bool = False) -> int | None:
    """The frame count a video model takes: its video processor's ``num_frames`` (what its own
    preprocessing samples), else the vision config's ``num_frames`` (what it was trained on);
    with ``fixed`` (temporal position embeddings fix the count) the vision config's first.
    ``None`` when neither names one (the run then needs ``num_frames`` given)."""
    sources = [video_processor, getattr(config, "vision_config", None)]
    for source in reversed(sources) if fixed else sources:
        count = getattr(source, "num_frames", None)
        if isinstance(count, int) and count > 0:
            return count
    return None


def spread_frames(frames: torch.Tensor, count: int) -> torch.Tensor:
    """``count`` frames out of ``T <= count``: frame ``floor(k * T / count)`` in slot ``k``, so
    each frame is repeated about equally and the order is kept."""
    slots = torch.arange(count) * len(frames) // count
    return frames[slots.to(frames.device)]


class VideoTextEncoderAdapter(EmbeddingAdapter):
    """A video-text dual encoder: one ``1 x D`` embedding per view, one per text, dot product.

    Subclasses name the ``model_types`` they claim and how each tower is called.
    """

    model_types: ClassVar[tuple[str, ...]] = ()
    #: the model takes exactly its native frame count (fixed temporal position embeddings)
    fixed_frames: ClassVar[bool] = False
    #: what the score is, recorded with every run
    score_definition: ClassVar[str] = "dot product of the model's video and text embeddings"
    #: every video goes in as sampled: the processor's own frame sampling is off
    processor_call: ClassVar[dict[str, Any]] = {"do_sample_frames": False}

    def __init__(self, model_id: str, **kwargs: Any):
        super().__init__(model_id, **kwargs)
        from transformers import AutoProcessor

        self.model = self.load_model()
        self.processor = self._pretrained(AutoProcessor)
        self.num_frames = native_frame_count(
            self.model.config, self.processor.video_processor, fixed=self.fixed_frames
        )

    @classmethod
    def matches(cls, config: Any) -> bool:
        return getattr(config, "model_type", None) in cls.model_types

    def load_model(self) -> torch.nn.Module:
        """The model, on the adapter's device and dtype, in eval mode."""
        from transformers import AutoModel

        return self._load(AutoModel)

    @classmethod
    def native_settings(
        cls, model_id: str, *, revision: str | None = None, trust_remote_code: bool = False
    ) -> dict[str, Any]:
        from transformers import AutoConfig, AutoProcessor

        pretrained = {"revision": revision, "trust_remote_code": trust_remote_code}
        config = AutoConfig.from_pretrained(model_id, **pretrained)
        processor = AutoProcessor.from_pretrained(model_id, **pretrained)
        count = native_frame_count(config, processor.video_processor, fixed=cls.fixed_frames)
        return {} if count is None else {"num_frames": count}

    @classmethod
    def check_frames(
        cls,
        model_id: str,
        num_frames: int,
        *,
        revision: str | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        """A model with fixed temporal position embeddings takes at most its native count
        (fewer frames are spread over its slots)."""
        if not cls.fixed_frames:
            return
        native = cls.native_settings(
            model_id, revision=revision, trust_remote_code=trust_remote_code
        ).get("num_frames")
        if native is not None and num_frames > native:
            raise frame_count_error(model_id, native, num_frames, fewer=True)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "pooling": "native",
            "native_frames": self.num_frames,
            "score": self.score_definition,
        }

    def _fit(self, frames: torch.Tensor) -> torch.Tensor:
        """The frames the model takes for one view (``T x C x H x W``)."""
        if not self.fixed_frames or len(frames) == self.num_frames:
            return frames
        if len(frames) < self.num_frames:
            return spread_frames(frames, self.num_frames)
        raise frame_count_error(self.model_id, self.num_frames, len(frames), fewer=True)

    def pixel_values(self, views: Sequence[torch.Tensor]) -> torch.Tensor:
        """The model's ``pixel_values_videos`` of equally long views, by its own processor."""
        inputs = self.processor(
            videos=list(views), do_sample_frames=False, return_tensors="pt", device=self.device
        )
        return inputs["pixel_values_videos"].to(self.device, self.dtype)

    def text_inputs(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        """The model's ``input_ids`` and ``attention_mask``, by its own processor."""
        inputs = self.processor(text=list(texts), return_tensors="pt", **self.text_kwargs())
        return {
            key: inputs[key].to(self.device)
            for key in ("input_ids", "attention_mask")
            if key in inputs
        }

    def text_kwargs(self) -> dict[str, Any]:
        """Tokenizer options beyond the processor's own defaults."""
        return {}

    def video_embeddings(self, pixel_values_videos: torch.Tensor) -> torch.Tensor:
        """``B x D`` embeddings of ``B`` clips."""
        raise NotImplementedError

    def text_embeddings(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """``N x D`` embeddings of ``N`` tokenized texts."""
        raise NotImplementedError

    @torch.inference_mode()
    def encode_views(self, frames: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        views = [self._fit(view) for view in frames]
        embeddings: list[torch.Tensor | None] = [None] * len(views)
        # views of one length go through the model together (no padding frames)
        by_length: dict[int, list[int]] = {}
        for position, view in enumerate(views):
            by_length.setdefault(len(view), []).append(position)
        for positions in by_length.values():
            batch = self.video_embeddings(self.pixel_values([views[i] for i in positions]))
            # VideoPrism's attention pooling keeps a query axis: B x 1 x D
            batch = batch.reshape(len(positions), -1).float().cpu()
            for position, embedding in zip(positions, batch):
                embeddings[position] = embedding[None]
        return embeddings  # type: ignore[return-value]

    @torch.inference_mode()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        embeddings = self.text_embeddings(self.text_inputs(texts))
        return embeddings.reshape(len(texts), -1).float().cpu()

    def similarity(self, view: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
        """The dot product of the view's ``1 x D`` embedding with each of ``N x D`` texts."""
        return (texts.double() @ view.double()[0]).float()


@register_adapter("videoprism")
class VideoPrismAdapter(VideoTextEncoderAdapter):
    """VideoPrism LvT (``VideoPrismClipModel``): cosine of its normalised embeddings."""

    model_types = ("videoprism",)
    fixed_frames = True
    score_definition = "cosine of the model's L2-normalised video and text embeddings"

    def video_embeddings(self, pixel_values_videos: torch.Tensor) -> torch.Tensor:
        return pooled(self.model.get_video_features(pixel_values_videos=pixel_values_videos))

    def text_embeddings(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        return pooled(self.model.get_text_features(**inputs))


@register_adapter("pe-video")
class PeVideoAdapter(VideoTextEncoderAdapter):
    """Perception Encoder video-text (``PeVideoModel``): the dot product behind its logit."""

    model_types = ("pe_video", "pe_audio_video")
    score_definition = (
        "dot product of the model's video and text embeddings (its logit is "
        "logit_scale * dot + logit_bias)"
    )

    def load_model(self) -> torch.nn.Module:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(self.model_id, **self._pretrained_kwargs())
        if config.model_type != "pe_audio_video":
            return super().load_model()
        key = ("model", "pe-video", self.model_id, self.revision, self.dtype, str(self.device))
        return once(  # once per run, as :meth:`Adapter._load`'s
            key,
            lambda: (
                load_pe_video_part(self.model_id, config, revision=self.revision)
                .to(self.device, self.dtype)
                .eval()
            ),
            slot="model",
        )

    def text_kwargs(self) -> dict[str, Any]:
        # the processor sets no text defaults: pad per batch, cut at the tokenizer's limit
        return {"padding": True, "truncation": True}

    def video_embeddings(self, pixel_values_videos: torch.Tensor) -> torch.Tensor:
        encoded = self.model.video_encoder(pixel_values_videos=pixel_values_videos)
        return self.model.video_head(encoded.pooler_output)

    def text_embeddings(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        # PeVideoModel.forward: the text model's last hidden state at the first token
        hidden = self.model.text_model(**inputs, output_hidden_states=True).hidden_states[-1]
        return self.model.text_video_head(hidden[:, 0])


#: Where a PeAudioVideoModel checkpoint keeps the tensors of its video-text PeVideoModel:
#: checkpoint prefix -> the PeVideoModel's own prefix (its text tower is the tied top-level one).
PE_VIDEO_PART = {"video_model.": "", "text_model.": "text_model."}


def load_pe_video_part(model_id: str, config: Any, *, revision: str | None = None) -> Any:
    """The ``PeVideoModel`` inside a ``PeAudioVideoModel`` checkpoint, with its own weights.

    Raises ``ValueError`` naming the tensors the checkpoint lacks (or holds in another shape).
    """
    from safetensors import safe_open
    from transformers import PeVideoModel

    model = PeVideoModel(config.video_config)
    wanted = model.state_dict()
    state = {}
    for path in _checkpoint_files(model_id, revision):
        with safe_open(path, framework="pt") as tensors:
            for key in tensors.keys():
                for prefix, own in PE_VIDEO_PART.items():
                    name = own + key[len(prefix) :]
                    if key.startswith(prefix) and name in wanted:
                        state[name] = tensors.get_tensor(key)
    missing = sorted(set(wanted) - set(state))
    misshapen = sorted(k for k, v in state.items() if v.shape != wanted[k].shape)
    if missing or misshapen:
        raise ValueError(
            f"{model_id} is a pe_audio_video checkpoint without the video-text tensors foilkit "
            f"reads ({', '.join(f'{prefix}*' for prefix in PE_VIDEO_PART)}): "
            f"missing {missing[:5]}, misshapen {misshapen[:5]}"
        )
    model.load_state_dict(state, strict=True)
    return model


def _checkpoint_files(model_id: str, revision: str | None) -> list[str]:
    """The safetensors files of a checkpoint (sharded or not), local or from the Hub."""
    import json

    from transformers.utils import cached_file

    options = {"revision": revision, "_raise_exceptions_for_missing_entries": False}
    index = cached_file(model_id, "model.safetensors.index.json", **options)
    if index is not None:
        with open(index, encoding="utf-8") as handle:
            shards = sorted(set(json.load(handle)["weight_map"].values()))
        return [cached_file(model_id, shard, revision=revision) for shard in shards]
    single = cached_file(model_id, "model.safetensors", **options)
    if single is None:
        raise ValueError(f"{model_id} holds no model.safetensors (nor a sharded index)")
    return [single]
