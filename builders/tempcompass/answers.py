"""TempCompass' answers: the rules of its rating scripts, and its official LLM judge.

``eval_multi-choice.py``, ``eval_yes_no.py`` and ``eval_caption_matching.py`` (llyx97/TempCompass,
:data:`~foilkit.builders.tempcompass.source.REFERENCE`) read an answer by rules, and ask
gpt-3.5-turbo-1106 whether one their rules cannot match is correct, given the question and the
ground-truth answer (``prompt_templates.py``'s ``*_evaluation_prompt``; ``utils/eval_utils.py``
``get_eval_result`` reads the reply with ``llm_output_to_rating``); ``eval_captioning.py`` has
no rules and gives its judge every generated caption and the video's multi-choice question to
answer (``caption_evaluation_prompt``, ``parse_llm_output``). A letter the question did not
offer (``D`` of three options) is matched and rated 0 there, and ``unparseable`` here: wrong
either way. The prompt texts are the published ones, character for character.
"""

from __future__ import annotations

from collections.abc import Sequence

from foilkit.answers import (
    GPT35_JUDGE,
    JUDGED,
    PARSED,
    REFUSED,
    UNPARSEABLE,
    AnswerParser,
    JudgeCase,
    JudgeProtocol,
    ParsedAnswer,
    chose,
    index_of_word,
    judge_reference,
    option_labels,
    read_correctness,
    refused,
)
from foilkit.builders.tempcompass.source import REFERENCE


def clean(answer: str) -> str:
    """TempCompass' scripts drop ``</s>`` and surrounding whitespace from a prediction before
    matching it and before showing it to the judge."""
    return answer.replace("</s>", "").strip()


def parse_multi_choice(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TempCompass ``eval_multi-choice.py``: the whole option line (``A. text``), the letter
    alone, or an answer starting ``A.`` or ``A)``."""
    if refused(answer):
        return ParsedAnswer(REFUSED)
    letters = option_labels(options, labels)
    answer = clean(answer)
    for index, (letter, text) in enumerate(zip(letters, options)):
        if answer == f"{letter}. {text}":
            return ParsedAnswer(PARSED, index)
    if answer in letters:
        return ParsedAnswer(PARSED, letters.index(answer))
    for mark in (".", ")"):
        for index, letter in enumerate(letters):
            if answer.startswith(letter + mark):
                return ParsedAnswer(PARSED, index)
    return ParsedAnswer(UNPARSEABLE)


def parse_yes_no(
    answer: str | None, options: Sequence[str] = ("yes", "no"), labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TempCompass ``eval_yes_no.py``: the answer, in lower case, starts with ``yes`` or ``no``
    (so ``"Nothing"`` reads as no, as there); ``options`` name the index of each."""
    if refused(answer):
        return ParsedAnswer(REFUSED)
    lowered = clean(answer).lower()
    for word in ("yes", "no"):
        if lowered.startswith(word):
            return chose(index_of_word(options, word))
    return ParsedAnswer(UNPARSEABLE)


