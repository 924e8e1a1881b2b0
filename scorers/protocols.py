"""Scoring protocols: what each benchmark's own published evaluation code does, as data.

A score depends on more than the model: which frames it sees and how they are sampled, how
frame features are pooled, how token log-probabilities become one number, the prompt and the
text length limit. The papers' own scripts differ on every one of these, so foilkit names
them. A :class:`Protocol` fixes them for one (benchmark, model family); two sets exist:

``paper`` (default)
    Each benchmark x family resolves to the protocol of that benchmark's own published code
    (:data:`PAPER`), with the reference file it reproduces. Where a paper published nothing
    for a family, the entry says so and falls back to the ``uniform`` values.
``uniform``
    One protocol across benchmarks (:data:`UNIFORM`): 8 frames by linspace, order-free mean
    pooling, mean token log-probability; for comparing a model across benchmarks.

:func:`resolve_protocol` turns a protocol name, a benchmark and an adapter family into the
settings a run uses; every explicit option (``--frames``, ``--pooling``, ...) overrides one
field and is recorded as an override. The resolved record goes into ``run.json``, the resume
identity and the report header.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

PROTOCOLS = ("paper", "uniform")

#: The settings a protocol fixes, in the order records show them. Frame settings apply to
#: every family that sees video; the others go to the adapter as constructor options, only to
#: the families that take them (``Adapter.options``).
FRAME_SETTINGS = (
    "sampling",
    "num_frames",
    "stride",
    "target_fps",
    "max_frames",
    "normalized_fps",
    "window",
)
MODEL_SETTINGS = (
    "mode",
    "pooling",
    "reduction",
    "itm_output",
    "first_token",
    "max_text_tokens",
    "preprocess",
    "score_scale",
    "parser",
    "temperature",
    "top_p",
    "num_samples",
    "max_new_tokens",
    "prompt",
)
#: The settings of ``generate`` mode only (the answer parser and the decoding): a protocol's
#: values drop out when another mode is asked for (``--mode choice`` under ``paper``).
GENERATE_SETTINGS = ("parser", "temperature", "top_p", "num_samples", "max_new_tokens")
#: The answer parser (:mod:`foilkit.scorers.parsers`) ``generate`` mode reads a benchmark's
#: answers with when neither its protocol nor ``--parser`` names one, by config (``None``: every
#: config): the rules of the benchmark's own rating script for the question its rows ask.
ANSWER_PARSERS: dict[str, dict[str | None, str]] = {
    "tempcompass": {
        "multi_choice": "tempcompass_multi_choice",  # eval_multi-choice.py
        "yes_no": "tempcompass_yes_no",  # eval_yes_no.py
        "caption_matching": "tempcompass_caption_matching",  # eval_caption_matching.py
        "captioning": "tempcompass_captioning",  # eval_captioning.py: its LLM judge alone
    },
    "tomato": {None: "tomato"},  # parse_result.py pre_parser
    "vinoground": {None: "vinoground"},  # get_score_all.py: the answer's first letter
}
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


# --- the references ------------------------------------------------------------------------------

VITATECS_REPO = "lscpku/VITATECS@58bff59"
VILMA_REPO = "ilkerkesen/ViLMA@746912b"
RTIME_REPO = "qyr0403/Reversed-in-Time@a5134b6"
TEMPCOMPASS_REPO = "llyx97/TempCompass@e1b4631"
TOMATO_REPO = "yale-nlp/TOMATO@fe2025f"
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


def _unpublished(benchmark: str, family: str, why: str = "") -> Protocol:
    """A family the benchmark's paper published no scoring code for: the uniform protocol, said
    so."""
    base = UNIFORM.get(family, UNIFORM_DEFAULT)
    note = (
        f"{benchmark} published no scoring code for {family} models; the uniform protocol's values"
    )
    return replace(base, reference="", notes=note + (f" ({why})" if why else ""))


PAPER: dict[tuple[str, str], Protocol] = {}


def _paper(benchmark: str, family: str, protocol: Protocol) -> None:
    if (benchmark, family) in PAPER:
        raise ValueError(f"a paper protocol for ({benchmark}, {family}) is already declared")
    PAPER[benchmark, family] = protocol


# VITATECS evaluates CLIP4Clip / X-CLIP (fine-tuned CLIP) with one script and flags
# (X-CLIP/eval_vitatecs.sh): its frames, pooling and text limit, applied to any dual encoder.
_paper(
    "vitatecs",
    "dual-encoder",
    Protocol(
        sampling="int-fps",
        num_frames=12,
        target_fps=1.0,
        max_frames=12,
        pooling="mean",
        max_text_tokens=32,
        preprocess="pil",
        score_scale="logit",
        dtype="float16",
        reference=f"{VITATECS_REPO} X-CLIP/eval_vitatecs.sh (--max_frames 12 --feature_framerate 1 "
        "--slice_framepos 2 --max_words 32 --sim_header meanP), dataloaders/rawvideo_util.py "
        "(PIL bicubic resize), dataloaders/dataloader_vitatecs.py, modules/modeling.py (meanP, "
        "logit_scale x cosine), modules/module_clip.py (fp16 weights)",
        notes="VITATECS runs CLIP4Clip-meanP (CLIP fine-tuned on MSR-VTT; its Table 3 reports the "
        "seqTransf variant, the published script meanP); the reference zero-fills and masks "
        "frames a short clip lacks, foilkit averages the frames that exist (the same mean)",
    ),
)
_paper(
    "vitatecs",
    "xclip",
    _unpublished(
        "vitatecs", "xclip", "its X-CLIP is xuguohai/X-CLIP, a different model from microsoft/xclip"
    ),
)
# BLIP is in VITATECS' tables, "adapted from the original repository"; the adaptation is not
# published, so the protocol is BLIP's own video retrieval evaluation.
_paper(
    "vitatecs",
    "blip-itm",
    Protocol(
        sampling="segment-step",
        num_frames=8,
        pooling="joined-frames",
        itm_output="logit",
        first_token="enc",
        max_text_tokens=35,
        reference=f"{BLIP_REPO} eval_retrieval_video.py (ITM logit on [ENC] over the 8 frames' "
        "features joined, texts cut at 35 tokens), configs/retrieval_msrvtt.yaml, "
        "data/video_dataset.py",
        notes="VITATECS adapted BLIP's eval_retrieval_video.py without publishing the adaptation; "
        "BLIP ranks by the ITM logit plus the ITC cosine, foilkit scores the ITM logit; "
        "captions are not cleaned by BLIP's pre_caption (lower case, punctuation, 40 words)",
    ),
)
_paper(
    "vitatecs",
    "video-llm",
    Protocol(
        sampling="segment-start",
        num_frames=8,
        mode="generate",
        temperature=0.2,
        num_samples=1,
        parser="vitatecs",
        preprocess="reference",
        reference="VITATECS paper, Table 11 prompt sampled at temperature 0.2 (no code "
        f"published); answers read by {LMMS_EVAL_REPO} lmms_eval/tasks/vitatecs/utils.py "
        "(vitatecs_process_results' rules, the extraction VITATECS' README points to); frames "
        "as Video-LLaMA's LAVIS loader (8 segment starts); Qwen2/2.5/3-VL frames sized as their "
        "model cards' qwen-vl-utils 0.0.14 fetch_video (preprocess 'reference')",
        notes="the paper does not say in which order it showed the two sentences: foilkit asks "
        "both orders (a model answering (A) to everything scores a tie, counted wrong); "
        "lmms-eval's ChatGPT judge for answers its rules cannot read runs only with "
        "--judge-model (off by default: they count wrong and are counted: unparseable, "
        "refused)",
    ),
)
_paper("vitatecs", "text-lm", _unpublished("vitatecs", "text-lm", "no text-only baseline"))

# ViLMA: one data loader (vl_bench/data.py Dataset_v2) for CLIP and X-CLIP, argmax decisions.
_VILMA_FRAMES = {
    "sampling": "random-consecutive",
    "num_frames": 8,
    "window": "read-video",
    "dtype": "float16",
}
# normalized_fps stays unset on purpose: ViLMA reads only QUVA from bin/normalize_fps' 30 fps
# copies (vl_bench/data.py, quva_dir/normalized_videos) and every other source at its own rate.
_VILMA_QUVA = (
    "; QUVA (counting) videos must be the 30 fps copies of bin/normalize_fps, which is the only "
    "source ViLMA normalises (normalized_fps is left unset: it would resample every video)"
)
_VILMA_DRAWS = (
    "the reference draws each window's end from one np.random stream in dataset "
    "order (not reproducible with its DataLoader workers); foilkit draws it per view "
    "from (seed, view), with the same distribution"
)
_paper(
    "vilma",
    "dual-encoder",
    Protocol(
        **_VILMA_FRAMES,
        pooling="softmax-mean",
        reference=f"{VILMA_REPO} models/image/run_clip.py, vl_bench/data.py (Dataset_v2, "
        "sample_frame_indices)",
        notes=_VILMA_DRAWS + _VILMA_QUVA,
    ),
)
_paper(
    "vilma",
    "xclip",
    Protocol(
        **_VILMA_FRAMES,
        score_scale="logit",
        reference=f"{VILMA_REPO} models/video/run_xclip.py (logits_per_video), vl_bench/data.py "
        "(Dataset_v2)",
        notes=_VILMA_DRAWS + _VILMA_QUVA,
    ),
)
_paper("vilma", "blip-itm", _unpublished("vilma", "blip-itm", "its image-text model is BLIP-2"))
_paper("vilma", "video-llm", _unpublished("vilma", "video-llm", "the paper reports no video LLMs"))
_paper(
    "vilma",
    "text-lm",
    Protocol(
        reduction="vilma",
        dtype="float16",
        reference=f"{VILMA_REPO} models/text/run.py (GPT-2, OPT, .half())",
        notes="perplexity = exp(summed token NLL / all input tokens, BOS included), as the "
        "reference",
    ),
)

# RTime and the contrast sets published data only: their papers name mean-pooled CLIP
# baselines, which is the uniform protocol; frames and sampling are not published.
for _family in ("dual-encoder", "xclip", "blip-itm", "video-llm", "text-lm"):
    _paper(
        "rtime",
        _family,
        _unpublished(
            "rtime",
            _family,
            "its repository holds data only; CLIP and BLIP baselines mean-pool frames",
        ),
    )
    _paper(
        "contrast_sets",
        _family,
        _unpublished(
            "contrast_sets",
            _family,
            "its repository holds data only; the CLIP baseline mean-pools frames",
        ),
    )

# The reference decoding of the benchmarks whose protocol scores in choice mode, which
# --mode generate runs (GENERATE_SETTINGS drop out in choice mode): each script's
# model.generate arguments, for the model the benchmark's protocol reproduces.
#: TempCompass' run_video_llava/inference_dataset.py (Video-LLaVA): sampled at 0.1.
TEMPCOMPASS_DECODING = {"temperature": 0.1, "top_p": 1.0, "num_samples": 1, "max_new_tokens": 128}
#: TOMATO's src/generate_lib/*.py (do_sample=False) with constant.py's MAX_TOKENS: greedy.
TOMATO_DECODING = {"temperature": 0.0, "top_p": 1.0, "num_samples": 1, "max_new_tokens": 1024}
#: Vinoground's eval/llava-onevision.py (do_sample=False, temperature=0): greedy.
VINOGROUND_DECODING = {"temperature": 0.0, "top_p": 1.0, "num_samples": 1, "max_new_tokens": 4096}

# TempCompass runs Video-LLaVA (run_video_llava/inference_dataset.py): the row's question with its
# task type's answer prompt (the builder's ``prompt`` column), 8 frames by LanguageBind's decord
# loader (np.linspace(0, n - 1, 8, dtype=int)), one generation read by rules (eval_*.py).
_paper(
    "tempcompass",
    "video-llm",
    Protocol(
        sampling="uniform",
        num_frames=8,
        mode="choice",
        # --mode generate's decoding: inference_single_video's model.generate(do_sample=True,
        # temperature=0.1, max_new_tokens=128), one answer, no top_p (transformers' 1.0)
        **TEMPCOMPASS_DECODING,
        reference=f"{TEMPCOMPASS_REPO} run_video_llava/inference_dataset.py (answer_prompt per "
        "task type, appended to the question; do_sample=True, temperature=0.1, "
        "max_new_tokens=128), run_video_llava/llava/model/multimodal_encoder/"
        "languagebind/video/processing_video.py (decord, 8 frames by linspace with both ends), "
        "eval_multi-choice.py, eval_yes_no.py, eval_caption_matching.py (rule-based rating), "
        "utils/eval_utils.py (print_result)",
        notes="the reference samples an answer (temperature 0.1, up to 128 tokens) from "
        "Video-LLaVA in its llava_v1 conversation at 4 bits and rates it by rules, falling back "
        "to a gpt-3.5 judge; foilkit asks the same prompt in the model's own chat template and "
        "takes the option label (A, Caption A, Option 1, yes/no) the model gives the highest "
        "probability: no generation, no judge, deterministic, every answer matched",
        mode_notes={
            "generate": "the reference samples an answer (temperature 0.1, up to 128 tokens) "
            "from Video-LLaVA in its llava_v1 conversation at 4 bits and rates it by rules, "
            "falling back to a gpt-3.5 judge; foilkit asks the same prompt in the model's own "
            "chat template, samples one answer as the reference does (temperature 0.1, top_p 1, "
            "up to 128 tokens; --temperature, --top-p, --max-new-tokens override; the "
            "reference's transformers also keeps its top_k 50 and whatever sampler the "
            "checkpoint's generation_config sets, foilkit runs none) and rates "
            "the answer by the task type's rules (the tempcompass_* parsers); the gpt-3.5 judge "
            "is asked only with --judge-model (off by default: answers the rules cannot read "
            "count wrong, and captioning, which only the judge rates, is refused)",
        },
    ),
)
for _family in ("dual-encoder", "xclip", "blip-itm", "text-lm"):
    _paper(
        "tempcompass",
        _family,
        _unpublished(
            "tempcompass",
            _family,
            "its code evaluates video LLMs only; a dual encoder matches the option texts",
        ),
    )

# TOMATO runs each model with construct_prompt (the builder's ``prompt`` column: 16 frames, the
# options as a letter -> text dict) on frames read by OpenCV, all decoded then
# np.linspace(0, n - 1, total_frames, dtype=int) (generate_lib/utils.py read_video), 16 frames
# for the main table (get_categorized_score.py NUM_FRAME); the answer letter is parsed from one
# greedy generation.
_paper(
    "tomato",
    "video-llm",
    Protocol(
        sampling="uniform",
        num_frames=16,
        mode="choice",
        # --mode generate's decoding: the open models' scripts (qwen.py, llava_next.py,
        # video_llava.py, internvl.py, phi.py, video_ccam.py) generate with do_sample=False and
        # max_new_tokens=MAX_TOKENS (constant.py: 1024; its API calls: temperature 0.0, top_p 1)
        **TOMATO_DECODING,
        reference=f"{TOMATO_REPO} src/generate_lib/construct_prompt.py (construct_prompt), "
        "src/generate_lib/utils.py (read_video: every frame decoded, linspace with both ends), "
        "src/evaluate.py (--total_frames 16), src/generate_lib/qwen.py and llava_next.py (the "
        "model's own chat template, no system prompt of TOMATO's; decord linspace for "
        "LLaVA-NeXT; do_sample=False, max_new_tokens=MAX_TOKENS), src/generate_lib/constant.py "
        "(MAX_TOKENS 1024), src/parse_result.py, src/get_categorized_score.py",
        notes="the reference generates an answer greedily (up to 1024 tokens), parses its letter "
        "by rules and falls back to gpt-4o-mini; foilkit asks the same prompt in the model's own "
        "chat template and takes the option letter the model gives the highest probability: no "
        "generation, no judge, every answer matched; its API and InternVideo2 scripts add the "
        "system prompt 'You are an expert in understanding dynamics of objects.', which foilkit "
        "does not",
        mode_notes={
            "generate": "the reference generates an answer greedily (up to 1024 tokens), parses "
            "its letter by rules and falls back to gpt-4o-mini; foilkit asks the same prompt in "
            "the model's own chat template, generates greedily as the reference does (up to "
            "1024 tokens; --temperature, --max-new-tokens override; a repetition penalty a "
            "checkpoint's generation_config sets, which transformers applies to greedy answers "
            "too, foilkit does not) and "
            "reads the letter by the same rules (the tomato parser); gpt-4o-mini is asked only "
            "with --judge-model (off by default: answers the rules cannot read count wrong, "
            "where TOMATO then guesses a random letter); its API and InternVideo2 scripts add "
            "the system prompt 'You are an expert in understanding dynamics of objects.', which "
            "foilkit does not",
        },
    ),
)
for _family in ("dual-encoder", "xclip", "blip-itm", "text-lm"):
    _paper(
        "tomato",
        _family,
        _unpublished(
            "tomato",
            _family,
            "its code evaluates multimodal LLMs only, and its options mean nothing without the "
            "question",
        ),
    )

# Vinoground scores dual encoders (VideoCLIP, ImageBind, LanguageBind) on the four (video,
# caption) pairs of each item with one script each, and video LLMs by a generated A/B answer.
VINOGROUND_REPO = "Vinoground/Vinoground@1543a2a"
_paper(
    "vinoground",
    "dual-encoder",
    Protocol(
        sampling="segment-step",
        num_frames=32,
        pooling="mean",
        reference=f"{VINOGROUND_REPO} eval/videoclip.py (frames range(0, len, len // nframes)"
        "[:nframes], --nframes 32; the four scores compared with >), get_score_all.py",
        notes="the reference's dual encoder is VideoCLIP (S3D features of the 32 frames as two "
        "clips); foilkit takes its frames for any dual encoder and mean-pools their features",
    ),
)
#: The notes of Vinoground's video-LLM protocol, which say what both question modes do.
VINOGROUND_LLM_NOTES = (
    "the reference generates a greedy answer (eval/llava-onevision.py: do_sample=False, up to "
    "4096 tokens, the script of the protocol's model; its other scripts set other limits or "
    "leave decoding to the checkpoint) and reads its first "
    "letter (--mode generate does, with the same decoding and the vinoground parser; "
    "--temperature, --max-new-tokens override); choice mode reads the option "
    "letters' probabilities instead. Both show each question in both orders (the captions; "
    "the two videos in the joined video) and average, where the reference's json files fix "
    "one order per item (not published outside the Hub). The joined video is built from the "
    "two decoded clips: the first, 2 s of black frames, the second (the reference's "
    "vinoground_videos_concated files, whose making is not published); the questions' "
    "wording is that of the json files as lmms-eval and later papers print it"
)
_paper(
    "vinoground",
    "video-llm",
    Protocol(
        sampling="uniform",
        num_frames=32,
        mode="choice",
        prompt="vinoground",
        # --mode generate's decoding: eval/llava-onevision.py's model.generate(do_sample=False,
        # temperature=0, max_new_tokens=4096), LLaVA-OneVision being the protocol's reference
        **VINOGROUND_DECODING,
        reference=f"{VINOGROUND_REPO} eval/llava-onevision.py (np.linspace(0, T - 1, nframes), "
        "--nframes 32, over each video for the text score and over the concatenated video for "
        "the video score; the questions of vinoground_textscore.json and "
        "vinoground_videoscore.json + 'Please only output one English character.'; "
        "do_sample=False, temperature=0, max_new_tokens=4096), "
        "get_score_all.py (the answer's first letter against GT); "
        f"{LMMS_EVAL_REPO}@f255e5b lmms_eval/tasks/vinoground",
        notes=VINOGROUND_LLM_NOTES,
        mode_notes={"generate": VINOGROUND_LLM_NOTES},
    ),
)
for _family in ("xclip", "blip-itm", "text-lm"):
    _paper(
        "vinoground",
        _family,
        _unpublished("vinoground", _family, "its code covers VideoCLIP-style encoders and LLMs"),
    )

# VELOCITI (katha-ai/VELOCITI): CLIP-style models on 20 frames, two per second at 0.25 s and
# 0.75 s (utils/extract_frames.py), mean-pooled (models/clip_model.py); video LLMs on one frame
# per second, each second's middle (utils/clip_utils.py process_video), asked whether the video
# entails the caption (vidllm_eval.py).
VELOCITI_REPO = "katha-ai/VELOCITI@8d66ddb"
_paper(
    "velociti",
    "dual-encoder",
    Protocol(
        sampling="segment-middle",
        num_frames=20,
        pooling="mean",
        reference=f"{VELOCITI_REPO} utils/extract_frames.py (frames at 0.25 s and 0.75 s of each "
        "of the 10 seconds), models/clip_model.py get_video_features (mean of the frame "
        "features), clip_eval.py (pos_score, neg_score: cosine)",
        notes="VELOCITI averages the unnormalised frame features, foilkit the normalised ones; "
        "its frames are round((s + 0.25|0.75) * fps) of cv2's 1-based count, foilkit's the "
        "middles of 20 equal segments of the clip (the same times on a 10 s clip, up to a frame)",
    ),
)
_paper(
    "velociti",
    "video-llm",
    Protocol(
        sampling="segment-middle",
        num_frames=10,
        mode="entail",
        reference=f"{VELOCITI_REPO} utils/clip_utils.py process_video (the middle frame of each "
        "second), vidllm_eval.py (get_prompt's entailment prompt; entail_score: P(Yes) / "
        "(P(Yes) + P(No)) of the first generated token)",
        notes="the reference reads the scores of generate()'s first step in float16, foilkit "
        "the forward's last logits in the run's dtype (the same distribution); frames are the "
        "middles of 10 equal segments of the clip, the reference's the middle of each second "
        "(the same on its 10 s clips)",
    ),
)
for _family in ("xclip", "blip-itm", "text-lm"):
    _paper(
        "velociti",
        _family,
        _unpublished("velociti", _family, "its code scores CLIP-style models and video LLMs"),
    )

# TemporalBench (mu-cai/TemporalBench): video LLMs answer the published question; frames by
# np.linspace(0, total - 1, nframes) (eval/llava-onevision.py, --nframes default 1).
TEMPORALBENCH_REPO = "mu-cai/TemporalBench@62f88ab"
_paper(
    "temporalbench",
    "video-llm",
    Protocol(
        sampling="uniform",
        num_frames=1,
        mode="choice",
        prompt="temporalbench",
        reference=f"{TEMPORALBENCH_REPO} eval/llava-onevision.py (load_video: np.linspace(0, "
        "total_frame_num - 1, nframes), --nframes default 1; the question as published), "
        "get_qa_acc.py (the answer's first letter against GT)",
        notes="TemporalBench generates an answer and compares its first letter with GT; foilkit "
        "asks the published question and reads the option letters' probabilities instead, "
        "both option orders averaged (the published order is one of them); 1 frame is the "
        "script's default, its leaderboard runs models at their own frame counts (--frames)",
    ),
)
for _family in ("dual-encoder", "xclip", "blip-itm", "text-lm"):
    _paper(
        "temporalbench",
        _family,
        _unpublished("temporalbench", _family, "its code evaluates generative video LLMs only"),
    )

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
for _benchmark in ("vitatecs", "rtime"):
    for _family, _protocol in NATIVE_VIDEO_ENCODERS.items():
        _paper(
            _benchmark,
            _family,
            replace(_protocol, notes=_protocol.notes.format(benchmark=_benchmark)),
        )


def describe_protocol(name: str, benchmark: str | None, family: str) -> Protocol:
    """The protocol ``name`` declares for ``benchmark`` and ``family`` (before overrides)."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose from {list(PROTOCOLS)}")
    if name == "uniform":
        return UNIFORM.get(family, UNIFORM_DEFAULT)
    if benchmark is None:
        base = UNIFORM.get(family, UNIFORM_DEFAULT)
        return replace(base, notes="no benchmark named: the uniform protocol's values")
    if (benchmark, family) in PAPER:
        return PAPER[benchmark, family]
    if not any(declared == benchmark for declared, _ in PAPER):
        base = UNIFORM.get(family, UNIFORM_DEFAULT)
        note = f"{benchmark} is not a published benchmark: the uniform protocol's values"
        return replace(base, notes=note)
    return _unpublished(benchmark, family)


