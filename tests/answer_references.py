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
- llyx97/TempCompass@e1b4631 ``eval_multi-choice.py``, ``eval_yes_no.py`` (``extract_pred``),
  ``eval_caption_matching.py`` (``eval_rule``).
- yale-nlp/TOMATO@fe2025f ``src/parse_result.py`` (``pre_parser``).
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


# --- the official LLM judges (ports: how each script builds its judge's request and reads it) ---

#: TempCompass prompt_templates.py (llyx97/TempCompass@e1b4631), as published.
TEMPCOMPASS_JUDGE_PROMPTS = {
    task: f"""
You will receive {what}, the ground-truth answer and the prediction from a question answering (QA) model. Your task is to determine whether QA model prediction is correct, based on the question and ground-truth answer. If the prediction is correct, respond "Correct". If the prediction is incorrect, respond "Incorrect".
"""  # noqa: E501
    for task, what in (
        ("multi-choice", "a multi-choice question"),
        ("yes_no", "a Yes/No question"),
        ("caption_matching", "a caption matching question"),
    )
}
TEMPCOMPASS_JUDGE_HEADINGS = {
    "multi-choice": "Multi-Choice Question",
    "yes_no": "Yes/No Question",
    "caption_matching": "Caption Matching Question",
}


def tempcompass_judge_request(task: str, pred: dict) -> dict:
    """eval_<task>.py + utils/eval_utils.py get_llm_output: the request body for a prediction
    its rules fail to match (``pred``: question, answer, prediction)."""
    prediction = pred["prediction"].replace("</s>", "").strip()
    base, heading = TEMPCOMPASS_JUDGE_PROMPTS[task], TEMPCOMPASS_JUDGE_HEADINGS[task]
    prompt = f"""{base}\n{heading}:\n{pred["question"]}\nGround-Truth Answer: {pred["answer"]}\nModel Prediction: {prediction}"""  # noqa: E501
    return {
        "max_tokens": 128,
        "model": "gpt-3.5-turbo-1106",
        "temperature": 1.0,
        "top_p": 1,
        "presence_penalty": 1,
        "messages": [
            {"role": "system", "content": "You are an AI assistant for question answering."},
            {"role": "user", "content": prompt},
        ],
    }


def tempcompass_captioning_request(caption: str, mc_question: dict, base_prompt: str) -> dict:
    """eval_captioning.py main + get_llm_output: the judge's request about one caption."""
    prediction = caption.replace("</s>", "").strip()
    prompt = f"""{base_prompt}\nVideo Description:{prediction}\nMulti-Choice Question:\n{mc_question["question"]}\n"""  # noqa: E501
    body = tempcompass_judge_request("yes_no", {"question": "", "answer": "", "prediction": ""})
    body["messages"][1]["content"] = prompt
    return body


def llm_output_to_rating(llm_output: str) -> int:
    """utils/eval_utils.py llm_output_to_rating (raises where the reference asserts)."""
    assert "Correct" in llm_output or "Incorrect" in llm_output
    if llm_output.startswith("Correct"):
        rating = 1
    elif llm_output.startswith("Incorrect"):
        rating = 0
    elif ("Correct" in llm_output) and ("Incorrect" not in llm_output):
        rating = 1
    elif "Incorrect" in llm_output:
        rating = 0
    return rating


def get_eval_result(replies: list, maxtry: int = 10) -> tuple:
    """utils/eval_utils.py get_eval_result over a judge's successive replies (stripped, as
    get_llm_output strips them): (last reply, rating, replies used)."""
    llm_output, used = None, 0
    while True:
        try:
            llm_output = replies[used].strip()
            used += 1
            return llm_output, llm_output_to_rating(llm_output), used
        except AssertionError:
            if maxtry <= 0:
                return llm_output, 0, used
            maxtry -= 1


def captioning_parse_llm_output(llm_output: str, gt_answer: str) -> dict:
    """eval_captioning.py parse_llm_output."""
    if llm_output == "invalid_request_error" or not llm_output:
        return {"rating": -1, "chatgpt-answer": None, "chatgpt-reasoning": None}
    eval_result = {}
    for line in llm_output.split("\n"):
        line = line.strip()
        if "Reasoning" in line:
            eval_result["chatgpt-reasoning"] = line.replace("Reasoning:", "").strip()
        if "Answer" in line:
            eval_result["chatgpt-answer"] = line.replace("Answer:", "").strip()
    if "chatgpt-answer" not in eval_result:
        eval_result["chatgpt-answer"] = llm_output
    if "chatgpt-reasoning" not in eval_result:
        eval_result["chatgpt-reasoning"] = None
    answer_counts = sum(
        eval_result["chatgpt-answer"].count(prefix) for prefix in ["A.", "B.", "C.", "D."]
    )
    if (
        eval_result["chatgpt-answer"].split(". ")[0] == gt_answer.split(". ")[0]
        and answer_counts == 1
    ):
        eval_result["rating"] = 1
    else:
        eval_result["rating"] = 0
    return eval_result


def tomato_gpt_parser_request(response: str, all_choices: list, index2ans: dict) -> dict:
    """TOMATO src/parse_result.py gpt_parser (yale-nlp/TOMATO@fe2025f): its request's params."""
    prompt = f"""You are given a response, a list of multiple-choice options, and a index2answer mapping. You are required to extract the letter option from the GPT. 
    
    response: {response}

    all_choices: {all_choices}

    index2answer: {index2ans}

Only output the single parsed letter from the response. No other texts are needed. 

If you think no options can match the index2answer dictionary, randomly select one letter. 

Your extracted letter is: 
"""  # noqa: E501, W291, W293
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": 16,
        "temperature": 0.0,
    }


def tomato_parse_with_gpt(replies: list, all_choices: list, max_iter: int = 5) -> tuple:
    """TOMATO parse_result's loop over gpt_parser's successive replies (its random pick left
    out: ``None``): (letter, replies used)."""
    for used, candidate in enumerate(replies[:max_iter], 1):
        if candidate in all_choices:
            return candidate, used
    return None, min(len(replies), max_iter)
