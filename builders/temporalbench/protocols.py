"""TemporalBench's paper protocols per model family (:func:`foilkit.protocol.paper_protocols`)."""

from __future__ import annotations

from foilkit.protocol import Protocol, paper_protocols

#: The published scoring code the protocols reproduce.
REFERENCE = "mu-cai/TemporalBench@62f88ab"

# TemporalBench (mu-cai/TemporalBench): video LLMs answer the published question; frames by
# np.linspace(0, total - 1, nframes) (eval/llava-onevision.py, --nframes default 1).
VIDEO_LLM = Protocol(
    sampling="uniform",
    num_frames=1,
    mode="choice",
    prompt="temporalbench",
    reference=f"{REFERENCE} eval/llava-onevision.py (load_video: np.linspace(0, "
    "total_frame_num - 1, nframes), --nframes default 1; the question as published), "
    "get_qa_acc.py (the answer's first letter against GT)",
    notes="TemporalBench generates an answer and compares its first letter with GT; foilkit "
    "asks the published question and reads the option letters' probabilities instead, "
    "both option orders averaged (the published order is one of them); 1 frame is the "
    "script's default, its leaderboard runs models at their own frame counts (--frames)",
)
#: Model family -> the protocol of the paper's own code.
PROTOCOLS: dict[str, Protocol] = paper_protocols(
    "temporalbench",
    {"video-llm": VIDEO_LLM},
    others="its code evaluates generative video LLMs only",
)
