"""TOMATO's paper protocols per model family (:func:`foilkit.protocol.paper_protocols`)."""

from __future__ import annotations

from foilkit.builders.tomato.source import REFERENCE
from foilkit.protocol import Protocol, paper_protocols

# The reference decoding (this benchmark's protocol scores in choice mode; --mode generate
# runs it: GENERATE_SETTINGS drop out in choice mode): the script's model.generate arguments.
#: TOMATO's src/generate_lib/*.py (do_sample=False) with constant.py's MAX_TOKENS: greedy.
DECODING = {"temperature": 0.0, "top_p": 1.0, "num_samples": 1, "max_new_tokens": 1024}

# TOMATO runs each model with construct_prompt (the builder's ``prompt`` column: 16 frames, the
# options as a letter -> text dict) on frames read by OpenCV, all decoded then
# np.linspace(0, n - 1, total_frames, dtype=int) (generate_lib/utils.py read_video), 16 frames
# for the main table (get_categorized_score.py NUM_FRAME); the answer letter is parsed from one
# greedy generation.
VIDEO_LLM = Protocol(
    sampling="uniform",
    num_frames=16,
    mode="choice",
    # --mode generate's decoding: the open models' scripts (qwen.py, llava_next.py,
    # video_llava.py, internvl.py, phi.py, video_ccam.py) generate with do_sample=False and
    # max_new_tokens=MAX_TOKENS (constant.py: 1024; its API calls: temperature 0.0, top_p 1)
    **DECODING,
    reference=f"{REFERENCE} src/generate_lib/construct_prompt.py (construct_prompt), "
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
)
#: Model family -> the protocol of the paper's own code.
PROTOCOLS: dict[str, Protocol] = paper_protocols(
    "tomato",
    {"video-llm": VIDEO_LLM},
    others="its code evaluates multimodal LLMs only, and its options mean nothing without the "
    "question",
)
