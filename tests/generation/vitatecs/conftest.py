"""Fixtures of the VITATECS generation tests: tiny models, scripted LLM answers, a caption file."""

from __future__ import annotations

import json
import re

import pytest

from foilkit.synthetic.models import tiny_model_path

# What the scripted LLM answers for each query caption; any other caption gets "NA".
SCRIPTED_ANSWERS = {
    "a man opens the door of a car": "a man closes the door of a car",
    "a woman walks into a shop": "a woman walks out of a shop",
    "a boy runs slowly on a track": "a boy runs quickly on a track",
    "a girl jumps and then sits down": "a girl sits down and then jumps",
    "a dog chases a cat in a garden": "a cat chases a dog in a garden",
    "a man hits the ball with his head": "a man hits the ball with his foot",
    "a chef cuts vegetables in a kitchen": "a chef washes vegetables in a kitchen",
    "a woman lifts a heavy box": "Modified Description: a woman drops a heavy box.",
}
NA_CAPTIONS = ("a man is talking about a car", "the logo of a company is displayed")

_QUERY = re.compile(r"Original Description: (.*)\.\nModified Description:\s*$", re.DOTALL)


def _query_caption(prompt: str) -> str:
    return _QUERY.search(prompt).group(1).rsplit("Original Description: ", 1)[-1]


@pytest.fixture
def query_caption():
    """prompt -> the query caption of a rendered VITATECS prompt (the last one it shows)."""
    return _query_caption


@pytest.fixture
def scripted_answers():
    return dict(SCRIPTED_ANSWERS)


@pytest.fixture
def responder():
    """The OpenAI-compatible server's responder: the scripted answer (else NA), ``n`` times."""

    def answer(body: dict) -> list[str]:
        caption = _query_caption(body["messages"][-1]["content"])
        return [SCRIPTED_ANSWERS.get(caption, "NA")] * body.get("n", 1)

    return answer


@pytest.fixture(scope="session")
def tiny_nli() -> str:
    return str(tiny_model_path("nli"))


@pytest.fixture
def captions_file(tmp_path):
    """Captions in the VITATECS layout (caption, video_name, src_dataset), scripted + N/A ones."""
    path = tmp_path / "captions.jsonl"
    captions = [*SCRIPTED_ANSWERS, *NA_CAPTIONS]
    with open(path, "w") as handle:
        for index, caption in enumerate(captions):
            source = "MSRVTT" if index % 2 == 0 else "VATEX"
            record = {"caption": caption, "video_name": f"video{index}.mp4", "src_dataset": source}
            handle.write(json.dumps(record) + "\n")
    return path


@pytest.fixture(scope="session")
def biased_classifier():
    """Make a copy of a sequence classifier that always predicts one class (with ~certainty):
    the way to give a filter a known verdict in a test."""

    def make(source, target, label: str, strength: float = 20.0):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        model = AutoModelForSequenceClassification.from_pretrained(source)
        head = [m for m in model.modules() if isinstance(m, torch.nn.Linear)][-1]
        index = model.config.label2id[label]
        with torch.no_grad():
            head.weight.zero_()
            head.bias.fill_(0.0)
            head.bias[index] = strength
        model.save_pretrained(target)
        AutoTokenizer.from_pretrained(source).save_pretrained(target)
        return str(target)

    return make