@dataclass(frozen=True)
class ResolvedProtocol:
    """The settings a run uses: a protocol's, with the user's explicit options over them."""

    name: str
    benchmark: str | None
    family: str
    settings: Mapping[str, Any]
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    reference: str = ""
    notes: str = ""
    #: settings the protocol left to the model, as the model fixes them (its ``native_settings``)
    from_model: Mapping[str, Any] = field(default_factory=dict)
    #: Settings this run could not follow on its device, each ``{"protocol", "used", "why"}``
    #: (e.g. float16 where the device cannot run it): said in the record and the report.
    departures: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: A run of several configs: the settings its configs resolved differently (TempCompass'
    #: answer parser per task type), by setting then config; absent from ``settings``.
    per_config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def with_departure(self, name: str, used: Any, why: str) -> ResolvedProtocol:
        """This protocol, with setting ``name`` run as ``used`` instead, for the reason ``why``."""
        departure = {"protocol": self.settings.get(name), "used": used, "why": why}
        return replace(
            self,
            settings={**self.settings, name: used},
            departures={**self.departures, name: departure},
        )

    def adapter_options(self, accepted: tuple[str, ...]) -> dict[str, Any]:
        """The model settings the adapter takes as constructor options."""
        return {
            name: value
            for name, value in self.settings.items()
            if name in MODEL_SETTINGS and name in accepted
        }

    def to_record(self) -> dict[str, Any]:
        """A JSON-serialisable record (``departures`` only when there are some, so records of
        runs that followed their protocol read as they always have)."""
        record = {
            "name": self.name,
            "benchmark": self.benchmark,
            "family": self.family,
            "settings": dict(self.settings),
            "overrides": {name: dict(value) for name, value in self.overrides.items()},
            "reference": self.reference,
            "notes": self.notes,
            **({"from_model": dict(self.from_model)} if self.from_model else {}),
        }
        if self.departures:
            record["departures"] = {name: dict(value) for name, value in self.departures.items()}
        if self.per_config:
            record["per_config"] = {name: dict(value) for name, value in self.per_config.items()}
        return record


def combined_protocol(protocols: Mapping[str, ResolvedProtocol]) -> ResolvedProtocol:
    """One account of the protocols a run's configs (by name, in run order) resolved: the first
    config's, with each setting the configs do not share moved from ``settings`` to
    ``per_config`` (every config's value, ``None`` where one has none), so a run of several
    configs claims no one config's setting for all."""
    first, *_ = protocols.values()
    names = dict.fromkeys(key for protocol in protocols.values() for key in protocol.settings)
    differing = {
        key: {config: protocol.settings.get(key) for config, protocol in protocols.items()}
        for key in names
    }
    differing = {
        key: values for key, values in differing.items() if len(set(map(repr, values.values()))) > 1
    }
    if not differing:
        return first
    settings = {key: value for key, value in first.settings.items() if key not in differing}
    return replace(first, settings=settings, per_config=differing)


def resolve_protocol(
    name: str,
    benchmark: str | None,
    family: str,
    overrides: Mapping[str, Any] | None = None,
    *,
    accepted: tuple[str, ...] = MODEL_SETTINGS,
    native: Mapping[str, Any] | None = None,
    config: str | None = None,
) -> ResolvedProtocol:
    """The settings of protocol ``name`` for ``benchmark`` x ``family``, with ``overrides`` applied.

    Args:
        name: ``paper`` or ``uniform``.
        benchmark: the benchmark's registered name (``None``: not a known benchmark).
        family: the adapter's registered name.
        overrides: explicit options (``None`` values mean "not given"); each one that differs
            from the protocol is recorded with the protocol's value.
        accepted: the model settings the family's adapter takes; an override of another one is
            an error (``--pooling`` means nothing to a video LLM).
        native: the settings the model itself fixes (``Adapter.native_settings``); they fill
            what the protocol leaves to the model (``num_frames=None``) and are recorded as
            ``from_model``.
        config: the benchmark config scored, for the answer parser ``generate`` mode reads
            its answers with when none is set (:func:`default_parser`).
    """
    protocol = describe_protocol(name, benchmark, family)
    settings = {
        key: value
        for key, value in protocol.settings().items()
        if key in FRAME_SETTINGS or key in LOAD_SETTINGS or key in accepted
    }
    from_model = {
        key: value
        for key, value in (native or {}).items()
        if key in SETTINGS and getattr(protocol, key) is None and value is not None
    }
    settings.update(from_model)
    recorded: dict[str, dict[str, Any]] = {}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key not in SETTINGS:
            raise ValueError(f"{key!r} is not a protocol setting; choose from {list(SETTINGS)}")
        if key in MODEL_SETTINGS and key not in accepted:
            raise ValueError(
                f"the {family} adapter takes no {key!r} option (it takes "
                f"{list(accepted) or 'none'})"
            )
        # a load setting the protocol leaves to foilkit (no reference dtype) is no departure
        declared = key not in LOAD_SETTINGS or key in settings
        if declared and settings.get(key) != value:
            recorded[key] = {"protocol": settings.get(key), "given": value}
        settings[key] = value
    if settings.get("mode") != "generate":
        # the protocol's parser and decoding are generate mode's (a choice-mode protocol keeps
        # its reference's decoding for --mode generate); another mode asks nothing of them
        for key in GENERATE_SETTINGS:
            if key not in recorded:
                settings.pop(key, None)
    if settings.get("mode") == "generate" and "parser" in accepted and not settings.get("parser"):
        parser = default_parser(benchmark, config)
        if parser is not None:
            settings["parser"] = parser
    if "mode" in recorded and "prompt" not in recorded:
        # a protocol's choice question means nothing to another mode
        settings.pop("prompt", None)
    if "sampling" in recorded:
        # the protocol's policy parameters do not carry over to another policy
        for key in ("stride", "target_fps", "max_frames", "normalized_fps"):
            if key not in recorded:
                settings.pop(key, None)
    return ResolvedProtocol(
        name,
        benchmark,
        family,
        settings,
        recorded,
        protocol.reference,
        protocol.notes_for(settings.get("mode")),
        from_model,
    )


def default_parser(benchmark: str | None, config: str | None) -> str | None:
    """The answer parser of ``benchmark``'s ``config`` (:data:`ANSWER_PARSERS`: the config's,
    else the benchmark's for every config); ``None``: generate mode's own default."""
    parsers = ANSWER_PARSERS.get(benchmark or "", {})
    return parsers.get(config, parsers.get(None))


def list_protocols() -> list[dict[str, Any]]:
    """Every declared paper protocol as rows (benchmark, family, settings, reference, notes, and
    ``mode_notes`` where another mode has its own)."""
    return [
        {
            "benchmark": benchmark,
            "family": family,
            **protocol.settings(),
            "reference": protocol.reference,
            "notes": protocol.notes,
            **({"mode_notes": dict(protocol.mode_notes)} if protocol.mode_notes else {}),
        }
        for (benchmark, family), protocol in PAPER.items()
    ]


__all__ = [
    "ANSWER_PARSERS",
    "GENERATE_SETTINGS",
    "PAPER",
    "PROTOCOLS",
    "LOAD_SETTINGS",
    "SETTINGS",
    "UNIFORM",
    "Protocol",
    "ResolvedProtocol",
    "default_parser",
    "describe_protocol",
    "list_protocols",
    "resolve_protocol",
    "setting_label",
]
