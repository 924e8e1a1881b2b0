"""TempCompass' paper protocols per model family (:func:`foilkit.protocol.paper_protocols`)."""

from __future__ import annotations

from foilkit.builders.tempcompass.source import REFERENCE
from foilkit.protocol import Protocol, paper_protocols

# The reference decoding (this benchmark's protocol scores in choice mode; --mode generate
# runs it: GENERATE_SETTINGS drop out in choice mode): the script's model.generate arguments.
#: TempCompass' run_video_llava/inference_dataset.py (Video-LLaVA): sampled at 0.1.
DECODING = {"temperature": 0.1, "top_p": 1.0, "num_samples": 1, "max_new_tokens": 128}

# TempCompass runs Video-LLaVA (run_video_llava/inference_dataset.py): the row's question with its
# task type's answer prompt (the builder's ``prompt`` column), 8 frames by LanguageBind's decord
# loader (np.linspace(0, n - 1, 8, dtype=int)), one generation read by rules (eval_*.py).
VIDEO_LLM = Protocol(
    sampling="uniform",
    num_frames=8,
    mode="choice",
    # --mode generate's decoding: inference_single_video's model.generate(do_sample=True,
    # temperature=0.1, max_new_tokens=128), one answer, no top_p (transformers' 1.0)
    **DECODING,
    reference=f"{REFERENCE} run_video_llava/inference_dataset.py (answer_prompt per "
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
)
#: Model family -> the protocol of the paper's own code.
PROTOCOLS: dict[str, Protocol] = paper_protocols(
    "tempcompass",
    {"video-llm": VIDEO_LLM},
    others="its code evaluates video LLMs only; a dual encoder matches the option texts",
)
