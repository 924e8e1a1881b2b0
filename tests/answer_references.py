"""Ports of the official answer-extraction code, line for line, for the parser fidelity tests.

The official functions cannot be imported: they sit in scripts that read files, call ChatGPT or
gpt-4o-mini when their rules fail, and (TOMATO) then pick a random letter. These ports keep
each rule exactly, in the reference's own data format (question strings, ``answer`` strings,
``all_choices``/``index2ans``), and stop where the reference would ask its LLM: they return
``(match_success, rating)`` with ``rating`` 0 on a failed match (TempCompass' ``--disable_llm``),
or TOMATO's parsed letter (``""`` where it would ask gpt-4o-mini).

Sources:
- lmms-eval 0.7.3 ``lmms_eval/tasks/vitatecs/utils.py``: ``format_question_and_answer``,
  ``process_option_for_matching``, ``vitatecs_process_results`` (the rules before its judge).
- llyx97/TempCompass@fe2025f ``eval_multi-choice.py``, ``eval_yes_no.py`` (``extract_pred``),
  ``eval_caption_matching.py`` (``eval_rule``).
- yale-nlp/TOMATO ``src/parse_result.py`` (``pre_parser``).
"""

from __future__ import annotations

import re


def vitatecs_lmms_eval(pred: str, caption: str, counterfactual: str, answer: str) -> tuple:
    """``vitatecs_process_results``' rules; ``answer`` is ``"(A) ..."`` or ``"(B) ..."``."""

    def process_option_for_matching(sent):
        if sent.endswith("."):
            sent = sent[:-1]
        return sent.lower()

    options = [process_option_for_matching(caption), process_option_for_matching(counterfactual)]
    rating = 0
    match_success = True
    if options[0] in pred.lower() and options[1] not in pred.lower():
        rating = 1
    elif options[1] in pred.lower() and options[0] not in pred.lower():
        rating = 0
    elif pred in ["A", "B"]:
        rating = 1 if pred == answer[1] else 0
    elif any(pred.startswith(prefix) for prefix in ["A.", "B."]):
        rating = 1 if pred.split(".")[0] == answer[1] else 0
    elif any(pred.startswith(prefix) for prefix in ["A)", "B)"]):
        rating = 1 if pred.split(")")[0] == answer[1] else 0
    elif any(pred.startswith(prefix) for prefix in ["(A)", "(B)"]):
        rating = 1 if pred.split(")")[0][1] == answer[1] else 0
    else:
        match_success = False
    return match_success, rating


def tempcompass_multi_choice(prediction: str | None, answer: str) -> tuple:
    """``eval_multi-choice.py`` with ``--disable_llm``; ``answer`` is ``"A. text"``."""
    if prediction is None:
        return False, 0
    prediction = prediction.replace("</s>", "").strip()
    match_success = True
    if prediction == answer:
        rating = 1
    elif prediction in ["A", "B", "C", "D"]:
        rating = 1 if prediction == answer[0] else 0
    elif any(prediction.startswith(prefix) for prefix in ["A.", "B.", "C.", "D."]):
        rating = 1 if prediction.split(".")[0] == answer[0] else 0
    elif any(prediction.startswith(prefix) for prefix in ["A)", "B)", "C)", "D)"]):
        rating = 1 if prediction.split(")")[0] == answer[0] else 0
    else:
        match_success, rating = False, 0
    return match_success, rating


def tempcompass_yes_no(prediction: str | None, answer: str) -> tuple:
    """``eval_yes_no.py`` with ``--disable_llm``; ``answer`` is ``"yes"`` or ``"no"``."""

    def extract_pred(video_llm_output):
        video_llm_output = video_llm_output.lower()
        if video_llm_output.startswith("yes"):
            return "yes"
        elif video_llm_output.startswith("no"):
            return "no"
        else:
            return False

    if prediction is None:
        return False, 0
    prediction = prediction.replace("</s>", "").strip()
    yes_no_pred = extract_pred(prediction)
    if yes_no_pred:
        return True, 1 if yes_no_pred == answer else 0
    return False, 0


def tempcompass_caption_matching(prediction: str | None, question: str, answer: str) -> tuple:
    """``eval_caption_matching.py`` with ``--disable_llm``; ``question`` holds the option lines
    (``"Sentence A: text"``) after its first line, ``answer`` is one of them."""

    def eval_rule(video_llm_output, question, answer):
        option_strs = question.split("\n")[1:]
        option_sents = [opt.split(": ")[1] for opt in option_strs]
        option_inds = [opt.split(": ")[0] for opt in option_strs] + [
            opt.split(": ")[0]
            .replace("Sentence ", "")
            .replace("Option ", "")
            .replace("Caption ", "")
            for opt in option_strs
        ]
        video_llm_pred = None
        for option_str in option_strs:
            if option_str == video_llm_output:
                video_llm_pred = option_str
        for option_sent in option_sents:
            if option_sent == video_llm_output or (
                ") " in video_llm_output and option_sent == video_llm_output.split(") ")[1]
            ):
                video_llm_pred = option_sent
        for option_ind in option_inds:
            if option_ind == video_llm_output or option_ind == video_llm_output.replace(".", ""):
                video_llm_pred = option_ind
        if video_llm_pred is None:
            return "fail"
        return (
            1
            if video_llm_pred == answer
            or video_llm_pred == answer.split(":")[0]
            or video_llm_pred == answer.split(": ")[1]
            or video_llm_pred == answer.split(": ")[0].split()[1]
            else 0
        )

    if prediction is None:
        return False, 0
    prediction = prediction.replace("</s>", "").strip()
    rating = eval_rule(prediction, question, answer)
    if rating != "fail":
        return True, rating
    return False, 0


def tomato_pre_parser(response: str, all_choices: list, index2ans: dict) -> str:
    """``pre_parser``: the parsed letter, ``""`` where TOMATO goes on to gpt-4o-mini."""
    parsed_response = ""
    response = response.strip()
    full_choices = [f"{k}: {v}" for k, v in index2ans.items()]
    pattern = r"^Answer is:?[\(]?([A-Fa-f])[\)]?$"
    match = re.match(pattern, response)
    if len(response) == 1 and response.upper() in all_choices:
        parsed_response = response.upper()
    elif response.upper() in full_choices:
        parsed_response = response[0].upper()
    elif match:
        parsed_response = match.group(1).upper()
    return parsed_response
