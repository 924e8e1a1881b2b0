"""VITATECS' paper protocols per model family (:func:`foilkit.protocol.paper_protocols`)."""

from __future__ import annotations

from foilkit.builders.vitatecs.source import REFERENCE
from foilkit.protocol import BLIP_REPO, LMMS_EVAL_REPO, Protocol, paper_protocols

# VITATECS evaluates CLIP4Clip / X-CLIP (fine-tuned CLIP) with one script and flags
# (X-CLIP/eval_vitatecs.sh): its frames, pooling and text limit, applied to any dual encoder.
DUAL_ENCODER = Protocol(
    sampling="int-fps",
    num_frames=12,
    target_fps=1.0,
    max_frames=12,
    pooling="mean",
    max_text_tokens=32,
    preprocess="pil",
    score_scale="logit",
    dtype="float16",
    reference=f"{REFERENCE} X-CLIP/eval_vitatecs.sh (--max_frames 12 --feature_framerate 1 "
    "--slice_framepos 2 --max_words 32 --sim_header meanP), dataloaders/rawvideo_util.py "
    "(PIL bicubic resize), dataloaders/dataloader_vitatecs.py, modules/modeling.py (meanP, "
    "logit_scale x cosine), modules/module_clip.py (fp16 weights)",
    notes="VITATECS runs CLIP4Clip-meanP (CLIP fine-tuned on MSR-VTT; its Table 3 reports the "
    "seqTransf variant, the published script meanP); the reference zero-fills and masks "
    "frames a short clip lacks, foilkit averages the frames that exist (the same mean)",
)
# BLIP is in VITATECS' tables, "adapted from the original repository"; the adaptation is not
# published, so the protocol is BLIP's own video retrieval evaluation.
BLIP_ITM = Protocol(
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
)
VIDEO_LLM = Protocol(
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
)
#: Model family -> the protocol of the paper's own code.
PROTOCOLS: dict[str, Protocol] = paper_protocols(
    "vitatecs",
    {
        "dual-encoder": DUAL_ENCODER,
        "xclip": "its X-CLIP is xuguohai/X-CLIP, a different model from microsoft/xclip",
        "blip-itm": BLIP_ITM,
        "video-llm": VIDEO_LLM,
        "text-lm": "no text-only baseline",
    },
    native=True,
)
