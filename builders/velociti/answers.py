"""VELOCITI's question: does the video entail a caption (the scorer's ``entail`` mode, answered
Yes or No), its entailment prompt (katha-ai/VELOCITI ``vidllm_eval.py`` ``get_prompt``) verbatim.
"""

from __future__ import annotations

from foilkit.answers import ENTAIL, CaptionQuestion

ENTAIL_QUESTION = (
    "Carefully watch the video and pay attention to the sequence of events, the details and "
    "actions of persons.\nHere is a caption that describes the video: {caption}\nBased on your "
    "observation, does the given video entail the caption? Just answer with either Yes or No. "
)
#: The questions about one caption, by the role the scorer asks them in.
QUESTIONS: dict[str, CaptionQuestion] = {ENTAIL: CaptionQuestion(ENTAIL_QUESTION)}