def parse_caption_matching(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TempCompass ``eval_caption_matching.py`` ``eval_rule``: the whole line (``Sentence A:
    text``), the sentence (also after a ``") "``), or the label with or without its
    ``Sentence``/``Option``/``Caption`` word (a final full stop aside); a later rule's match
    wins, as there. The reference cuts each sentence at a second ``": "``; an answer equal to
    a cut that several options share is rated right there whatever the truth, and is
    ``unparseable`` here."""
    if refused(answer):
        return ParsedAnswer(REFUSED)
    labels = option_labels(options, labels)
    answer = clean(answer)
    chosen: set[int] = set()  # the options the last matching rule names
    for index, (label, text) in enumerate(zip(labels, options)):
        if f"{label}: {text}" == answer:
            chosen = {index}
    after = answer.split(") ")[1] if ") " in answer else None
    # the sentence as the reference cuts it from its line: up to a second ": "
    sentences = [text.split(": ")[0] for text in options]
    for sentence in sentences:
        if sentence == answer or sentence == after:
            chosen = {i for i, other in enumerate(sentences) if other == sentence}
    short = [
        label.replace("Sentence ", "").replace("Option ", "").replace("Caption ", "")
        for label in labels
    ]
    for index, label in enumerate([*labels, *short]):
        if label == answer or label == answer.replace(".", ""):
            chosen = {index % len(options)}
    # a cut sentence several options share: the reference rates it right whatever the truth
    return chose(chosen.pop() if len(chosen) == 1 else None)


def parse_captioning(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TempCompass ``eval_captioning.py``: no rules read a caption (its judge does); an empty
    one is ``refused`` (``prediction is None``: rated 0 there)."""
    return ParsedAnswer(REFUSED) if refused(answer) else ParsedAnswer(UNPARSEABLE)


_CORRECTNESS = (
    "\nYou will receive {what}, the ground-truth answer and the prediction from a question "
    "answering (QA) model. Your task is to determine whether QA model prediction is correct, "
    "based on the question and ground-truth answer. If the prediction is correct, respond "
    '"Correct". If the prediction is incorrect, respond "Incorrect".\n'
)
#: TempCompass ``prompt_templates.py``: ``multi_choice_evaluation_prompt``,
#: ``yes_no_evaluation_prompt``, ``caption_matching_evaluation_prompt``, with the heading each
#: ``eval_*.py`` puts before the question.
CORRECTNESS = {
    "multi_choice": (_CORRECTNESS.format(what="a multi-choice question"), "Multi-Choice Question"),
    "yes_no": (_CORRECTNESS.format(what="a Yes/No question"), "Yes/No Question"),
    "caption_matching": (
        _CORRECTNESS.format(what="a caption matching question"),
        "Caption Matching Question",
    ),
}
#: TempCompass ``prompt_templates.py`` ``caption_evaluation_prompt`` (its typos included).
CAPTIONING = """
You will receive a video description and a multi-choice question. Your task is to choose the correct answer and briefly explain the reason why you choose the answer. If none of the choice candidates are correct or the video description lacks enough information to answer the question, just answer "None of the choices are correct". Please organize your response in this format:
```
Reasoning: [Your reason to obtain the answer]
Answer: [Your answer]
```

Here are some examples of video description, multi-choice question and the expected answer:
```
Video Description: A person is palying football.
Multi-Choice Question:
What is the person doing in the video?
A. cooking
B. palying football
C. playing basketball
D. reading book
Reasoning: The video description mentions that the person is playing football.
Answer: B. palying football

Video Description: A bird is flying clockwise.
Multi-Choice Question:
In which direction is the bird flying?
A. backwark
B. counter-clockwise
C. clockwise
D. downward
Reasoning: The video description mentions that the bird is flying clockwise
Answer: C. clockwise

Video Description: An air balloon is inflating.
Multi-Choice Question:
What is happening to the air balloon?
A. exploding
B. getting smaller
C. flying
Reasoning: The video description mentions that the air balloon is inflating, while none of the coices can be explained as inflating.
Answer: None of the choices are correct
```
"""  # noqa: E501 (the published text, one line per paragraph)


def correctness_prompt(task: str, question: str, answer: str, prediction: str) -> str:
    """The user turn ``eval_<task>.py`` sends its judge about ``prediction`` (cleaned)."""
    base, heading = CORRECTNESS[task]
    return (
        f"{base}\n{heading}:\n{question}\nGround-Truth Answer: {answer}\n"
        f"Model Prediction: {clean(prediction)}"
    )


def captioning_prompt(caption: str, mc_question: str) -> str:
    """The user turn ``eval_captioning.py`` sends its judge: the caption (cleaned) as the video
    description, then the multi-choice question to answer from it."""
    return (
        f"{CAPTIONING}\nVideo Description:{clean(caption)}\nMulti-Choice Question:\n{mc_question}\n"
    )


def captioning_rating(reply: str, mc_answer: str) -> tuple[int | None, str | None, str | None]:
    """``eval_captioning.py`` ``parse_llm_output`` of a reply (stripped): (rating, the judge's
    answer, its reasoning). Rating 1 when the answer's letter (before ``". "``) is the
    ground-truth answer's and the answer names exactly one of ``A.`` .. ``D.``; ``None`` for an
    empty reply (the reference's rating -1, which its statistics add up as -1)."""
    reply = reply.strip()
    if not reply:
        return None, None, None
    answer = reasoning = None
    for line in reply.split("\n"):
        line = line.strip()
        if "Reasoning" in line:
            reasoning = line.replace("Reasoning:", "").strip()
        if "Answer" in line:
            answer = line.replace("Answer:", "").strip()
    if answer is None:
        answer = reply
    named = sum(answer.count(prefix) for prefix in ("A.", "B.", "C.", "D."))
    right = answer.split(". ")[0] == mc_answer.split(". ")[0] and named == 1
    return int(right), answer, reasoning


def _read_captioning(reply: str, case: JudgeCase) -> tuple[str, int | None, str] | None:
    rating, _, _ = captioning_rating(reply, judge_reference(case)[1])
    if rating is None:  # an empty reply: the reference's rating -1, not asked again
        return UNPARSEABLE, None, ""
    return (JUDGED, case.true, "correct") if rating else (JUDGED, None, "incorrect")


def _correctness_judge(task: str) -> JudgeProtocol:
    script = "eval_multi-choice.py" if task == "multi_choice" else f"eval_{task}.py"
    return JudgeProtocol(
        name=f"tempcompass_{task}",
        reference=f"{REFERENCE} {script}, utils/eval_utils.py get_eval_result, prompt_templates.py",
        prompt=lambda case: correctness_prompt(task, *judge_reference(case), case.answer),
        read=read_correctness,
        max_asks=11,  # get_eval_result(maxtry=10): the first ask and 10 more
        **GPT35_JUDGE,
    )


#: The answer parsers, by name (the ``parser`` protocol setting, ``--parser``).
PARSERS: dict[str, AnswerParser] = {
    "tempcompass_multi_choice": parse_multi_choice,
    "tempcompass_yes_no": parse_yes_no,
    "tempcompass_caption_matching": parse_caption_matching,
    "tempcompass_captioning": parse_captioning,
}
#: The official judges, by the answer parser whose misses (or every answer) they read.
JUDGES: dict[str, JudgeProtocol] = {
    **{f"tempcompass_{task}": _correctness_judge(task) for task in CORRECTNESS},
    "tempcompass_captioning": JudgeProtocol(
        name="tempcompass_captioning",
        reference=f"{REFERENCE} eval_captioning.py (parse_llm_output), prompt_templates.py "
        "caption_evaluation_prompt",
        prompt=lambda case: captioning_prompt(case.answer, judge_reference(case)[0]),
        read=_read_captioning,
        max_asks=1,  # only a failed request is retried there, not a reply
        every_answer=True,
        **GPT35_JUDGE,
    ),
}
