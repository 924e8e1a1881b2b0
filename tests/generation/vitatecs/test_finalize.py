"""Finalisation through the Python API: models are given, not loaded; statuses say why each
candidate went; the written files match."""

from __future__ import annotations

import json

import pytest
from openai_server import OpenAICompatibleServer

from foilkit.generation.llm import ChatClient, LLMSettings
from foilkit.generation.nli import NLIFilter, load_nli_model
from foilkit.generation.vitatecs.exemplars import ExemplarSets
from foilkit.generation.vitatecs.filter_model import AspectFilter
from foilkit.generation.vitatecs.finalize import finalize_candidates, write_dataset
from foilkit.generation.vitatecs.generate import Query, status_counts
from foilkit.generation.vitatecs.prompt import CounterfactualPrompt, load_aspects
from foilkit.generation.vitatecs.toxicity import ToxicityFilter


@pytest.fixture(scope="module")
def models(tiny_nli, biased_classifier, tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    nli = NLIFilter(
        load_nli_model(biased_classifier(tiny_nli, folder / "nli", "neutral")),
        policy="vitatecs",
        model_id="nli-neutral",
    )
    AspectFilter.from_nli(tiny_nli, device="cpu").save(folder / "filter")
    biased = biased_classifier(folder / "filter", folder / "direction", "direction")
    return nli, AspectFilter.load(biased, device="cpu")


def _queries(captions, aspects):
    return [
        Query(str(i), caption, aspect, "MSRVTT", f"video{i}.mp4")
        for i, caption in enumerate(captions)
        for aspect in aspects
    ]


def _finalize(server, models, queries, **options):
    nli, filter_model = models
    client = ChatClient(LLMSettings(model="tiny-chat", base_url=server.base_url))
    return finalize_candidates(
        queries,
        client=client,
        exemplars=ExemplarSets.load(),
        prompt=CounterfactualPrompt.load(),
        aspects=load_aspects(),
        nli=nli,
        filter_model=filter_model,
        progress=False,
        **options,
    )


def test_target_policy_toxicity_and_selection(tmp_path, models, responder, scripted_answers, nlp):
    captions = [*list(scripted_answers)[:4], "a man is talking about a car"]
    queries = _queries(captions, ["direction", "type"])

    def toxicity(texts):  # "closes" is rated toxic, to see the hook drop a row
        return [0.99 if "closes" in text else 0.0 for text in texts]

    with OpenAICompatibleServer(responder) as server:
        candidates = _finalize(
            server,
            models,
            queries,
            accept="target",
            nlp=nlp,
            toxicity=ToxicityFilter(toxicity, threshold=0.9, name="words"),
            seed=1,
            iteration=4,
        )
    by_query = {(c.query.caption, c.query.aspect): c for c in candidates}
    assert by_query[(captions[0], "direction")].status == "toxic"  # "a man closes the door"
    assert [by_query[(c, "direction")].status for c in captions[1:4]] == ["selected"] * 3
    assert {by_query[(c, "type")].status for c in captions[:4]} == {"other_aspect"}
    assert by_query[(captions[4], "direction")].status == "na"
    assert status_counts(candidates) == {"na": 2, "other_aspect": 4, "selected": 3, "toxic": 1}
    selected = [c for c in candidates if c.status == "selected"]
    assert [c.scores["diversity"]["signature"] for c in selected] == [
        "word:into>of+out",
        "word:slowly>quickly",
        "order",
    ]

    written = write_dataset(candidates, tmp_path / "out")
    assert written["rows"] == {"direction": 3}
    lines = (tmp_path / "out/annotations/Direction.jsonl").read_text().splitlines()
    assert [json.loads(line)["caption"] for line in lines] == captions[1:4]
    assert json.loads(lines[0]) == {
        "src_dataset": "MSRVTT",
        "video_name": "video1.mp4",
        "caption": captions[1],
        "counterfactual": scripted_answers[captions[1]],
        "aspect": "Direction",
    }
    import datasets

    table = datasets.Dataset.from_parquet(written["dataset"])
    record = json.loads(table[0]["foil_provenance"][0])
    assert record["filter_scores"]["toxicity"] == 0.0
    assert record["model_ids"] == {
        "generator": "tiny-chat",
        "nli": "nli-neutral",
        "filter": models[1].model_id,
        "toxicity": "words",
    }
    assert table["iteration"] == [4, 4, 4] and table["id"] == [
        "direction-1",
        "direction-2",
        "direction-3",
    ]


def test_one_row_per_caption_under_the_predicted_policy(models, responder, scripted_answers):
    captions = list(scripted_answers)[:3]
    with OpenAICompatibleServer(responder) as server:
        candidates = _finalize(
            server, models, _queries(captions, ["direction", "sequence", "type"])
        )
    # All nine are Direction by the filter's verdict; one per caption is kept.
    assert status_counts(candidates) == {"redundant": 6, "selected": 3}
    assert sorted(c.query.caption for c in candidates if c.status == "selected") == sorted(captions)


def test_nothing_selected_writes_no_dataset(tmp_path, models, responder):
    with OpenAICompatibleServer(responder) as server:
        candidates = _finalize(server, models, _queries(["a man is talking about a car"], ["type"]))
    assert write_dataset(candidates, tmp_path) == {"annotations": {}, "dataset": None, "rows": {}}
