"""A port of TOMATO's prompt and categorized scores (yale-nlp/TOMATO@fe2025f), written from
reading ``src/generate_lib/construct_prompt.py``, the per-model ``generate_response`` functions
(``gt``), ``src/evaluate.py`` (one result file per reasoning type and demonstration type) and
``src/get_categorized_score.py``, to test foilkit's builder and metric against on the same inputs.

Input of the scores: parsed results as ``get_categorized_score.py`` reads them, ``{(reasoning
type, demonstration type): [{"id", "response", "gt"}, ...]}`` for one model at one frame count
(``response`` the parsed letter, ``""`` when nothing was parsed; ``gt`` the optionized true option,
``"C. 3"``). Output: ``Score / Count`` grouped as the script prints them: by reasoning type, by
demonstration type, and over all questions (``model``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd


def construct_prompt(question: str, options: list, num_frames: int) -> tuple:
    """``construct_prompt`` as published (its f-string kept byte for byte)."""
    all_choices = [f"{chr(65 + i)}" for i in range(len(options))]
    index2ans = {all_choices[i]: options[i] for i in range(len(options))}

    prompt = f"""You will be provided with {num_frames} separate frames uniformly sampled from a video, the frames are provided in chronological order of the video. Analyze these frames and provide the answer to the question about the video content. Answer the multiple-choice question about the video content. 

You must use these frames to answer the multiple-choice question; do not rely on any externel knowledge or commonsense. 

<question> 
{question} 
</question>

<options> 
{index2ans} 
</options>

Even if the information in these separate frames is not enough to answer the question, PLEASE TRY YOUR BEST TO GUESS AN ANSWER WHICH YOU THINK WOULD BE THE MOST POSSIBLE ONE BASED ON THE QUESTION. 

DO NOT GENERATE ANSWER SUCH AS 'NOT POSSIBLE TO DETERMINE.' 
"""  # noqa: E501, W291

    return prompt, all_choices, index2ans


def ground_truth(options: list, answer: int) -> str:
    """The ``gt`` a ``generate_response`` stores: the true option, optionized (``"C. 3"``)."""
    optionized_list = [f"{chr(65 + i)}. {option}" for i, option in enumerate(options)]
    return optionized_list[answer]


def get_single_score(result: dict[str, Any]) -> bool:
    response = result["response"]
    gt = result["gt"][0]
    return response == gt


def categorized_scores(
    results: dict[tuple[str, str], list[dict[str, Any]]],
) -> dict[str, dict[str, float]]:
    """The three tables ``get_categorized_score.py`` prints, for one model at one frame count:
    ``reasoning_type``, ``demonstration_type`` and ``model`` (over all questions), each
    ``name -> Score / Count``."""
    data = {}
    for (reason_type, demo_type), lines in results.items():
        scores = [get_single_score(line) for line in lines]
        data[(reason_type, demo_type, "16", "model")] = (sum(scores), len(scores))
    df = pd.DataFrame.from_dict(data, orient="index", columns=["Score", "Count"])
    df.index = pd.MultiIndex.from_tuples(
        df.index, names=["ReasonType", "DemoType", "NumFrame", "Model"]
    )
    out = {}
    for name, by in (
        ("reasoning_type", ["ReasonType", "Model"]),
        ("demonstration_type", ["DemoType", "Model"]),
        ("model", ["Model"]),
    ):
        grouped = df.groupby(by).agg({"Score": "sum", "Count": "sum"})
        ratio = grouped["Score"] / grouped["Count"]
        out[name] = {
            (key[0] if isinstance(key, tuple) else key): float(value)
            for key, value in ratio.items()
        }
    return out
