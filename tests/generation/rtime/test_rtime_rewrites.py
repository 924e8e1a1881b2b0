"""Step 3: rewrites from the scripted LLM, judged with the real MiniLM model and spaCy lemmas."""

from __future__ import annotations

import json
import random

import pytest
from foilkit.generation.llm import LLMResponseError
from foilkit.generation.rtime.prompt_templates import PromptTemplate, prompt_hash, template_hash
from foilkit.generation.rtime.replies import ReplyFormatError
from foilkit.generation.rtime.rewrites import (
    PROVENANCE_COLUMN,
    REJECTED_COLUMN,
    REWRITES_COLUMN,
    RewriteFilter,
    plot_similarity,
    rewrite_captions,
    rewrite_columns,
    similarity_report,
)
from foilkit.generation.rtime.temporal_words import TemporalLexicon
from foilkit.generation.similarity import pairwise_cosines

DOOR = "A man opens the door and then walks into the room."
CUP = "A woman picks up a cup and drinks from it."
SHOES = "A boy takes off his shoes before entering the house."
CAPTIONS = [("door-1", DOOR), ("cup-1", CUP), ("shoes-1", SHOES)]


@pytest.fixture
def rewrite_filter(sentence_embedder, tokenize) -> RewriteFilter:
    return RewriteFilter(
        sentence_embedder, 0.6, TemporalLexicon.load(), tokenize, sentence_model="all-MiniLM-L6-v2"
    )


@pytest.fixture
def results(llm_server, chat_client, rewrite_filter):
    server = llm_server()
    return server, rewrite_captions(chat_client(server), CAPTIONS, rewrite_filter, count=9)


@pytest.mark.parametrize("name", ["expand_activities", "enrich_activity", "rewrite_caption"])
def test_every_packaged_prompt_renders(name: str) -> None:
    template = PromptTemplate.load(name)
    values = {field: f"<{field}>" for field in template.fields}
    messages = template.render(**values)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert all(f"<{field}>" in messages[-1]["content"] for field in template.fields)
    assert "RTime" in template.source and len(template_hash(template)) == 64
    assert prompt_hash(messages) == prompt_hash(template.render(**values))


def test_the_rewrite_prompt_asks_for_the_count_and_keeps_time() -> None:
    (system, user) = PromptTemplate.load("rewrite_caption").render(caption=DOOR, count=9)
    assert f"Description: {DOOR}" in user["content"]
    assert "into 9 different sentences" in user["content"]
    assert "order in which things happen" in system["content"]


