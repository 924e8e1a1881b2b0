"""Step 1: seed pairs and their few-shot LLM expansion against a local OpenAI-compatible server."""

from __future__ import annotations

import json
import random

import pytest

from foilkit.generation.llm import LLMResponseError
from foilkit.generation.prompts import prompt_hash
from foilkit.generation.rtime import load_prompt
from foilkit.generation.rtime.activities import (
    PLACEHOLDER,
    ActivityPair,
    expand_activity_pairs,
    normalise_activity,
    read_activity_pairs,
)
from foilkit.generation.rtime.replies import ReplyFormatError


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Open Something.", "open [something]"),
        ("to lock <object>", "lock [something]"),
        ("put  {sth}  in", "put [something] in"),
        ("  Stand up ", "stand up"),
    ],
)
def test_normalise_activity(raw: str, expected: str) -> None:
    assert normalise_activity(raw) == expected


def test_a_one_word_side_borrows_the_object_slot() -> None:
    pair = ActivityPair("open", "close [something]")
    assert (pair.activity, pair.opposite) == ("open [something]", "close [something]")
    assert ActivityPair("stand up", "sit down").activity == "stand up"


def test_a_pair_is_the_same_in_either_order_and_needs_two_activities() -> None:
    pair = ActivityPair("open sth", "close sth")
    assert pair.key == ActivityPair("Close [something]", "open").key
    with pytest.raises(ValueError, match="same activity on both sides"):
        ActivityPair("jump", "Jump.")


def test_the_seed_pairs_come_from_the_paper() -> None:
    seeds = read_activity_pairs()
    assert ("open [something]", "close [something]") in {(p.activity, p.opposite) for p in seeds}
    assert all(pair.origin == "seed" and pair.source for pair in seeds)
    assert sum(PLACEHOLDER in pair.activity for pair in seeds) >= len(seeds) - 2


def test_a_repeated_pair_in_a_pairs_file_names_both_entries(tmp_path) -> None:
    path = tmp_path / "pairs.jsonl"
    lines = [
        {"activity": "open sth", "opposite": "close sth"},
        {"activity": "tie", "opposite": "untie"},
        {"activity": "close [something]", "opposite": "open [something]"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ValueError, match=r"pair 3 .* repeats pair 1"):
        read_activity_pairs(path)


def test_expansion_keeps_only_new_readable_pairs_with_provenance(llm_server, chat_client) -> None:
    server = llm_server()
    client = chat_client(server)
    seeds = read_activity_pairs()
    expansion = expand_activity_pairs(
        client, seeds, rounds=2, shots=3, count=5, rng=random.Random(0)
    )
    found = [(pair.activity, pair.opposite) for pair in expansion.pairs]
    # "close | open" is a seed, the second zip pair repeats the first, "jump | jump" is no pair
    assert found == [
        ("zip [something]", "unzip [something]"),
        ("plug in [something]", "unplug [something]"),
        ("lock [something]", "unlock [something]"),
        ("climb up [something]", "climb down [something]"),
    ]
    # round 1 repeats a seed and its own zip pair; round 2 (the same reply) repeats all six
    assert expansion.repeated == 2 + 6
    assert expansion.unreadable == ((1, "light a candle"), (2, "light a candle"))
    assert [round_ for round_, _ in expansion.invalid] == [1, 2]
    first = expansion.pairs[0]
    sent = {prompt_hash(body["messages"]) for body in server.requests}  # rounds run concurrently
    assert first.origin == "llm" and first.model == "scripted-llm" and first.round == 1
    assert first.prompt_hash in sent and len(sent) == 2 and len(first.request_key) == 64


def test_each_round_shows_other_shots_and_the_seed_fixes_them(llm_server, chat_client) -> None:
    server = llm_server()
    seeds = read_activity_pairs()

    def shots(seed: int) -> list[str]:
        start = len(server.requests)
        expand_activity_pairs(
            chat_client(server, cache_dir=None),
            seeds,
            rounds=3,
            shots=4,
            count=5,
            rng=random.Random(seed),
        )
        prompts = sorted(body["messages"][-1]["content"] for body in server.requests[start:])
        return prompts

    first, again, other = shots(1), shots(1), shots(2)
    assert first == again and first != other
    assert len(set(first)) == 3
    assert "Suggest 5 more such pairs" in first[0]
    assert all(prompt.count(" | ") == 4 + 1 for prompt in first)  # 4 shots + the format line


def test_a_malformed_server_reply_is_an_error_and_the_other_rounds_stay_cached(
    llm_server, chat_client
) -> None:
    seeds = read_activity_pairs()
    broken = llm_server(malformed=lambda body: "Suggest 7" in body["messages"][-1]["content"])
    template = load_prompt("expand_activities")
    options = dict(rounds=1, shots=3, template=template)
    client = chat_client(broken)
    expand_activity_pairs(client, seeds, count=5, rng=random.Random(0), **options)
    with pytest.raises(LLMResponseError, match=r"request [0-9a-f]{64}"):
        expand_activity_pairs(client, seeds, count=7, rng=random.Random(0), **options)
    # a rerun against a working server asks again only for what failed
    healthy = llm_server()
    rerun = chat_client(healthy)
    expand_activity_pairs(rerun, seeds, count=5, rng=random.Random(0), **options)
    expand_activity_pairs(rerun, seeds, count=7, rng=random.Random(0), **options)
    assert len(healthy.requests) == 1 and rerun.usage.cache_hits == 1


def test_a_reply_with_no_pair_names_its_request_and_round(llm_server, chat_client) -> None:
    server = llm_server(responder=lambda body: "As an AI model I cannot do that.")
    with pytest.raises(ReplyFormatError, match=r"request [0-9a-f]{64} \(activity pairs, round 1\)"):
        expand_activity_pairs(
            chat_client(server),
            read_activity_pairs(),
            rounds=1,
            shots=2,
            count=3,
            rng=random.Random(0),
        )


@pytest.mark.parametrize(
    ("left", "right", "same"),
    [
        (
            ("inflating [something]", "deflating [something]"),
            ("inflate [something]", "deflate [something]"),
            True,
        ),
        (
            ("opens [something]", "closes [something]"),
            ("close [something]", "open [something]"),
            True,
        ),
        (
            ("putting on [something]", "taking off [something]"),
            ("put on [something]", "take off [something]"),
            True,
        ),
        (
            ("pass [something]", "catch [something]"),
            ("passes [something]", "catches [something]"),
            True,
        ),
        (
            ("wrap [something]", "unwrap [something]"),
            ("wrap [something]", "untie [something]"),
            False,
        ),
    ],
)
def test_pairs_differing_only_in_inflection_are_one_pair(left, right, same) -> None:
    assert (ActivityPair(*left).key == ActivityPair(*right).key) is same
