"""A question-asking adapter's record says what the rows were asked: its own question where
no row carries one, each row's own question (TempCompass, TOMATO) where every row does."""

from __future__ import annotations

import pytest

from foilkit.builders.vitatecs.answers import CHOICE_QUESTION, CHOICE_SYSTEM
from foilkit.scorers.prompts import OWN_QUESTION, asked_record, own_questions

VITATECS = {
    "adapter": "video-llm",
    "mode": "choice",
    "prompt": CHOICE_QUESTION,
    "prompt_name": "vitatecs",
    "system_prompt": CHOICE_SYSTEM,
    "system_form": "parts",
}


def test_every_row_asking_its_own_question_names_no_adapter_question():
    record = asked_record(VITATECS, own_questions(3, 3))
    assert record == {"adapter": "video-llm", "mode": "choice", "prompt": OWN_QUESTION}


def test_some_rows_asking_their_own_question_keep_the_adapters_for_the_rest():
    record = asked_record(VITATECS, own_questions(1, 3))
    assert {k: v for k, v in record.items() if k != "row_questions"} == VITATECS
    assert OWN_QUESTION in record["row_questions"]


def test_no_row_asking_its_own_question_leaves_the_record_as_it_is():
    assert asked_record(VITATECS, own_questions(0, 3)) == VITATECS
    with pytest.raises(ValueError, match="'every'"):
        asked_record(VITATECS, "every")


def test_a_served_video_llm_records_the_named_question_it_asks():
    """``--backend openai --prompt temporalbench`` asks TemporalBench's question; its record said
    lmms-eval's."""
    from foilkit.builders.temporalbench.answers import TEMPORALBENCH_QUESTION
    from foilkit.scorers.openai_client import ServerBackend
    from foilkit.scorers.served import ServedVideoLLM

    server = ServerBackend(base_url="http://127.0.0.1:9/v1")
    served = ServedVideoLLM("served", server=server, mode="choice", prompt="temporalbench")
    assert served.describe()["prompt"] == TEMPORALBENCH_QUESTION
    assert served.describe(own_questions="all")["prompt"] == OWN_QUESTION