def test_prompt_files_are_checked(tmp_path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("fields: [caption]\nmessages:\n  - {role: user, content: 'Say {caption} {n}'}")
    wrong_fields = r"mine\.yaml: 'fields' \['caption'\] differ .* \['caption', 'n'\]"
    with pytest.raises(ValueError, match=wrong_fields):
        PromptTemplate.load(path)
    with pytest.raises(FileNotFoundError, match="packaged prompts: .*'rewrite_caption'"):
        PromptTemplate.load("no_such_prompt")
    with pytest.raises(KeyError, match=r"needs field\(s\) \['count'\]"):
        PromptTemplate.load("rewrite_caption").render(caption="x")


def test_pairwise_cosines_encode_each_text_once(sentence_embedder) -> None:
    encoded: list[str] = []

    class Counting:
        def encode(self, texts, **options):
            encoded.extend(texts)
            return sentence_embedder.encode(texts, **options)

    cosines = pairwise_cosines(Counting(), [(DOOR, DOOR), (DOOR, CUP), (CUP, DOOR)])
    assert sorted(encoded) == sorted([DOOR, CUP])
    assert cosines[0] == pytest.approx(1.0) and cosines[1] == pytest.approx(cosines[2])
    assert cosines[1] < 0.6


def test_rewrites_are_judged_for_similarity_and_time(results) -> None:
    _, (door, cup, shoes) = results
    verdicts = {rewrite.text: rewrite.reasons for rewrite in door.rewrites}
    # the repeat of the caption is no candidate; numbering is gone
    assert DOOR not in verdicts and len(verdicts) == 6
    assert [r.text for r in door.accepted] == [
        "A man opens the door, then he walks into the room.",
        "After opening the door, the man then enters the room.",
        "The door is opened by a man, who then steps into the room.",
    ]
    assert verdicts["A man opens the door, walking into the room."] == ("drops 'sequence' (then)",)
    closes = verdicts["A man closes the door and then walks into the room."]
    assert "reverses 'open' into 'close' (close/VERB)" in closes
    assert not any(reason.startswith("similarity") for reason in closes)  # similar, yet reversed
    apples = verdicts["Bright red apples are stacked in a wooden crate at the market."]
    assert apples[0].startswith("similarity") and "< 0.6" in apples[0]
    assert [r.text for r in cup.rejected] == ["A woman puts down a cup and drinks from it."]
    assert len(shoes.accepted) == 2 and not shoes.rejected
    assert all(0.6 <= r.similarity <= 1.0 for r in door.accepted + cup.accepted + shoes.accepted)


def test_rows_carry_the_rewrites_and_their_provenance(results, rewrite_filter) -> None:
    server, (door, _, _) = results
    columns = rewrite_columns(door, rewrite_filter)
    assert columns[REWRITES_COLUMN] == [r.text for r in door.accepted]
    provenance = [json.loads(record) for record in columns[PROVENANCE_COLUMN]]
    assert [p["text"] for p in provenance] == columns[REWRITES_COLUMN]
    sent = {prompt_hash(body["messages"]) for body in server.requests}
    first = provenance[0]
    assert first["model"] == "scripted-llm" and first["prompt_hash"] in sent
    assert first["sentence_model"] == "all-MiniLM-L6-v2" and first["min_similarity"] == 0.6
    assert first["similarity"] == pytest.approx(door.accepted[0].similarity, abs=1e-6)
    assert first["temporal_lexicon"].endswith("temporal_words.json")
    rejected = [json.loads(record) for record in columns[REJECTED_COLUMN]]
    assert len(rejected) == 3 and all(r["reasons"] for r in rejected)


def test_the_count_caps_the_candidates(llm_server, chat_client, rewrite_filter) -> None:
    server = llm_server()
    (door,) = rewrite_captions(chat_client(server), CAPTIONS[:1], rewrite_filter, count=2)
    assert len(door.rewrites) == 2
    assert "into 2 different sentences" in server.requests[0]["messages"][-1]["content"]


def test_without_the_temporal_check_a_reversed_rewrite_passes(
    llm_server, chat_client, sentence_embedder
) -> None:
    server = llm_server()
    similarity_only = RewriteFilter(sentence_embedder, 0.6)
    (door,) = rewrite_captions(chat_client(server), CAPTIONS[:1], similarity_only)
    assert "A man closes the door and then walks into the room." in [r.text for r in door.accepted]
    assert (
        rewrite_columns(door, similarity_only)[PROVENANCE_COLUMN][0].count(
            '"temporal_lexicon": null'
        )
        == 1
    )


def test_the_similarity_report_is_the_fig_10_check(results, rewrite_filter, tmp_path) -> None:
    _, judged = results
    report = similarity_report(judged, rewrite_filter, count=3, rng=random.Random(0))
    assert (report["captions"], report["candidates"], report["accepted"]) == (3, 11, 7)
    assert report["captions_with_fewer_than_asked"] == 2  # cup (2 accepted) and shoes (2)
    assert report["rejections"]["similarity"] == 1
    assert report["rejections"]["reverses 'pick_up' into 'put_down'"] == 1
    rewrites, random_ = report["rewrite_vs_caption"], report["random_caption_vs_caption"]
    assert rewrites["count"] == 11 and random_["count"] == 3
    assert sum(rewrites["histogram"]["counts"]) == 11
    assert rewrites["quantiles"]["0.5"] > random_["quantiles"]["0.5"] + 0.3
    assert random_["fraction_at_or_above_threshold"] == 0.0
    assert report["accepted_rewrite_vs_caption"]["min"] >= 0.6
    json.dumps(report)  # serialisable for the run record
    plot_similarity(report, tmp_path / "fig10.png")
    assert (tmp_path / "fig10.png").read_bytes()[:4] == b"\x89PNG"


def test_a_reply_without_rewrites_names_the_caption(
    llm_server, chat_client, rewrite_filter
) -> None:
    server = llm_server(responder=lambda body: "```\n```")
    with pytest.raises(ReplyFormatError, match=r"\(rewrites of caption 'cup-1'\)"):
        rewrite_captions(chat_client(server), CAPTIONS[1:2], rewrite_filter)


def test_a_malformed_reply_loses_nothing_already_answered(
    llm_server, chat_client, rewrite_filter
) -> None:
    broken = llm_server(malformed=lambda body: "picks up a cup" in body["messages"][-1]["content"])
    with pytest.raises(LLMResponseError, match=r"request [0-9a-f]{64} .*could not be parsed"):
        rewrite_captions(chat_client(broken), CAPTIONS, rewrite_filter)
    healthy = llm_server()
    client = chat_client(healthy)
    again = rewrite_captions(client, CAPTIONS, rewrite_filter)
    assert len(healthy.requests) == 1 and client.usage.cache_hits == 2
    assert [result.id for result in again] == ["door-1", "cup-1", "shoes-1"]


@pytest.mark.integration
def test_published_rewrites_pass_and_random_captions_fail(shared_data, rewrite_filter) -> None:
    """Fig. 10 on the published GPT-4 rewrites of six RTime test videos (forward captions)."""
    records = list(json.loads((shared_data / "rtime" / "test.json").read_text()).values())[:6]
    candidates = [(r["forward_captions"][0], r["forward_rewrites"]) for r in records]
    judged = rewrite_filter.judge(candidates)
    similarities = [rewrite.similarity for rewrites in judged for rewrite in rewrites]
    assert len(similarities) == 54 and min(similarities) > 0.6
    accepted = sum(rewrite.accepted for rewrites in judged for rewrite in rewrites)
    assert accepted >= 0.7 * 54
    reversed_ = rewrite_filter.judge(
        [(r["forward_captions"][0], [r["reverse_captions"][0]]) for r in records]
    )
    assert sum(not rewrites[0].accepted for rewrites in reversed_) >= 3
