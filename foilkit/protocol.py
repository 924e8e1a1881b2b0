"""What a scoring protocol is, as data: :class:`Protocol`, the settings it fixes, the uniform
protocol per model family, and the references shared by many benchmarks.

Each benchmark declares its paper protocols in its own folder (``PROTOCOLS`` of
``foilkit.builders.<name>.protocols``: model family -> :class:`Protocol`), carried by its
:class:`~foilkit.builders.spec.Benchmark`; :mod:`foilkit.scorers.protocols` resolves them for a
run. This module sits below both (it imports nothing of foilkit), so a benchmark declares its
protocols without importing the scorer, and the scorer reads them without importing a builder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

#: The settings a protocol fixes, in the order records show them. Frame settings apply to
#: every family that sees video; the others go to the adapter as constructor options, only to
#: the families that take them (``Adapter.options``).
FRAME_SETTINGS = tuple(
    "sampling num_frames stride target_fps max_frames normalized_fps window".split()
)
MODEL_SETTINGS = tuple(
    "mode pooling reduction itm_output first_token max_text_tokens preprocess score_scale parser "
    "temperature top_p num_samples max_new_tokens prompt".split()
)
#: The settings of ``generate`` mode only (the answer parser and the decoding): a protocol's
#: values drop out when another mode is asked for (``--mode choice`` under ``paper``).
GENERATE_SETTINGS = ("parser", "temperature", "top_p", "num_samples", "max_new_tokens")
#: Settings of how the model is loaded, for every family: the weights' dtype.
LOAD_SETTINGS = ("dtype",)
SETTINGS = FRAME_SETTINGS + MODEL_SETTINGS + LOAD_SETTINGS


def setting_label(name: str) -> str:
    """A setting as reports name it, the way its flag does (``num_frames``: ``frames``)."""
    return name.removeprefix("num_")


@dataclass(frozen=True)
class Protocol:
    """The published choices behind a score, for one benchmark and model family.

    Attributes:
        sampling, num_frames, stride, target_fps, max_frames, normalized_fps: the frame sampling
            policy (:class:`foilkit.scorers.video.SamplingPolicy`); ``num_frames=None`` leaves
            the count to the model (its ``native_settings``: a video encoder's own frame count).
        window: how a window in seconds becomes frames
            (:data:`foilkit.scorers.video.WINDOW_RULES`; ``None``: ``half-open``).
        mode, pooling, reduction, itm_output, first_token, max_text_tokens, preprocess,
            score_scale, prompt: adapter options (video-LLM mode; pooling of frames or
            candidates; how token log-probabilities become a score; BLIP's ITM output and first
            text token; text truncation; the image preprocessing; ``cosine`` or the reference's
            ``logit`` = logit_scale x cosine; the video LLM's choice-mode question). ``None``
            leaves the adapter's own default.
        parser, temperature, top_p, num_samples, max_new_tokens: ``generate`` mode's answer
            parser (:mod:`foilkit.scorers.parsers`) and decoding
            (:class:`foilkit.scorers.requests.Decoding`; unset: one greedy answer).
        dtype: the weights' dtype the reference ran in (``None``: foilkit's ``auto``); a device
            that cannot run it falls back to float32, said in the run record and the report.
        reference: the published file(s) this protocol reproduces (repository@commit path).
        notes: how foilkit departs from the reference, or why no reference exists (in the
            protocol's own ``mode``).
        mode_notes: the notes of a run in another mode (``--mode``), by mode: what foilkit
            does there against the reference (:meth:`notes_for`).
    """

    sampling: str = "uniform"
    num_frames: int | None = 8
    stride: int | None = None
    target_fps: float | None = None
    max_frames: int | None = None
    normalized_fps: float | None = None
    mode: str | None = None
    pooling: str | None = None
    reduction: str | None = None
    itm_output: str | None = None
    first_token: str | None = None
    max_text_tokens: int | None = None
    preprocess: str | None = None
    score_scale: str | None = None
    prompt: str | None = None
    window: str | None = None
    dtype: str | None = None
    parser: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    num_samples: int | None = None
    max_new_tokens: int | None = None
    reference: str = ""
    notes: str = ""
    mode_notes: Mapping[str, str] = field(default_factory=dict, hash=False)

    def settings(self) -> dict[str, Any]:
        """The protocol's settings (``SETTINGS``) that are set."""
        return {name: getattr(self, name) for name in SETTINGS if getattr(self, name) is not None}

    def notes_for(self, mode: str | None) -> str:
        """The notes true of a run in ``mode``: the protocol's own mode's (``notes``), another
        mode's (``mode_notes``), or, for a mode that has none, ``notes`` said to be of the
        protocol's mode, so that no run is described by a mode it did not run."""
        if self.mode is None or mode is None or mode == self.mode:
            return self.notes
        if mode in self.mode_notes:
            return self.mode_notes[mode]
        return (
            f"{self.notes} (these notes describe the protocol's --mode {self.mode}; this run "
            f"scored with --mode {mode})"
        )


BLIP_REPO = "salesforce/BLIP"
LMMS_EVAL_REPO = "EvolvingLMMs-Lab/lmms-eval"

#: One protocol across benchmarks, per family (``None``: the adapter's own defaults).
UNIFORM: dict[str, Protocol] = {
    "dual-encoder": Protocol(pooling="mean", notes="foilkit's cross-benchmark protocol"),
    "xclip": Protocol(notes="foilkit's cross-benchmark protocol"),
    "blip-itm": Protocol(pooling="frame-mean", notes="foilkit's cross-benchmark protocol"),
    "video-llm": Protocol(notes="foilkit's cross-benchmark protocol"),
    "text-lm": Protocol(reduction="mean", notes="foilkit's cross-benchmark protocol"),
    # native video encoders see the whole clip at their own frame count, whatever the benchmark
    "videoprism": Protocol(
        sampling="segment-start",
        num_frames=None,
        notes="foilkit's cross-benchmark protocol; the model's own frame count",
    ),
    "pe-video": Protocol(
        num_frames=None, notes="foilkit's cross-benchmark protocol; the model's own frame count"
    ),
}
UNIFORM_DEFAULT = Protocol(notes="foilkit's cross-benchmark protocol")


def unpublished(benchmark: str, family: str, why: str = "") -> Protocol:
    """A family the benchmark's paper published no scoring code for: the uniform protocol, said
    so."""
    base = UNIFORM.get(family, UNIFORM_DEFAULT)
    note = (
        f"{benchmark} published no scoring code for {family} models; the uniform protocol's values"
    )
    return replace(base, reference="", notes=note + (f" ({why})" if why else ""))


# Native video-text encoders: no benchmark published code for them, so each benchmark scores
# them as the models' own preprocessing does, the frame count read from the model's config
# (``num_frames=None``: the adapter's ``native_settings``) and the model's own video embedding.
TRANSFORMERS_PIN = "huggingface/transformers@v5.23.0"
VIDEOPRISM_REPO = "google-deepmind/videoprism@9762d46"
NATIVE_VIDEO_ENCODERS = {
    "videoprism": Protocol(
        sampling="segment-start",
        num_frames=None,
        reference=f"{VIDEOPRISM_REPO} videoprism/colabs/videoprism_video_text_demo.ipynb "
        "(read_and_preprocess_video: frames np.linspace(0, T, N, endpoint=False), 288x288, "
        "pixels in [0, 1]; cosine of the video and text embeddings), and "
        f"{TRANSFORMERS_PIN} models/videoprism (VideoPrismProcessor: texts padded to 64 tokens)",
        notes="{benchmark} published no scoring code for VideoPrism; the model's own "
        "preprocessing, N = vision_config.num_frames (16), over the view's window instead of "
        "the whole file; a window shorter than N frames has its frames repeated over the N "
        "slots (floor(k*T/N)), as the reference's linspace does",
    ),
    "pe-video": Protocol(
        sampling="uniform",
        num_frames=None,
        reference=f"{TRANSFORMERS_PIN} models/pe_video (PeVideoVideoProcessor.sample_frames: "
        "linspace over the clip with both ends; PeVideoModel.forward's embeddings)",
        notes="{benchmark} published no scoring code for PE-Video; the model's own "
        "preprocessing, N = the video processor's num_frames (16 for pe-av-*-16-frame), the dot "
        "product behind its logit (logit_scale * dot + logit_bias: the same order)",
    ),
}


def native_video_encoders(benchmark: str) -> dict[str, Protocol]:
    """The native video-text encoders' protocols (:data:`NATIVE_VIDEO_ENCODERS`) for a benchmark
    that scores them by the models' own preprocessing, the notes naming ``benchmark``."""
    return {
        family: replace(protocol, notes=protocol.notes.format(benchmark=benchmark))
        for family, protocol in NATIVE_VIDEO_ENCODERS.items()
    }


#: The families every benchmark declares a paper protocol for (:func:`paper_protocols`).
PAPER_FAMILIES = ("dual-encoder", "xclip", "blip-itm", "video-llm", "text-lm")


def paper_protocols(
    benchmark: str,
    published: Mapping[str, Protocol | str] | None = None,
    *,
    others: str = "",
    native: bool = False,
) -> dict[str, Protocol]:
    """A benchmark's paper protocols, model family -> :class:`Protocol`: what its published
    scoring code does, with the file each reproduces (``published``, in its order; a string in
    place of a protocol says why the paper published nothing for that family), then every other
    family of :data:`PAPER_FAMILIES`, which scores with the uniform protocol's values, said so
    (:func:`unpublished`, ``others`` saying why), then, where ``native``, the native video
    encoders (:func:`native_video_encoders`)."""
    table = {
        family: unpublished(benchmark, family, protocol) if isinstance(protocol, str) else protocol
        for family, protocol in (published or {}).items()
    }
    for family in PAPER_FAMILIES:
        table.setdefault(family, unpublished(benchmark, family, others))
    return {**table, **(native_video_encoders(benchmark) if native else {})}
