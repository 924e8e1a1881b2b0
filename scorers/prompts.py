"""The questions video LLMs are asked, as chat messages any backend can send.

One place for the multiple-choice prompts, so the in-process model (which renders them with its
chat template) and a served one (which receives them as chat messages) ask the same question.
A prompt is a :class:`~foilkit.answers.ChoicePrompt` registered by name in a benchmark's folder
(the spec's ``prompts``: VITATECS' paper prompt ``vitatecs``, the default, with its system
prompt, and lmms-eval's ``lmms-eval``; TemporalBench's ``temporalbench``; Vinoground's
text-score question ``vinoground``), found through the registry (:func:`choice_prompt`). So are
the questions about one caption a mode or a row shape asks (the spec's ``questions``, by role:
:func:`caption_question`): entail mode's (VELOCITI's) and a pair row's about its two videos
joined into one (Vinoground's video-score question, :mod:`foilkit.scorers.video_question`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from foilkit.answers import LETTERS as LETTERS  # the option letters, for every backend
from foilkit.answers import CaptionQuestion, ChoicePrompt
from foilkit.scorers.parsers import declared, declared_tables

#: The prompt choice and generate modes ask when none is named: VITATECS' paper prompt.
DEFAULT_PROMPT = "vitatecs"
COUNTS = {2: "two", 3: "three", 4: "four", 5: "five"}


def choice_prompt(name: str) -> ChoicePrompt:
    """The choice prompt registered as ``name``; an unknown name is an error listing them."""
    prompt = declared("prompts", name)
    if prompt is None:
        raise ValueError(f"unknown prompt {name!r}; choose from {list(choice_prompt_names())}")
    return prompt


def choice_prompt_names() -> tuple[str, ...]:
    """Every choice prompt's name: the benchmarks' in registry order, the default first."""
    names = [name for table in declared_tables("prompts") for name in table]
    return tuple(dict.fromkeys([DEFAULT_PROMPT, *names]))


def caption_question(role: str) -> CaptionQuestion:
    """The question about one caption a benchmark asks in ``role``
    (:data:`~foilkit.answers.ENTAIL`, :data:`~foilkit.answers.JOINED_VIDEO`), the first
    declared in registry order; none is an error."""
    question = declared("questions", role)
    if question is None:
        raise ValueError(f"no registered benchmark declares a question for {role!r}")
    return question


def question_text(prompt: str, options: Sequence[str]) -> str:
    """The choice question of the named ``prompt`` for ``options`` in the order given."""
    return choice_prompt(prompt).question(options)


def system_prompt(prompt: str | None) -> str | None:
    """The system prompt of the choice prompt named ``prompt``; ``None`` where it has none or no
    prompt is named (entail mode asks its own question)."""
    return None if prompt is None else choice_prompt(prompt).system


def choice_messages(
    prompt: str | None, question: str, count: int | None, system_form: str = "parts"
) -> list[dict[str, Any]]:
    """The chat messages asking ``question`` about a video: the prompt's system message (the
    default prompt has one) for ``count`` options (none when ``count`` is ``None``: not a
    choice), then the user turn, the video before the question; the system turn in ``system_form``
    (:func:`fit_system_turn`)."""
    messages: list[dict[str, Any]] = []
    system = system_prompt(prompt) if count is not None else None
    if system is not None:
        system = system.format(count=COUNTS.get(count, str(count)))
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
