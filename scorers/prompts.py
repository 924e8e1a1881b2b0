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
``temporalbench``
    TemporalBench's short QA question ("Which caption best describes this video?", ``A.`` /
    ``B.`` lines, "Answer with the option's letter ...").
``vinoground``
    Vinoground's text-score question (``vinoground_textscore.json``: the same header, options and
    instruction) followed by the line its LLM scripts append ("Please only output one English
    character.", ``eval/llava-onevision.py`` and lmms-eval's ``vinoground`` task).

Vinoground's video-score question (:func:`vinoground_video_question`) is asked about a video
made of a pair's two videos joined by two seconds of black (:mod:`foilkit.scorers.video.joined`):
which segment, the first or the second, a caption describes.
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
#: lmms-eval's ``vitatecs`` task (no system prompt, options on their own lines), TemporalBench's,
#: Vinoground's text-score question.
CHOICE_PROMPTS = ("vitatecs", "lmms-eval", "temporalbench", "vinoground")
#: TemporalBench's short QA question (``temporalbench_short_qa.json``: a header, ``A.``/``B.``
#: lines, an instruction).
TEMPORALBENCH_QUESTION = (
    "Which caption best describes this video?\n{options}\n"
    "Answer with the option's letter from the given choices directly."
)
#: What Vinoground's LLM scripts append to every question of its json files
#: (Vinoground's ``eval/llava-onevision.py`` at the commit its protocols cite; lmms-eval's
#: ``vinoground`` task).
VINOGROUND_SUFFIX = "\nPlease only output one English character."
#: Vinoground's text-score question (``vinoground_textscore.json``), with the scripts' suffix.
VINOGROUND_TEXT_QUESTION = (
    "Which caption best describes this video?\n{options}\n"
    "Answer with the option's letter from the given choices directly." + VINOGROUND_SUFFIX
)
#: Vinoground's video-score question (``vinoground_videoscore.json``) about a pair's joined video,
#: with the scripts' suffix; the answer ``A`` names the segment before the black frames.
VINOGROUND_VIDEO_QUESTION = (
    "Which video segment matches this caption? Note: The video contains two segments separated "
    "by a 2-second black frame.\nCaption: {caption}\n{options}\n"
    "Answer with the option's letter from the given choices directly." + VINOGROUND_SUFFIX
)
#: The seconds of black between the two videos of the video-score question's joined video (the
#: question says "2-second black frame").
VINOGROUND_GAP_SECONDS = 2.0
#: The video-score question's options: the joined video's segments, in the order shown.
VINOGROUND_SEGMENTS = ("First segment (before black frame)", "Second segment (after black frame)")
COUNTS = {2: "two", 3: "three", 4: "four", 5: "five"}


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
    return TEMPORALBENCH_QUESTION.format(options=_lettered(options))


def _lettered(options: Sequence[str]) -> str:
    return "\n".join(f"{letter}. {option}" for letter, option in zip(LETTERS, options))


def vinoground_question(options: Sequence[str]) -> str:
    """Vinoground's text-score question for ``options`` (captions) in the order given."""
    return VINOGROUND_TEXT_QUESTION.format(options=_lettered(options))


def vinoground_video_question(caption: str) -> str:
    """Vinoground's video-score question about ``caption``: which segment of the joined video
    (:data:`VINOGROUND_SEGMENTS`, answered ``A`` or ``B``) it describes."""
    return VINOGROUND_VIDEO_QUESTION.format(caption=caption, options=_lettered(VINOGROUND_SEGMENTS))


#: Each choice prompt's question template (``{options}``: the listed options), as run records
#: show it.
CHOICE_TEMPLATES = {
    "vitatecs": CHOICE_QUESTION,
    "lmms-eval": LMMS_EVAL_QUESTION,
    "temporalbench": TEMPORALBENCH_QUESTION,
    "vinoground": VINOGROUND_TEXT_QUESTION,
}


def question_text(prompt: str, options: Sequence[str]) -> str:
    """The choice question of the named ``prompt`` (:data:`CHOICE_PROMPTS`) for ``options`` in
    the order given."""
    questions = {
        "vitatecs": choice_question,
        "lmms-eval": lmms_eval_question,
        "temporalbench": temporalbench_question,
        "vinoground": vinoground_question,
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
