"""VELOCITI's paper protocols per model family (:func:`foilkit.protocol.paper_protocols`)."""

from __future__ import annotations

from foilkit.protocol import Protocol, paper_protocols

#: The published scoring code the protocols reproduce.
REFERENCE = "katha-ai/VELOCITI@8d66ddb"

# VELOCITI (katha-ai/VELOCITI): CLIP-style models on 20 frames, two per second at 0.25 s and
# 0.75 s (utils/extract_frames.py), mean-pooled (models/clip_model.py); video LLMs on one frame
# per second, each second's middle (utils/clip_utils.py process_video), asked whether the video
# entails the caption (vidllm_eval.py).
DUAL_ENCODER = Protocol(
    sampling="segment-middle",
    num_frames=20,
    pooling="mean",
    reference=f"{REFERENCE} utils/extract_frames.py (frames at 0.25 s and 0.75 s of each "
    "of the 10 seconds), models/clip_model.py get_video_features (mean of the frame "
    "features), clip_eval.py (pos_score, neg_score: cosine)",
    notes="VELOCITI averages the unnormalised frame features, foilkit the normalised ones; "
    "its frames are round((s + 0.25|0.75) * fps) of cv2's 1-based count, foilkit's the "
    "middles of 20 equal segments of the clip (the same times on a 10 s clip, up to a frame)",
)
VIDEO_LLM = Protocol(
    sampling="segment-middle",
    num_frames=10,
    mode="entail",
    reference=f"{REFERENCE} utils/clip_utils.py process_video (the middle frame of each "
    "second), vidllm_eval.py (get_prompt's entailment prompt; entail_score: P(Yes) / "
    "(P(Yes) + P(No)) of the first generated token)",
    notes="the reference reads the scores of generate()'s first step in float16, foilkit "
    "the forward's last logits in the run's dtype (the same distribution); frames are the "
    "middles of 10 equal segments of the clip, the reference's the middle of each second "
    "(the same on its 10 s clips)",
)
#: Model family -> the protocol of the paper's own code.
PROTOCOLS: dict[str, Protocol] = paper_protocols(
    "velociti",
    {"dual-encoder": DUAL_ENCODER, "video-llm": VIDEO_LLM},
    others="its code scores CLIP-style models and video LLMs",
)
