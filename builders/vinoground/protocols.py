"""Vinoground's paper protocols per model family (:func:`foilkit.protocol.paper_protocols`)."""

from __future__ import annotations

from foilkit.protocol import LMMS_EVAL_REPO, Protocol, paper_protocols

#: The published scoring code the protocols reproduce.
REFERENCE = "Vinoground/Vinoground@1543a2a"

# The reference decoding (this benchmark's protocol scores in choice mode; --mode generate
# runs it: GENERATE_SETTINGS drop out in choice mode): the script's model.generate arguments.
#: Vinoground's eval/llava-onevision.py (do_sample=False, temperature=0): greedy.
DECODING = {"temperature": 0.0, "top_p": 1.0, "num_samples": 1, "max_new_tokens": 4096}

# Vinoground scores dual encoders (VideoCLIP, ImageBind, LanguageBind) on the four (video,
# caption) pairs of each item with one script each, and video LLMs by a generated A/B answer.
DUAL_ENCODER = Protocol(
    sampling="segment-step",
    num_frames=32,
    pooling="mean",
    reference=f"{REFERENCE} eval/videoclip.py (frames range(0, len, len // nframes)"
    "[:nframes], --nframes 32; the four scores compared with >), get_score_all.py",
    notes="the reference's dual encoder is VideoCLIP (S3D features of the 32 frames as two "
    "clips); foilkit takes its frames for any dual encoder and mean-pools their features",
)
#: The notes of Vinoground's video-LLM protocol, which say what both question modes do.
LLM_NOTES = (
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
VIDEO_LLM = Protocol(
    sampling="uniform",
    num_frames=32,
    mode="choice",
    prompt="vinoground",
    # --mode generate's decoding: eval/llava-onevision.py's model.generate(do_sample=False,
    # temperature=0, max_new_tokens=4096), LLaVA-OneVision being the protocol's reference
    **DECODING,
    reference=f"{REFERENCE} eval/llava-onevision.py (np.linspace(0, T - 1, nframes), "
    "--nframes 32, over each video for the text score and over the concatenated video for "
    "the video score; the questions of vinoground_textscore.json and "
    "vinoground_videoscore.json + 'Please only output one English character.'; "
    "do_sample=False, temperature=0, max_new_tokens=4096), "
    "get_score_all.py (the answer's first letter against GT); "
    f"{LMMS_EVAL_REPO}@f255e5b lmms_eval/tasks/vinoground",
    notes=LLM_NOTES,
    mode_notes={"generate": LLM_NOTES},
)
#: Model family -> the protocol of the paper's own code.
PROTOCOLS: dict[str, Protocol] = paper_protocols(
    "vinoground",
    {"dual-encoder": DUAL_ENCODER, "video-llm": VIDEO_LLM},
    others="its code covers VideoCLIP-style encoders and LLMs",
)
