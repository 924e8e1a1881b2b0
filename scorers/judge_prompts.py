"""The official LLM judges' prompts and how their replies are read, as pure functions.

Three official protocols ask an LLM about a video LLM's answer (see :mod:`foilkit.scorers.judge`
for when foilkit does):

* TempCompass (``llyx97/TempCompass@e1b4631``): ``eval_multi-choice.py``, ``eval_yes_no.py`` and
  ``eval_caption_matching.py`` ask gpt-3.5-turbo-1106 whether an answer their rules cannot match
  is correct, given the question and the ground-truth answer (``prompt_templates.py``'s
  ``*_evaluation_prompt``; ``utils/eval_utils.py`` ``get_eval_result`` reads the reply with
  ``llm_output_to_rating``); ``eval_captioning.py`` gives it every generated caption and the
  video's multi-choice question to answer (``caption_evaluation_prompt``, ``parse_llm_output``).
* lmms-eval's ``vitatecs`` task (``lmms_eval/tasks/vitatecs/utils.py``
  ``vitatecs_process_results``): the same kind of correctness question, its own wording.
* TOMATO (``yale-nlp/TOMATO@fe2025f``, ``src/parse_result.py`` ``gpt_parser``): gpt-4o-mini
  extracts the option letter from an answer ``pre_parser`` cannot read.

The prompt texts below are the published ones, character for character: a judge is only the
official one if it is asked the same question.
"""

from __future__ import annotations

from collections.abc import Sequence

#: TempCompass ``utils/eval_utils.py`` ``get_llm_output``'s system prompt (and lmms-eval's).
QA_SYSTEM = "You are an AI assistant for question answering."

_CORRECTNESS = (
    "\nYou will receive {what}, the ground-truth answer and the prediction from a question "
    "answering (QA) model. Your task is to determine whether QA model prediction is correct, "
    "based on the question and ground-truth answer. If the prediction is correct, respond "
    '"Correct". If the prediction is incorrect, respond "Incorrect".\n'
)
#: TempCompass ``prompt_templates.py``: ``multi_choice_evaluation_prompt``,
#: ``yes_no_evaluation_prompt``, ``caption_matching_evaluation_prompt``, with the heading each
#: ``eval_*.py`` puts before the question.
TEMPCOMPASS_CORRECTNESS = {
    "multi_choice": (_CORRECTNESS.format(what="a multi-choice question"), "Multi-Choice Question"),
    "yes_no": (_CORRECTNESS.format(what="a Yes/No question"), "Yes/No Question"),
    "caption_matching": (
        _CORRECTNESS.format(what="a caption matching question"),
        "Caption Matching Question",
    ),
}
#: TempCompass ``prompt_templates.py`` ``caption_evaluation_prompt`` (its typos included).
TEMPCOMPASS_CAPTIONING = """
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
#: lmms-eval ``vitatecs_process_results``' ``base_prompt`` (one line, a final space).
LMMS_EVAL_VITATECS_CORRECTNESS = (
    "You will receive a caption matching question, the ground-truth answer and the prediction "
    "from a question answering (QA) model. Your task is to determine whether QA model "
    "prediction is correct, based on the question and ground-truth answer. If the prediction "
    'is correct, respond "Correct". If the prediction is incorrect, respond "Incorrect". '
)
#: TOMATO ``gpt_parser``'s prompt (its indentation and trailing spaces are the published ones).
TOMATO_EXTRACTION = (
    "You are given a response, a list of multiple-choice options, and a index2answer mapping. "
    "You are required to extract the letter option from the GPT. \n"
    "    \n"
    "    response: {response}\n"
    "\n"
    "    all_choices: {all_choices}\n"
    "\n"
    "    index2answer: {index2ans}\n"
    "\n"
    "Only output the single parsed letter from the response. No other texts are needed. \n"
    "\n"
    "If you think no options can match the index2answer dictionary, randomly select one "
    "letter. \n"
    "\n"
    "Your extracted letter is: \n"
)


def tempcompass_clean(answer: str) -> str:
    """TempCompass' scripts drop ``</s>`` and surrounding whitespace from a prediction."""
    return answer.replace("</s>", "").strip()


def tempcompass_correctness_prompt(task: str, question: str, answer: str, prediction: str) -> str:
    """The user turn ``eval_<task>.py`` sends its judge about ``prediction`` (cleaned)."""
    base, heading = TEMPCOMPASS_CORRECTNESS[task]
    return (
        f"{base}\n{heading}:\n{question}\nGround-Truth Answer: {answer}\n"
        f"Model Prediction: {tempcompass_clean(prediction)}"
    )


def tempcompass_captioning_prompt(caption: str, mc_question: str) -> str:
    """The user turn ``eval_captioning.py`` sends its judge: the caption (cleaned) as the video
    description, then the multi-choice question to answer from it."""
    return (
        f"{TEMPCOMPASS_CAPTIONING}\nVideo Description:{tempcompass_clean(caption)}\n"
        f"Multi-Choice Question:\n{mc_question}\n"
    )


def lmms_eval_vitatecs_question(options: Sequence[str]) -> str:
    """lmms-eval's ``format_question_and_answer`` question for ``options`` in the order shown
    (``process_option_for_question``: a full stop added, then ``capitalize``)."""
    listed = "".join(
        f" \n({letter}) {_capitalised(option)}" for letter, option in zip("ABCDEFGHIJ", options)
    )
    return f"Which of the following best describes the content of the video:{listed}"


def lmms_eval_vitatecs_answer(options: Sequence[str], true: int) -> str:
    """lmms-eval's ground-truth answer: ``"(B) " + option_b`` for the true option shown second."""
    return f"({'ABCDEFGHIJ'[true]}) {_capitalised(options[true])}"


def _capitalised(option: str) -> str:
    return (option if option.endswith(".") else option + ".").capitalize()


def lmms_eval_vitatecs_prompt(options: Sequence[str], true: int, prediction: str) -> str:
    """The user turn lmms-eval's ``vitatecs`` task sends its judge about ``prediction`` (as
    generated: lmms-eval does not strip it)."""
    return (
        f"{LMMS_EVAL_VITATECS_CORRECTNESS}\n\nCaption Matching Question: "
        f"{lmms_eval_vitatecs_question(options)}\n\nGround-Truth Answer: "
        f"{lmms_eval_vitatecs_answer(options, true)}\n\nModel Prediction: {prediction}"
    )


def tomato_prompt(response: str, letters: Sequence[str], options: Sequence[str]) -> str:
    """The prompt TOMATO's ``gpt_parser`` sends: ``all_choices`` and ``index2ans`` written as
    Python writes a list and a dict in an f-string."""
    return TOMATO_EXTRACTION.format(
        response=response,
        all_choices=list(letters),
        index2ans=dict(zip(letters, options)),
    )


def correctness_rating(reply: str) -> int | None:
    """``llm_output_to_rating`` (TempCompass and lmms-eval) of a reply (stripped, as their
    ``get_llm_output`` strips it): 1 ``Correct``, 0 ``Incorrect``; ``None`` where the reference's
    assertion fails (neither word), which makes it ask again."""
    reply = reply.strip()
    if "Correct" not in reply and "Incorrect" not in reply:
        return None
    if reply.startswith("Correct"):
        return 1
    if reply.startswith("Incorrect"):
        return 0
    return 1 if "Incorrect" not in reply else 0


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


def tomato_letter(reply: str, letters: Sequence[str]) -> str | None:
    """TOMATO's check of ``gpt_parser``'s reply: the reply, as returned, is one of the letters
    (``None``: ask again)."""
    return reply if reply in letters else None
