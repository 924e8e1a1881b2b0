"""ViLMA's paper protocols per model family (:func:`foilkit.protocol.paper_protocols`)."""

from __future__ import annotations

from foilkit.builders.vilma.source import REFERENCE
from foilkit.protocol import Protocol, paper_protocols

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
DUAL_ENCODER = Protocol(
    **_VILMA_FRAMES,
    pooling="softmax-mean",
    reference=f"{REFERENCE} models/image/run_clip.py, vl_bench/data.py (Dataset_v2, "
    "sample_frame_indices)",
    notes=_VILMA_DRAWS + _VILMA_QUVA,
)
XCLIP = Protocol(
    **_VILMA_FRAMES,
    score_scale="logit",
    reference=f"{REFERENCE} models/video/run_xclip.py (logits_per_video), vl_bench/data.py "
    "(Dataset_v2)",
    notes=_VILMA_DRAWS + _VILMA_QUVA,
)
TEXT_LM = Protocol(
    reduction="vilma",
    dtype="float16",
    reference=f"{REFERENCE} models/text/run.py (GPT-2, OPT, .half())",
    notes="perplexity = exp(summed token NLL / all input tokens, BOS included), as the reference",
)
#: Model family -> the protocol of the paper's own code.
PROTOCOLS: dict[str, Protocol] = paper_protocols(
    "vilma",
    {
        "dual-encoder": DUAL_ENCODER,
        "xclip": XCLIP,
        "blip-itm": "its image-text model is BLIP-2",
        "video-llm": "the paper reports no video LLMs",
        "text-lm": TEXT_LM,
    },
)
