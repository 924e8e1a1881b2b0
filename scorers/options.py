"""The options of a scoring run, declared once as typed parts (:data:`PARTS`): what
``foilkit.score``, ``foilkit.evaluate(score_options=...)``, the flags of ``foilkit score`` and
``foilkit evaluate`` (generated from the fields' metadata: :func:`foilkit.cli.options.
add_score_options`), a ``--config-file`` (one section per part) and a run folder's
``config.yaml`` hold; and the server and judge settings derived from them.

:class:`ScoreOptions` is the parts together, flat: ``ScoreOptions(num_frames=8, mode="choice")``
and ``options.num_frames``, as the engine reads them; :meth:`ScoreOptions.sections` and
:meth:`ScoreOptions.from_sections` are its nested form, one mapping per part.

Names: ``*Options`` is what a user gives a command (flags, config file, or a section of them);
what one component runs with, derived from them, is ``*Settings`` (:func:`judge_settings`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from foilkit.scorers.once import once
from foilkit.scorers.parsers import parser_names
from foilkit.scorers.placement import DEVICE_MAPS, check_placement
from foilkit.scorers.prompts import choice_prompt_names
from foilkit.scorers.protocols import PROTOCOLS, SETTINGS, ResolvedProtocol, resolve_protocol
from foilkit.scorers.retry import check_key_variable, check_price, reply_bytes
from foilkit.scorers.serving import SERVING_BACKENDS

#: The largest frame decoded unscaled, in pixels: 3840 x 2160 (the decoder's own default,
#: :data:`foilkit.scorers.video.MAX_DECODE_PIXELS`, which imports torch: the flags do not).
MAX_DECODE_PIXELS = 3840 * 2160


def option(
    default: Any,
    help: str | None,
    *,
    check: str | None = None,
    choices: Iterable[str] | Callable[[], Iterable[str]] | None = None,
    metavar: str | None = None,
    aliases: tuple[str, ...] = (),
    names: Callable[[], Iterable[str]] | None = None,
    flag: str | None = None,
) -> Any:
    """A field of a part with what its flag needs: ``help`` (``None``: the flag is declared by
    the command, or shared with other commands, in :mod:`foilkit.cli.options`), ``check`` (the
    name of the argparse type that validates its text: ``positive_int``, ``price``, ...),
    ``choices`` (or what reads them when the parser is made: a registry's names), ``metavar``,
    older flag names (``aliases``), ``names`` (what ``{names}`` in the help lists, read when
    the help is shown: a registry's names) and ``flag`` (its flag, when not
    :func:`flag_of`'s)."""
    metadata = {
        "help": help,
        "check": check,
        "choices": choices if choices is None or callable(choices) else tuple(choices),
        "metavar": metavar,
        "aliases": aliases,
        "names": names,
        "flag": flag,
    }
    return field(default=default, metadata=metadata)


def flag_of(name: str, default: Any = None) -> str:
    """The flag of option ``name``: ``--num-frames``; a switch on by default is turned off
    (``--no-sampler-params``)."""
    dashed = name.replace("_", "-")
    return f"--no-{dashed}" if default is True else f"--{dashed}"


def option_flag(option: Field[Any]) -> str:
    """The flag of a field of :class:`ScoreOptions` (``--no-cache`` for ``use_cache``)."""
    return option.metadata["flag"] or flag_of(option.name, option.default)


@dataclass
class ProtocolOptions:
    """What the scores reproduce; every model or frame flag below that is given overrides one
    of the protocol's settings and is recorded as an override."""

    SECTION: ClassVar[str] = "protocol"
    protocol: str | None = option(
        None,
        "paper: the benchmark's own published scoring code per model family; uniform: one "
        "protocol across benchmarks (default: paper when --benchmark is known, else uniform)",
        choices=PROTOCOLS,
    )
    benchmark: str | None = option(None, None)  # its choices are the builders' registry


@dataclass
class ScorerOptions:
    """How the model scores (each given overrides the protocol's)."""

    SECTION: ClassVar[str] = "scorer"
    adapter: str | None = option(None, "adapter name (default: chosen from the model's config)")
    mode: str | None = option(
        None,
        "scoring mode of video LLMs: likelihood, choice (option-letter probabilities), entail "
        "(P(yes) to a caption question) or generate (answers read by --parser)",
    )
    pooling: str | None = option(
        None,
        "dual encoders: mean, mean-of-similarities or softmax-mean; BLIP: frame-mean or "
        "joined-frames",
    )
    reduction: str | None = option(
        None,
        "video LLMs (likelihood): mean or sum of token log-probabilities; text LMs: mean or "
        "a benchmark's own perplexity (its paper protocol's)",
    )
    prompt: str | None = option(
        None,
        "video LLMs (choice): the question asked: {names} (default: the protocol's)",
        names=choice_prompt_names,
    )
    itm_output: str | None = option(
        None, "BLIP: the ITM head's probability (softmax) or raw match logit"
    )
    first_token: str | None = option(
        None, "BLIP: cls (HF's first text token) or enc (BLIP's [ENC] for ITM)"
    )
    max_text_tokens: int | None = option(
        None, "truncate texts to this many tokens", check="positive_int"
    )
    preprocess: str | None = option(
        None,
        "dual encoders: default (the checkpoint's image processor) or pil (its PIL backend: "
        "a reference's PIL bicubic resize); video LLMs: default (the checkpoint's processor) or "
        "reference (Qwen2/2.5/3-VL frames sized by qwen-vl-utils' rules)",
    )
    score_scale: str | None = option(
        None,
        "dual encoders, X-CLIP: cosine, or logit (logit_scale x cosine, as CLIP4Clip and X-CLIP "
        "report)",
    )


@dataclass
class GenerateOptions:
    """How a video LLM answers in --mode generate and how its answers are read (each
    overrides the protocol's value)."""

    SECTION: ClassVar[str] = "generate"
    parser: str | None = option(
        None,
        "generate mode: the answer parser reproducing a benchmark's official extraction: "
        "{names} (a parser whose answers only a judge reads needs --judge-model) (default: the "
        "protocol's)",
        names=parser_names,
    )
    temperature: float | None = option(
        None,
        "generate mode: sampling temperature, 0 for greedy (default: the protocol's, else 0)",
    )
    top_p: float | None = option(None, "generate mode: nucleus sampling's top-p")
    num_samples: int | None = option(
        None,
        "generate mode: answers sampled per question; accuracy is reported per sample, with its "
        "mean and spread (needs --temperature above 0)",
        check="positive_int",
    )
    max_new_tokens: int | None = option(
        None,
        "generate mode: the longest answer, in tokens (default: the protocol's, else 32)",
        check="positive_int",
    )


@dataclass
class LoadingOptions:
    """The model loaded in this process."""

    SECTION: ClassVar[str] = "loading"
    revision: str | None = option(None, "model revision (branch, tag or commit)")
    trust_remote_code: bool = option(False, "allow the model's own code to run")
    dtype: str = option(
        "auto",
        "auto (the protocol's: paper runs float16 where the reference did; else bf16/fp16 on "
        "GPU, fp32 on CPU), float32, bfloat16, float16 (default: %(default)s)",
    )
    device: str | None = option(None, "default: the process's accelerator, else CPU")
    device_map: str | None = option(
        None,
        "spread the model over GPUs, then CPU memory, then --offload-folder (accelerate's "
        "big-model inference); instead of --device",
        choices=DEVICE_MAPS,
    )
    max_memory: str | dict[Any, Any] | None = option(
        None,
        "memory each device may hold of the model, e.g. 0=70GiB,1=70GiB,cpu=200GiB (GPU indices "
        "as CUDA_VISIBLE_DEVICES numbers them; each replica takes the sizes of its GPUs and cpu; "
        "default: 90%% of free memory, a node's CPU memory shared by its replicas)",
        metavar="DEVICE=SIZE,...",
    )
    offload_folder: str | None = option(
        None, "folder for the layers beyond --max-memory (one per process)"
    )
    gpus_per_replica: int | None = option(
        None,
        "with accelerate launch --num_processes R: each process is one replica of the model on "
        "that many GPUs, process i of a node taking GPUs i*N .. i*N+N-1 (default: the node's "
        "GPUs shared evenly)",
        check="positive_int",
    )


@dataclass
class BackendOptions:
    """Where the model runs.

    The served model's settings are :class:`foilkit.scorers.openai_client.ServerBackend`'s fields of
    the same names (:func:`server_backend`)."""

    SECTION: ClassVar[str] = "backend"
    backend: str = option(
        "local",
        "where the model runs, a registered backend: {names} (local: loaded in this process; "
        "openai: a server speaking the OpenAI chat-completions API, --model being the served "
        "model's name) (default: %(default)s)",
        choices=SERVING_BACKENDS.names,
        names=SERVING_BACKENDS.names,
    )
    base_url: str | None = option(
        None,
        "--backend openai: the server's endpoint, e.g. http://host:8000/v1 (default: OpenAI's)",
    )
    api_key_env: str = option(
        "OPENAI_API_KEY",
        "--backend openai: the NAME of the environment variable holding the API key (the key "
        "itself is never written anywhere; unset, a local server gets EMPTY) "
        "(default: %(default)s)",
        metavar="VAR",
    )
    frames_as: str = option(
        "images",
        "--backend openai: each frame as an image part, or all as one vLLM video_url part (JPEG "
        "frames) (default: %(default)s)",
        choices=("images", "video"),
    )
    image_format: str = option(
        "png",
        "--backend openai: how frames are encoded (default: %(default)s, lossless)",
        choices=("png", "jpeg"),
    )
    frame_times: str | None = option(
        None,
        "--backend openai: how each frame's time is sent: metadata (with --frames-as video: "
        "vLLM's media_io_kwargs and mm_processor_kwargs fps), text (a '<t seconds>' part before "
        "each image, as lmms-eval's Qwen3-VL API messages), none (default: metadata for video, "
        "none for images)",
        choices=("metadata", "text", "none"),
    )
    sampler_params: bool = option(
        True,
        "--backend openai: do not send top_k=-1 and repetition_penalty=1 (which vLLM and SGLang "
        "read, so a checkpoint's generation_config.json applies no other sampler): for a hosted "
        "API that rejects unknown parameters (default: they are sent)",
    )
    max_concurrency: int = option(
        8,
        "--backend openai: requests in flight at once (default: %(default)s)",
        check="positive_int",
    )
    max_retries: int = option(
        5,
        "--backend openai: retries of a request on 429/5xx/timeouts/malformed replies, with "
        "exponential backoff (default: %(default)s)",
        check="non_negative_int",
    )
    request_timeout: float = option(
        600.0,
        "--backend openai and the judge: the most seconds one request may take in all, from "
        "sending it to its reply's last byte, however slowly the reply trickles; past it, it is "
        "retried as a timeout (--max-retries); recorded in run.json (default: %(default)s)",
        check="positive_finite",
        metavar="SECONDS",
    )
    max_reply_mb: float = option(
        16.0,
        "--backend openai and the judge: the largest reply read, in MB (2**20 bytes); a larger "
        "one is not read further and its rows fail (cause 'reply too large') "
        "(default: %(default)s)",
        check="positive_finite",
        metavar="MB",
    )
    price_per_1k_prompt_tokens: float | None = option(
        None,
        "--backend openai: price of 1000 prompt tokens, for the cost in run.json",
        check="price",
    )
    price_per_1k_completion_tokens: float | None = option(
        None,
        "--backend openai: price of 1000 completion tokens, for the cost in run.json",
        check="price",
    )


@dataclass
class JudgeOptions:
    """Generate mode's LLM judge (off by default).

    Its fields are :class:`foilkit.scorers.judge.JudgeSettings`' with ``judge_`` before them
    (:func:`judge_settings`)."""

    SECTION: ClassVar[str] = "judge"
    judge_model: str | None = option(
        None,
        "generate mode: turn on the official LLM judge, served as NAME (the papers used "
        "gpt-3.5-turbo-1106 or gpt-4o-mini: foilkit benchmarks lists each); it reads what the "
        "official protocol gives it: answers the rules miss, free captions (default: "
        "off, no judge: such answers count as unparseable)",
        metavar="NAME",
    )
    judge_base_url: str | None = option(
        None,
        "--judge-model: the judge's OpenAI-compatible endpoint, e.g. http://host:8000/v1 "
        "(default: OpenAI's)",
        metavar="URL",
    )
    judge_api_key_env: str = option(
        "OPENAI_API_KEY",
        "--judge-model: the NAME of the environment variable holding the judge's API key (never "
        "written anywhere; unset, a local server gets EMPTY) (default: %(default)s)",
        metavar="VAR",
    )
    judge_price_per_1k_prompt_tokens: float | None = option(
        None,
        "--judge-model: price of 1000 of the judge's prompt tokens, for its cost in run.json",
        check="price",
    )
    judge_price_per_1k_completion_tokens: float | None = option(
        None,
        "--judge-model: price of 1000 of the judge's completion tokens, for its cost in run.json",
        check="price",
    )


@dataclass
class FrameOptions:
    """Which frames of each view the model sees, and how they are decoded."""

    SECTION: ClassVar[str] = "frames"
    num_frames: int | None = option(
        None,
        "frames per view (default: the protocol's)",
        check="positive_int",
        aliases=("--frames",),
    )
    sampling: str | None = option(
        None,
        "frame sampling policy (default: the protocol's): uniform, segment-middle, "
        "segment-start, segment-step, consecutive, random-consecutive, fps, int-fps or "
        "qwen-vl-utils",
    )
    window: str | None = option(
        None,
        "how a window in seconds becomes frames: half-open ([start, end)) or read-video "
        "(torchvision read_video's: end frame included)",
    )
    stride: int | None = option(None, "frame step of 'consecutive' sampling", check="positive_int")
    target_fps: float | None = option(
        None, "rate of 'fps' / 'int-fps' / 'qwen-vl-utils' sampling", check="positive_number"
    )
    max_frames: int | None = option(
        None,
        "cap of 'fps' / 'int-fps' / 'qwen-vl-utils' sampling: longer views are thinned to it "
        "(without it, 'fps' and 'int-fps' fail a view of more than 768 frames)",
        check="positive_int",
    )
    normalized_fps: float | None = option(
        None,
        "frame rate 'random-consecutive' reads the video at (default: the protocol's)",
        check="positive_number",
    )
    decoder: str = option(
        "torchcodec",
        "torchcodec (FFmpeg on the CPU), torchcodec-cuda (NVDEC on the GPU: frames stay there; "
        "on a machine without CUDA the run decodes with torchcodec and records why) or pyav "
        "(default: %(default)s)",
    )
    max_decode_pixels: int = option(
        MAX_DECODE_PIXELS,
        "frames of more pixels are scaled down (aspect kept) while decoding, so that no file's "
        "declared size can exhaust memory: a number or WIDTHxHEIGHT (default: 3840x2160, "
        "%(default)s); torchcodec-cuda cannot scale and fails the rows of such a file",
        check="pixel_count",
        metavar="PIXELS",
    )
    control: str | None = option(
        None,
        "temporal control: break the frames' order on purpose",
        choices=("reversed", "shuffled", "single"),
    )
    seed: int = option(
        0,
        "seed of the 'shuffled' control, seeded frame sampling and generate mode's sampled "
        "answers (default: %(default)s)",
    )
    video_root: str | list[str] | None = option(None, None)  # --video-root: shared


@dataclass
class WorkOptions:
    """How the work is done and where it is written (none of it changes a score)."""

    SECTION: ClassVar[str] = "work"
    batch_size: int = option(
        8,
        "views (videos) per model call in each process (default: %(default)s)",
        check="positive_int",
    )
    num_workers: int = option(2, None)  # --num-workers: shared with finetune
    cache_dir: str | None = option(
        None, "embedding cache folder (default: $HF_HOME/foilkit/embeddings)"
    )
    use_cache: bool = option(True, "do not read or write the embedding cache", flag="--no-cache")
    progress: bool = option(True, "no progress bars or summary")
    log_interval: float | None = option(None, None)  # --log-interval: shared (add_logging)
    split: str | None = option(None, None)  # --split, --out, --resume: the command's own
    out_dir: str | None = option(None, None, flag="--out")
    resume: bool = option(False, None)


#: The parts of :class:`ScoreOptions`, in the order of their flags' groups in ``--help``.
PARTS: tuple[type, ...] = (
    ProtocolOptions,
    ScorerOptions,
    GenerateOptions,
    LoadingOptions,
    BackendOptions,
    JudgeOptions,
    FrameOptions,
    WorkOptions,
)


@dataclass
class ScoreOptions(
    WorkOptions,
    FrameOptions,
    JudgeOptions,
    BackendOptions,
    LoadingOptions,
    GenerateOptions,
    ScorerOptions,
    ProtocolOptions,
):
    """Options of a scoring run: the ``**options`` of ``score``, the ``options`` of ``score_rows``
    and ``score_pool``, ``foilkit.evaluate(score_options=...)`` and the flags of ``foilkit score``.

    Every field belongs to one part (:data:`PARTS`), where its help says what it does. The
    protocol (``paper``: the benchmark's own published code per model family; ``uniform``: one
    protocol across benchmarks; default ``paper`` when ``benchmark`` is named) fixes the frame and
    model settings left ``None``; each one given overrides it and is recorded as an override.
    ``backend="openai"`` serves a video LLM behind an OpenAI-compatible server
    (:mod:`foilkit.scorers.served`; ``model`` is then the served model's name); ``judge_model``
    turns on generate mode's LLM judge where the benchmark's official protocol has one
    (:mod:`foilkit.scorers.judge`). ``video_root``: one folder or several, which every video path
    must lie inside (:func:`foilkit.video_paths.video_roots_for`).
    """

    def __post_init__(self) -> None:
        from foilkit.scorers.controls import check_control  # the video layer: torch
        from foilkit.scorers.video import DECODERS, WINDOW_RULES

        check_control(self.control)
        check_backend(self)
        check_judge(self)
        if self.decoder not in DECODERS:
            raise ValueError(f"unknown decoder {self.decoder!r}; choose from {sorted(DECODERS)}")
        if (
            isinstance(self.max_decode_pixels, bool)
            or not isinstance(self.max_decode_pixels, int)
            or self.max_decode_pixels < 1
        ):
            raise ValueError(
                "max_decode_pixels must be a whole number of pixels >= 1 (--max-decode-pixels "
                f"33177600 or 7680x4320), got {self.max_decode_pixels!r}"
            )
        if self.num_workers < 0:
            raise ValueError(f"num_workers must be >= 0, got {self.num_workers}")
        # before any work: found later, a bad value would cost a dataset build and a model load
        for name in ("batch_size", "num_frames"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1 ({flag_of(name)} N), got {value}")
        if self.protocol is not None and self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}; choose from {list(PROTOCOLS)}")
        check_placement(
            self.device_map,
            self.max_memory,
            self.offload_folder,
            self.gpus_per_replica,
            self.device,
        )
        if self.window is not None and self.window not in WINDOW_RULES:
            raise ValueError(
                f"unknown window rule {self.window!r} (--window); choose from {list(WINDOW_RULES)}"
            )

    def resolve(
        self,
        family: str,
        accepted: tuple[str, ...],
        native: dict[str, Any] | None = None,
        config: str | None = None,
    ) -> ResolvedProtocol:
        """The protocol's settings for ``family``, with the options given here over them
        (``native``: what the model itself fixes, for what the protocol leaves to it;
        ``config``: the benchmark config scored, whose answer parser generate mode uses)."""
        name = self.protocol or ("paper" if self.benchmark is not None else "uniform")
        given = {key: getattr(self, key) for key in SETTINGS}
        given["dtype"] = None if self.dtype == "auto" else self.dtype  # auto: not given
        return resolve_protocol(
            name, self.benchmark, family, given, accepted=accepted, native=native, config=config
        )

    def sections(self, leave: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
        """The options nested, one mapping per part (``{"frames": {"num_frames": 8, ...}}``),
        but the fields in ``leave``: a ``config.yaml``'s sections."""
        return {
            part.SECTION: {
                f.name: _plain(getattr(self, f.name)) for f in fields(part) if f.name not in leave
            }
            for part in PARTS
        }

    @classmethod
    def from_sections(cls, sections: Mapping[str, Mapping[str, Any]]) -> ScoreOptions:
        """The options of nested ``sections`` (:meth:`sections`'s form); a section or key that
        is no part's or field's is a ``ValueError`` naming it and where it belongs."""
        flat: dict[str, Any] = {}
        for section, values in sections.items():
            part = PART_OF.get(section)
            if part is None:
                raise ValueError(f"unknown section {section!r}; the parts are {list(PART_OF)}")
            own = {f.name for f in fields(part)}
            for key, value in values.items():
                if key not in own:
                    raise ValueError(f"unknown key {section}.{key}{_belongs(key)}")
                flat[key] = value
        return cls(**flat)


#: Each part by its section name.
PART_OF: dict[str, type] = {part.SECTION: part for part in PARTS}
#: Each field's section: ``SECTION_OF["num_frames"] == "frames"``.
SECTION_OF: dict[str, str] = {f.name: part.SECTION for part in PARTS for f in fields(part)}
SCORE_OPTION_NAMES = tuple(SECTION_OF)


def _belongs(key: str) -> str:
    """Where option ``key`` belongs, for an error: ``; num_frames belongs in frames``."""
    return f"; {key} belongs in {SECTION_OF[key]}" if key in SECTION_OF else ""


def _plain(value: Any) -> Any:
    """A field's value as YAML and JSON write it (a tuple of roots as a list, a path as text)."""
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def check_backend(options: ScoreOptions) -> None:
    """Refuse server settings without ``backend="openai"`` (``--backend openai``), and a served
    model with what only an in-process one takes."""
    if options.backend not in SERVING_BACKENDS:
        names = ", ".join(SERVING_BACKENDS.names())
        raise ValueError(f"unknown backend {options.backend!r} (--backend); choose from: {names}")
    check_key_variable(options.api_key_env, "--api-key-env")
    for kind in ("prompt", "completion"):
        price = f"price_per_1k_{kind}_tokens"
        check_price(getattr(options, price), flag_of(price))
    if not (math.isfinite(options.request_timeout) and options.request_timeout > 0):
        raise ValueError(
            f"--request-timeout must be a number of seconds > 0, got {options.request_timeout}"
        )
    if not (math.isfinite(options.max_reply_mb) and options.max_reply_mb > 0):
        raise ValueError(f"--max-reply-mb must be a number > 0, got {options.max_reply_mb}")
    if options.backend == "local":
        served = {"base_url": options.base_url, "frame_times": options.frame_times}
        given = [flag_of(k) for k, v in served.items() if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} applies to a served model: add --backend openai")
        return
    if options.adapter not in (None, "video-llm"):
        raise ValueError(
            f"--backend openai serves a video LLM (adapter video-llm), not {options.adapter!r}"
        )
    in_process = {"device_map": options.device_map, "revision": options.revision}
    given = [flag_of(k) for k, v in in_process.items() if v is not None]
    if given:
        raise ValueError(
            f"{', '.join(given)} applies to a model loaded here; a served model is the server's "
            "business: leave it out with --backend openai"
        )


def check_judge(options: ScoreOptions) -> None:
    """Refuse judge settings without a judge model (``--judge-model`` turns the judge on)."""
    if options.judge_model is not None:
        judge_settings(options)  # its own checks (the key's variable name, not the key)
        return
    named = [
        flag_of(f.name)
        for f in fields(JudgeOptions)
        if f.name != "judge_model" and getattr(options, f.name) != f.default
    ]
    if named:
        raise ValueError(
            f"{', '.join(named)} configures an LLM judge, which is off: name its model with "
            "--judge-model NAME (e.g. gpt-3.5-turbo-1106)"
        )


def _transport(options: ScoreOptions) -> dict[str, Any]:
    """What the served model and the judge share: the client's concurrency, retries, deadline
    and reply bound, under :class:`foilkit.scorers.openai_client.ServerBackend`'s names."""
    return {
        "max_concurrency": options.max_concurrency,
        "max_retries": options.max_retries,
        "timeout_s": options.request_timeout,
        "max_reply_bytes": reply_bytes(options.max_reply_mb),
    }


def judge_settings(options: ScoreOptions) -> Any:
    """The :class:`foilkit.scorers.judge.JudgeSettings` of ``options`` (``None``: no judge):
    the judge part's fields without their ``judge_`` prefix, and the transport's."""
    if options.judge_model is None:
        return None
    from foilkit.scorers.judge import JudgeSettings

    own = {f.name.removeprefix("judge_"): getattr(options, f.name) for f in fields(JudgeOptions)}
    return JudgeSettings(**own, **_transport(options))


def server_backend(options: ScoreOptions) -> Any:
    """The :class:`foilkit.scorers.openai_client.ServerBackend` of ``options``: the backend part's
    fields of the same names, the transport's, and its reply cache beside the embedding cache
    (none with ``use_cache=False``); made once per run (:func:`foilkit.scorers.once.once`)."""
    from foilkit.scorers.cache import default_cache_dir
    from foilkit.scorers.openai_client import ServerBackend

    cache = None
    if options.use_cache:
        cache = str(Path(options.cache_dir or default_cache_dir()) / "served")
    served = {f.name for f in fields(ServerBackend)}
    settings = {
        **{f.name: getattr(options, f.name) for f in fields(BackendOptions) if f.name in served},
        **_transport(options),
        "cache_dir": cache,
    }
    return once(("server", *sorted(settings.items())), lambda: ServerBackend(**settings))
