"""The questions video LLMs are asked, as chat messages any backend can send.

One place for the multiple-choice prompts, so the in-process model (which renders them with its
chat template) and a served one (which receives them as chat messages) ask the same question:

``vitatecs``
    VITATECS' paper, Table 11: a system prompt ("You are given a short video clip and two
    sentences. ..."), then "Which of the following best describes the content of the video:
    (A) ... (B) ... Respond with a single letter (A or B)." after the video.
``lmms-eval``
    lmms-eval's ``vitatecs`` task (``lmms_eval/tasks/vitatecs/utils.py``): no system prompt;
    options on their own lines, capitalised with a full stop; "Please response with a single
    letter".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

LETTERS = "ABCDEFGHIJ"
CHOICE_SYSTEM = (
    "You are given a short video clip and {count} sentences. "
    "Select the sentence that best describes the content of the video."
)
CHOICE_QUESTION = (
    "Which of the following best describes the content of the video: {options} "
    "Respond with a single letter ({letters})."
)
LMMS_EVAL_QUESTION = (
    "Which of the following best describes the content of the video:{options}\n"
    "Please response with a single letter ({letters}):"
)
#: Choice prompts by name: VITATECS' paper (Table 11: system prompt, options inline) and
#: lmms-eval's ``vitatecs`` task (no system prompt, options on their own lines), TemporalBench's.
CHOICE_PROMPTS = ("vitatecs", "lmms-eval", "temporalbench")
#: TemporalBench's short QA question (``temporalbench_short_qa.json``: a header, ``A.``/``B.``
#: lines, an instruction).
TEMPORALBENCH_QUESTION = (
    "Which caption best describes this video?\n{options}\n"
    "Answer with the option's letter from the given choices directly."
)
COUNTS = {2: "two", 3: "three", 4: "four", 5: "five"}
#: Each named choice prompt's question template (what a run record says is asked).
NAMED_QUESTIONS = {
    "vitatecs": CHOICE_QUESTION,
    "lmms-eval": LMMS_EVAL_QUESTION,
    "temporalbench": TEMPORALBENCH_QUESTION,
}


def _spoken(letters: str) -> str:
    return letters[0] if len(letters) == 1 else ", ".join(letters[:-1]) + f" or {letters[-1]}"


def choice_question(options: Sequence[str]) -> str:
    """VITATECS' multiple-choice question for ``options`` in the order given."""
    letters = LETTERS[: len(options)]
    listed = " ".join(f"({letter}) {option}" for letter, option in zip(letters, options))
    return CHOICE_QUESTION.format(options=listed, letters=_spoken(letters))


def lmms_eval_question(options: Sequence[str]) -> str:
    """lmms-eval's VITATECS question (``format_question_and_answer`` + its ``post_prompt``) for
    ``options`` in the order given; each option ends with a full stop and is ``capitalize``d."""
    letters = LETTERS[: len(options)]
    written = [
        (option if option.endswith(".") else option + ".").capitalize() for option in options
    ]
    listed = "".join(f" \n({letter}) {option}" for letter, option in zip(letters, written))
    return LMMS_EVAL_QUESTION.format(options=listed, letters=_spoken(letters))


def temporalbench_question(options: Sequence[str]) -> str:
    """TemporalBench's published question for ``options`` in the order given."""
    listed = "\n".join(f"{letter}. {option}" for letter, option in zip(LETTERS, options))
    return TEMPORALBENCH_QUESTION.format(options=listed)


def question_text(prompt: str, options: Sequence[str]) -> str:
    """The choice question of the named ``prompt`` (:data:`CHOICE_PROMPTS`) for ``options`` in
    the order given."""
    questions = {
        "vitatecs": choice_question,
        "lmms-eval": lmms_eval_question,
        "temporalbench": temporalbench_question,
    }
    return questions[prompt](options)


def choice_messages(
    prompt: str, question: str, count: int | None, system_form: str = "parts"
) -> list[dict[str, Any]]:
    """The chat messages asking ``question`` about a video: the ``vitatecs`` prompt's system
    message for ``count`` options (none when ``count`` is ``None``: not a choice), then the
    user turn, the video before the question; the system turn in ``system_form``
    (:func:`fit_system_turn`)."""
    messages: list[dict[str, Any]] = []
    if count is not None and prompt == "vitatecs":
        system = CHOICE_SYSTEM.format(count=COUNTS.get(count, str(count)))
        messages.append({"role": "system", "content": [{"type": "text", "text": system}]})
    messages.append(
        {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]}
    )
    return fit_system_turn(messages, system_form)


def fit_system_turn(messages: list[dict[str, Any]], system_form: str) -> list[dict[str, Any]]:
    """``messages`` (a system turn of text parts, if any, first) in the form a chat template
    writes a system prompt as text (``SYSTEM_FORMS`` of the video LLM support module): ``parts``
    unchanged; ``string``, the system turn's content one string (a template that would print a
    list as its repr); ``user``, no system turn but its text opening the user turn's text (a
    template without a system role)."""
    if system_form == "parts" or not messages or messages[0]["role"] != "system":
        return messages
    system = "\n".join(part["text"] for part in messages[0]["content"] if part["type"] == "text")
    if system_form == "string":
        return [{"role": "system", "content": system}, *messages[1:]]
    user, *rest = messages[1:]
    content = list(user["content"])
    at = next(i for i, part in enumerate(content) if part["type"] == "text")
    content[at] = {**content[at], "text": f"{system}\n{content[at]['text']}"}
    return [{**user, "content": content}, *rest]


#: What a run asks the rows that carry their own question (TempCompass', TOMATO's ``prompt``):
#: that question as published, in the chat template, with no system prompt of foilkit's.
OWN_QUESTION = "each row's own question (its 'prompt' column), with no system prompt"
#: How many of a run's rows ask their own question: ``none``, ``some``, ``all``.
OWN_QUESTIONS = ("none", "some", "all")
#: An adapter record's fields that describe its own question (what a row's question replaces).
_ADAPTER_QUESTION_FIELDS = ("prompt", "prompt_name", "system_prompt", "system_form", "answers")


def own_questions(asked: int, rows: int) -> str:
    """:data:`OWN_QUESTIONS` entry for ``asked`` rows of ``rows`` asking their own question."""
    return "none" if asked == 0 else "all" if asked == rows else "some"


def asked_record(record: dict[str, Any], own: str) -> dict[str, Any]:
    """A question-asking adapter's record (its ``describe()``, naming its own question) saying
    what the rows were really asked: unchanged where ``own`` is ``none``; where ``all`` rows ask
    their own question, that (:data:`OWN_QUESTION`) instead of the adapter's question, its name
    and system prompt (asked of no row); where ``some`` do, the adapter's question for the rest
    and ``row_questions`` for those."""
    if own not in OWN_QUESTIONS:
        raise ValueError(f"own questions must be one of {OWN_QUESTIONS}, got {own!r}")
    if own == "none":
        return record
    if own == "some":
        return {**record, "row_questions": f"rows with a question are asked {OWN_QUESTION}"}
    kept = {key: value for key, value in record.items() if key not in _ADAPTER_QUESTION_FIELDS}
    return {**kept, "prompt": OWN_QUESTION}
