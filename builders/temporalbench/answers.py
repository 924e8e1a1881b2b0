"""TemporalBench's question: the short QA question its scripts ask (``temporalbench_short_qa.json``:
"Which caption best describes this video?", ``A.`` / ``B.`` lines, "Answer with the option's
letter ..."), the ``temporalbench`` choice prompt of its video-LLM protocol.
"""

from __future__ import annotations

from collections.abc import Sequence

from foilkit.answers import ChoicePrompt, lettered

#: TemporalBench's short QA question (``temporalbench_short_qa.json``: a header, ``A.``/``B.``
#: lines, an instruction).
TEMPORALBENCH_QUESTION = (
    "Which caption best describes this video?\n{options}\n"
    "Answer with the option's letter from the given choices directly."
)


def temporalbench_question(options: Sequence[str]) -> str:
    """TemporalBench's published question for ``options`` in the order given."""
    return TEMPORALBENCH_QUESTION.format(options=lettered(options))


#: The choice prompts, by name (the ``prompt`` protocol setting).
PROMPTS: dict[str, ChoicePrompt] = {
    "temporalbench": ChoicePrompt(TEMPORALBENCH_QUESTION, temporalbench_question),
}
