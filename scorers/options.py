"""The options of a scoring run (:class:`ScoreOptions`): what ``foilkit.score``, ``foilkit
evaluate(score_options=...)`` and the flags of ``foilkit score``/``foilkit evaluate`` set, and the
server and judge settings derived from them."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from foilkit.scorers.cache import default_cache_dir
from foilkit.scorers.controls import check_control
from foilkit.scorers.once import once
from foilkit.scorers.placement import check_placement
from foilkit.scorers.protocols import PROTOCOLS, SETTINGS, ResolvedProtocol, resolve_protocol
from foilkit.scorers.retry import check_key_variable, check_price, reply_bytes
from foilkit.scorers.video import BACKENDS, MAX_DECODE_PIXELS, WINDOW_RULES


@dataclass
class ScoreOptions:
    """Options of a scoring run: the ``**options`` of ``score``, the ``options`` of ``score_rows``
    and ``score_pool``, ``foilkit.evaluate(score_options=...)`` and the flags of ``foilkit score``.

    Protocol: ``protocol`` (``paper``: the benchmark's own published code per model family;
    ``uniform``: one protocol across benchmarks; default ``paper`` when ``benchmark`` is named,
    else ``uniform``), ``benchmark`` (the registered benchmark the dataset is; see
    :mod:`foilkit.scorers.protocols`). The protocol fixes the frame and model settings below
    that are left ``None``; each one given overrides it and is recorded as an override.

    Model: ``adapter`` (registered name; default: chosen from the model's config), ``mode``
    (video LLMs: ``likelihood``, ``choice``, ``entail`` or ``generate``), ``prompt`` (video
    LLMs' choice question), ``pooling`` (dual encoders, BLIP), ``reduction`` (text and video
    LLMs: how token log-probabilities become a score), ``itm_output`` and ``first_token``
    (BLIP: ``probability``/``logit``, ``cls``/``enc``),
    ``max_text_tokens`` (text truncation), ``preprocess`` (dual encoders: ``default`` or
    ``pil``), ``score_scale`` (dual encoders, X-CLIP: ``cosine`` or ``logit``); generate mode
    (video LLMs): ``parser`` (the answer parser, :mod:`foilkit.scorers.parsers`),
    ``temperature`` (0: greedy), ``top_p``, ``num_samples`` (answers per question),
    ``max_new_tokens``, drawn from ``seed``. Where the model runs (``backend``): ``local`` (in
    this process) or ``openai`` (a video LLM behind an OpenAI-compatible server,
    :mod:`foilkit.scorers.served`; ``model`` is then the served model's name), with
    ``base_url``, ``api_key_env`` (the NAME of the variable holding the key), ``frames_as``
    (``images`` or vLLM's ``video``), ``image_format``, ``frame_times`` (how the frames' times
    are sent: ``metadata``, vLLM's, for ``video``; ``text``; ``none``), ``sampler_params``
    (send vLLM's ``top_k``/``repetition_penalty``), ``max_concurrency``, ``max_retries``,
    ``request_timeout`` (seconds one request may take in all, the judge's too),
    ``max_reply_mb`` (the largest reply read; past it the request's rows fail) and the prices
    per 1000 tokens; generate mode's LLM judge, off by default and only where the
    benchmark's official protocol has one (:mod:`foilkit.scorers.judge`): ``judge_model``
    (turns it on), ``judge_base_url``, ``judge_api_key_env``, ``judge_price_per_1k_prompt_tokens``
    and ``judge_price_per_1k_completion_tokens`` (its cost); ``revision``, ``trust_remote_code``,
    ``dtype`` (``auto``: the protocol's, e.g. ``paper``'s float16 where the reference ran in
    it, else bf16/fp16 on GPU, fp32 on CPU), ``device``. Models larger than one device (see
    :mod:`foilkit.scorers.placement`): ``device_map`` (``auto``, ``balanced``,
    ``balanced_low_0``, ``sequential``), ``max_memory`` (``"0=70GiB,1=70GiB,cpu=200GiB"`` or a
    dict), ``offload_folder`` (where layers beyond ``max_memory`` go), ``gpus_per_replica`` (each
    process of ``accelerate launch`` a replica on that many GPUs of its node). Frames:
    ``num_frames``, ``sampling``, ``stride``, ``target_fps``, ``max_frames``,
    ``normalized_fps``, ``window`` (``half-open`` or ``read-video``), ``decoder``,
    ``max_decode_pixels`` (frames of more pixels are scaled down while decoding, aspect kept;
    default 3840 x 2160), ``control`` (``reversed``, ``shuffled``, ``single``), ``seed``
    (shuffled control, seeded sampling, generate mode's sampled answers).
    Work: ``batch_size``, ``num_workers`` (decoding threads), ``out_dir`` (stream results and
    ``run.json`` there), ``resume``, ``cache_dir``, ``use_cache``, ``video_root`` (one folder or
    several: relative video paths resolve against them, and every video path, absolute ones
    too, must lie inside one, else its row is an error; without it, a dataset given as a local
    folder is its own root, a Hub id has none, and only a dataset object's paths are used
    unconfined: :func:`foilkit.video_paths.video_roots_for`), ``split``, ``progress``,
    ``log_interval`` (seconds between progress lines when stderr is no terminal; default 30).
    """

    protocol: str | None = None
    benchmark: str | None = None
    adapter: str | None = None
    mode: str | None = None
    pooling: str | None = None
    reduction: str | None = None
    itm_output: str | None = None
    first_token: str | None = None
    max_text_tokens: int | None = None
    preprocess: str | None = None
    score_scale: str | None = None
    parser: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    num_samples: int | None = None
    max_new_tokens: int | None = None
    prompt: str | None = None
    backend: str = "local"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    frames_as: str = "images"
    image_format: str = "png"
    frame_times: str | None = None
    sampler_params: bool = True
    max_concurrency: int = 8
    max_retries: int = 5
    request_timeout: float = 600.0
    max_reply_mb: float = 16.0
    price_per_1k_prompt_tokens: float | None = None
    price_per_1k_completion_tokens: float | None = None
    judge_model: str | None = None
    judge_base_url: str | None = None
    judge_api_key_env: str = "OPENAI_API_KEY"
    judge_price_per_1k_prompt_tokens: float | None = None
    judge_price_per_1k_completion_tokens: float | None = None
    revision: str | None = None
    trust_remote_code: bool = False
    dtype: str = "auto"
    device: str | None = None
    device_map: str | None = None
    max_memory: str | dict[Any, Any] | None = None
    offload_folder: str | None = None
    gpus_per_replica: int | None = None
    num_frames: int | None = None
    sampling: str | None = None
    stride: int | None = None
    target_fps: float | None = None
    max_frames: int | None = None
    normalized_fps: float | None = None
    window: str | None = None
    decoder: str = "torchcodec"
    max_decode_pixels: int = MAX_DECODE_PIXELS
    control: str | None = None
    seed: int = 0
    batch_size: int = 8
    num_workers: int = 2
    out_dir: str | None = None
    resume: bool = False
    cache_dir: str | None = None
    use_cache: bool = True
    video_root: str | list[str] | None = None
    split: str | None = None
    progress: bool = True
    log_interval: float | None = None

    def __post_init__(self) -> None:
        check_control(self.control)
        check_backend(self)
        check_judge(self)
        if self.decoder not in BACKENDS:
            raise ValueError(f"unknown decoder {self.decoder!r}; choose from {sorted(BACKENDS)}")
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
                flag = "--" + name.replace("_", "-")
                raise ValueError(f"{name} must be >= 1 ({flag} N), got {value}")
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


def check_backend(options: ScoreOptions) -> None:
    """Refuse server settings without ``backend="openai"`` (``--backend openai``), and a served
    model with what only an in-process one takes."""
    if options.backend not in ("local", "openai"):
        raise ValueError(
            f"unknown backend {options.backend!r} (--backend); choose from ['local', 'openai']"
        )
    check_key_variable(options.api_key_env, "--api-key-env")
    for kind in ("prompt", "completion"):
        price = f"price_per_1k_{kind}_tokens"
        check_price(getattr(options, price), f"--{price.replace('_', '-')}")
    if not (math.isfinite(options.request_timeout) and options.request_timeout > 0):
        raise ValueError(
            f"--request-timeout must be a number of seconds > 0, got {options.request_timeout}"
        )
    if not (math.isfinite(options.max_reply_mb) and options.max_reply_mb > 0):
        raise ValueError(f"--max-reply-mb must be a number > 0, got {options.max_reply_mb}")
    if options.backend == "local":
        served = {"base_url": options.base_url, "frame_times": options.frame_times}
        given = [f"--{k.replace('_', '-')}" for k, v in served.items() if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} applies to a served model: add --backend openai")
        return
    if options.adapter not in (None, "video-llm"):
        raise ValueError(
            f"--backend openai serves a video LLM (adapter video-llm), not {options.adapter!r}"
        )
    in_process = {"device_map": options.device_map, "revision": options.revision}
    given = [f"--{k.replace('_', '-')}" for k, v in in_process.items() if v is not None]
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
    given = {"judge_base_url": options.judge_base_url is not None}
    given["judge_api_key_env"] = options.judge_api_key_env != "OPENAI_API_KEY"
    for kind in ("prompt", "completion"):
        price = f"judge_price_per_1k_{kind}_tokens"
        given[price] = getattr(options, price) is not None
    named = [f"--{k.replace('_', '-')}" for k, v in given.items() if v]
    if named:
        raise ValueError(
            f"{', '.join(named)} configures an LLM judge, which is off: name its model with "
            "--judge-model NAME (e.g. gpt-3.5-turbo-1106)"
        )


def judge_settings(options: ScoreOptions) -> Any:
    """The :class:`foilkit.scorers.judge.JudgeSettings` of ``options`` (``None``: no judge)."""
    if options.judge_model is None:
        return None
    from foilkit.scorers.judge import JudgeSettings

    return JudgeSettings(
        model=options.judge_model,
        base_url=options.judge_base_url,
        api_key_env=options.judge_api_key_env,
        max_concurrency=options.max_concurrency,
        max_retries=options.max_retries,
        price_per_1k_prompt_tokens=options.judge_price_per_1k_prompt_tokens,
        price_per_1k_completion_tokens=options.judge_price_per_1k_completion_tokens,
        timeout_s=options.request_timeout,
        max_reply_bytes=reply_bytes(options.max_reply_mb),
    )


def server_backend(options: ScoreOptions) -> Any:
    """The :class:`foilkit.scorers.served.ServerBackend` of ``options`` (its reply cache beside
    the embedding cache, none with ``use_cache=False``); made once per run
    (:func:`foilkit.scorers.once.once`)."""
    from foilkit.scorers.served import ServerBackend

    cache = None
    if options.use_cache:
        cache = str(Path(options.cache_dir or default_cache_dir()) / "served")
    settings = {
        "base_url": options.base_url,
        "api_key_env": options.api_key_env,
        "frames_as": options.frames_as,
        "image_format": options.image_format,
        "frame_times": options.frame_times,
        "sampler_params": options.sampler_params,
        "max_concurrency": options.max_concurrency,
        "max_retries": options.max_retries,
        "timeout_s": options.request_timeout,
        "max_reply_bytes": reply_bytes(options.max_reply_mb),
        "price_per_1k_prompt_tokens": options.price_per_1k_prompt_tokens,
        "price_per_1k_completion_tokens": options.price_per_1k_completion_tokens,
        "cache_dir": cache,
    }
    return once(("server", *sorted(settings.items())), lambda: ServerBackend(**settings))


SCORE_OPTION_NAMES = tuple(field.name for field in fields(ScoreOptions))
