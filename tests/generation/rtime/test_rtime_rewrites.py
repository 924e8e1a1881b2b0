"""Step 3: rewrites from the scripted LLM, judged with the real MiniLM model and spaCy lemmas."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from foilkit.generation.llm import LLMResponseError
from foilkit.generation.llm_replies import is_refusal
from foilkit.generation.prompts import prompt_hash
from foilkit.generation.rtime import load_prompt
from foilkit.generation.rtime.replies import ReplyFormatError
from foilkit.generation.rtime.rewrites import (
    PROVENANCE_COLUMN,
    REJECTED_COLUMN,
    REVERSAL_REASON,
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
    return server, rewrite_captions(
        chat_client(server), CAPTIONS, rewrite_filter, count=9, on_wrong_count="keep"
    )


@pytest.mark.parametrize("name", ["expand_activities", "enrich_activity", "rewrite_caption"])
def test_every_packaged_prompt_renders(name: str) -> None:
    template = load_prompt(name)
    values = {field: f"<{field}>" for field in template.fields}
    messages = template.render(**values)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert all(f"<{field}>" in messages[-1]["content"] for field in template.fields)
    assert "RTime" in template.source and len(template.template_hash) == 64
    assert prompt_hash(messages) == prompt_hash(template.render(**values))


def test_the_rewrite_prompt_asks_for_the_count_and_keeps_time() -> None:
    (system, user) = load_prompt("rewrite_caption").render(caption=DOOR, count=9)
    assert f"Description: {DOOR}" in user["content"]
    assert "into 9 different sentences" in user["content"]
    assert "order in which things happen" in system["content"]


def test_prompt_files_are_checked(tmp_path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("fields: [caption]\nmessages:\n  - {role: user, content: 'Say {caption} {n}'}")
    wrong_fields = r"mine\.yaml: 'fields' \['caption'\] differ .* \['caption', 'n'\]"
    with pytest.raises(ValueError, match=wrong_fields):
        load_prompt(path)
    with pytest.raises(FileNotFoundError, match="packaged prompts: .*'rewrite_caption'"):
        load_prompt("no_such_prompt")
    with pytest.raises(KeyError, match=r"needs field\(s\) \['count'\]"):
        load_prompt("rewrite_caption").render(caption="x")


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
    (door,) = rewrite_captions(
        chat_client(server), CAPTIONS[:1], rewrite_filter, count=2, on_wrong_count="keep"
    )
    assert len(door.rewrites) == 2
    assert "into 2 different sentences" in server.requests[0]["messages"][-1]["content"]


def test_without_the_temporal_check_a_reversed_rewrite_passes(
    llm_server, chat_client, sentence_embedder
) -> None:
    server = llm_server()
    similarity_only = RewriteFilter(sentence_embedder, 0.6)
    (door,) = rewrite_captions(
        chat_client(server), CAPTIONS[:1], similarity_only, on_wrong_count="keep"
    )
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


def test_refusals_and_wrong_counts_are_rejected(llm_server, chat_client, rewrite_filter) -> None:
    nine = [f"{i}. A man opens the door and then walks into room {i}." for i in range(1, 10)]
    replies = {
        DOOR: "\n".join(nine),
        CUP: "I cannot help with that.",
        SHOES: "\n".join(nine[:7]),
    }
    server = llm_server(
        responder=lambda body: next(r for c, r in replies.items() if c in str(body["messages"]))
    )
    door, cup, shoes = rewrite_captions(chat_client(server), CAPTIONS, rewrite_filter, count=9)
    assert len(door.accepted) == 9
    assert [r.reasons[:2] for r in cup.rewrites] == [("reply has 1 rewrites, 9 asked", "refusal")]
    assert len(shoes.rewrites) == 7 and not shoes.accepted
    assert all(r.reasons[0] == "reply has 7 rewrites, 9 asked" for r in shoes.rewrites)
    report = similarity_report([door, cup, shoes], rewrite_filter, count=9, rng=random.Random(0))
    assert report["rejections"]["wrong count"] == 8 and report["rejections"]["refusal"] == 1
    with pytest.raises(ValueError, match="on_wrong_count"):
        rewrite_captions(chat_client(server), CAPTIONS, rewrite_filter, on_wrong_count="drop")


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("I cannot help with that.", True),
        ("I\u2019m sorry, but I can't assist with this request.", True),
        ("As an AI language model, I cannot see videos.", True),
        ("Sorry, I can only rewrite English sentences.", True),
        ("A sorry-looking man opens the door.", False),
        ("I see a man opening the door.", False),
        ("Modified Description: I'm sorry, I can't help with that.", True),
        ("My apologies, but I won't be able to rewrite this.", True),
        ("This request goes against my guidelines, so I must decline.", True),
        ("Regrettably, the young lady wore a protective mask.", False),
        ("Unfortunately, the dog drops the ball.", False),
        # issue 46: refusals not in English, or declining in formal words
        ("Lo siento, pero no puedo reescribir esta frase.", True),
        ("Je suis désolée, je ne peux pas faire cela.", True),
        ("Es tut mir leid, das kann ich nicht.", True),
        ("对不起，我不能改写这个句子。", True),
        ("I must respectfully decline to rewrite this caption.", True),
        ("I'm going to politely decline this one.", True),
        ("I am not in a position to rewrite this.", True),
        ("Your request cannot be completed.", True),
        ("A man declines the offer and walks away.", False),
        ("The lamentable state of the road slows the cyclist.", False),
    ],
)
def test_refusal_lines(text: str, refusal: bool) -> None:
    assert is_refusal(text) is refusal


@pytest.mark.parametrize(
    ("caption", "rewrite", "verdict"),
    [
        # a rewrite naming both directions, as its caption's events do, reverses nothing
        (
            "A ball of thread was wound by a woman, who then unwrapped the thread.",
            "A woman wrapped the thread into a ball and then unwrapped it.",
            (),
        ),
        # particles far from their verb
        ("A man puts on his hat.", "A man puts his old brown felt hat on.", ()),
        # a direction word said another way is no rejection; bringing in its opposite is
        ("A woman opens the box.", "A woman unlatches the box.", ()),
        (
            "A woman opens the box.",
            "A woman closes the box.",
            ("reverses 'open' into 'close' (close/VERB)",),
        ),
        (
            "He opens the box and then smiles.",
            "He opens the box, smiling.",
            ("drops 'sequence' (then)",),
        ),
    ],
)
def test_temporal_check_of_the_packaged_lexicon(tokenize, caption, rewrite, verdict) -> None:
    lexicon = TemporalLexicon.load()
    caption_tokens, rewrite_tokens = tokenize([caption, rewrite])
    assert tuple(str(v) for v in lexicon.violations(caption_tokens, rewrite_tokens)) == verdict


def test_fig10_axis_names_a_long_model_path_by_its_name(results, tmp_path) -> None:
    from foilkit.generation.rtime.rewrites import _short_model_name

    snapshot = (
        "/root/.cache/huggingface/hub/models--sentence-transformers--all-MiniLM-L6-v2/"
        "snapshots/c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
    )
    assert _short_model_name(snapshot) == "sentence-transformers/all-MiniLM-L6-v2"
    assert _short_model_name("/models/" + "x" * 80).endswith("\u2026")
    assert len(_short_model_name("/models/" + "x" * 80)) == 40


# What the reversed door video shows, and a paraphrase of it.
DOOR_REVERSED = "A man walks backwards out of the room and then closes the door."
DOOR_REVERSED_PARAPHRASE = "Stepping backwards out of the room, a man then shuts the door."
DOOR_REWRITE = "A man opens the door, then he walks into the room."


def test_a_rewrite_nearer_the_opposite_caption_is_a_reversal(rewrite_filter) -> None:
    texts = [DOOR_REWRITE, DOOR_REVERSED, DOOR_REVERSED_PARAPHRASE]
    (judged,) = rewrite_filter.judge([(DOOR, texts)], opposites=[DOOR_REVERSED])
    rewrite, reversal, paraphrase = judged
    assert rewrite.accepted and rewrite.opposite_similarity < rewrite.similarity
    for candidate in (reversal, paraphrase):
        assert candidate.opposite_similarity > candidate.similarity
        assert [r for r in candidate.reasons if r.startswith(REVERSAL_REASON)] == [
            f"{REVERSAL_REASON} ({candidate.opposite_similarity:.3f} >= "
            f"{candidate.similarity:.3f} + {rewrite_filter.reversal_margin})"
        ]
    # Without an opposite caption, or with the check off, the check does not run.
    off = dataclasses.replace(rewrite_filter, reversal_margin=None)
    for verdicts in (
        rewrite_filter.judge([(DOOR, texts)]),
        off.judge([(DOOR, texts)], opposites=[DOOR_REVERSED]),
    ):
        assert all(r.opposite_similarity is None for r in verdicts[0])
        assert not any(r.startswith(REVERSAL_REASON) for w in verdicts[0] for r in w.reasons)
    with pytest.raises(ValueError, match="1 opposite captions for 2 captions"):
        rewrite_filter.judge([(DOOR, texts), (CUP, [])], opposites=[DOOR_REVERSED])


def test_the_reversal_margin_is_where_nearer_begins(rewrite_filter) -> None:
    (before,) = rewrite_filter.judge([(DOOR, [DOOR_REWRITE])], opposites=[DOOR_REVERSED])
    gap = before[0].opposite_similarity - before[0].similarity  # negative: nearer its own
    for margin, rejected in ((gap - 1e-6, True), (gap + 1e-6, False)):
        moved = dataclasses.replace(rewrite_filter, reversal_margin=margin)
        (after,) = moved.judge([(DOOR, [DOOR_REWRITE])], opposites=[DOOR_REVERSED])
        assert after[0].accepted is not rejected


def test_rewrites_are_checked_against_the_opposite_caption(
    llm_server, chat_client, rewrite_filter
) -> None:
    reversed_door = "A man closes the door and then walks into the room."  # a scripted rewrite
    door, cup, _ = rewrite_captions(
        chat_client(llm_server()),
        CAPTIONS,
        rewrite_filter,
        on_wrong_count="keep",
        opposites=[reversed_door, None, None],
    )
    (rejected,) = [r for r in door.rewrites if r.text == reversed_door]
    assert any(reason.startswith(REVERSAL_REASON) for reason in rejected.reasons)
    assert all(r.opposite_similarity is not None for r in door.rewrites)
    assert all(r.opposite_similarity is None for r in cup.rewrites)
    columns = rewrite_columns(door, rewrite_filter)
    kept = json.loads(columns[PROVENANCE_COLUMN][0])
    assert kept["reversal_margin"] == rewrite_filter.reversal_margin
    assert kept["opposite_similarity"] < kept["similarity"]
    report = similarity_report([door, cup], rewrite_filter, count=9, rng=random.Random(0))
    assert report["reversal_margin"] == rewrite_filter.reversal_margin
    assert report["rejections"][REVERSAL_REASON] >= 1
    with pytest.raises(ValueError, match="1 opposite captions for 3 captions"):
        rewrite_captions(chat_client(llm_server()), CAPTIONS, rewrite_filter, opposites=[None])


# The published GPT-4 rewrites of the first PUBLISHED_VIDEOS videos of the RTime test split,
# forward and reverse captions, each checked against the other direction's caption.
PUBLISHED_VIDEOS = 200


@pytest.mark.integration
@pytest.mark.slow
def test_published_rewrites_are_kept_and_reversals_rejected(shared_data, rewrite_filter) -> None:
    """Issue 19's targets on the test split (the reversal margin was set on the validation
    split): >= 95% of the published rewrites pass every check, >= 90% of the reversed video's
    captions offered as rewrites are rejected, and so are most of GPT-4's rewrites *of* the
    reversed video's caption offered for the caption."""
    records = list(json.loads((shared_data / "rtime" / "test.json").read_text()).values())
    candidates, opposites, kinds = [], [], []
    for record in records[:PUBLISHED_VIDEOS]:
        for side, other in (("forward", "reverse"), ("reverse", "forward")):
            caption, opposite = record[f"{side}_captions"][0], record[f"{other}_captions"][0]
            for kind, texts in (
                ("rewrite", record[f"{side}_rewrites"]),
                ("reversal", [opposite]),
                ("reversal rewrite", record[f"{other}_rewrites"]),
            ):
                candidates.append((caption, texts))
                opposites.append(opposite)
                kinds.append(kind)
    judged: dict[str, list] = {kind: [] for kind in kinds}
    for kind, rewrites in zip(kinds, rewrite_filter.judge(candidates, opposites=opposites)):
        judged[kind] += rewrites
    kept = {
        kind: sum(r.accepted for r in rewrites) / len(rewrites) for kind, rewrites in judged.items()
    }
    print(f"published RTime test rewrites kept: {kept}")
    assert len(judged["rewrite"]) == 18 * PUBLISHED_VIDEOS and kept["rewrite"] >= 0.95
    assert len(judged["reversal"]) == 2 * PUBLISHED_VIDEOS and kept["reversal"] <= 0.10
    by_reversal_check = [
        any(reason.startswith(REVERSAL_REASON) for reason in rewrite.reasons)
        for rewrite in judged["reversal"]
    ]
    assert sum(by_reversal_check) >= 0.9 * len(by_reversal_check)
    assert kept["reversal rewrite"] <= 0.25  # 77% rejected (34% without the reversal check)
