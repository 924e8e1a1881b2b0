"""In-context generation through the real openai client against a local server."""

from __future__ import annotations

import pytest
from openai_server import OpenAICompatibleServer

from foilkit.generation.llm import ChatClient, LLMSettings
from foilkit.generation.vitatecs.exemplars import ExemplarSets
from foilkit.generation.vitatecs.generate import (
    CANDIDATE,
    EMPTY,
    NA_ANSWER,
    REFUSAL,
    UNCHANGED,
    UNPARSED,
    Candidate,
    GenerationSettings,
    Query,
    generate_candidates,
    parse_answer,
)
from foilkit.generation.vitatecs.prompt import CounterfactualPrompt, load_aspects

CLOSES = ("a man closes a door", CANDIDATE)


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("a man closes a door", ("a man closes a door", CANDIDATE)),
        ("Modified Description: a man closes a door.", ("a man closes a door", CANDIDATE)),
        ('"a man closes a door."\n\nExplanation: reversed.', ("a man closes a door", CANDIDATE)),
        ("NA", (None, NA_ANSWER)),
        ("NA.", (None, NA_ANSWER)),
        ("N/A", (None, NA_ANSWER)),
        ("Modified Description: NA", (None, NA_ANSWER)),
        ("NA - the caption describes no direction.", (None, NA_ANSWER)),
        ("Nadal hits a ball", ("Nadal hits a ball", CANDIDATE)),
        ("a man opens a door.", ("a man opens a door", UNCHANGED)),
        ("  \n ", (None, EMPTY)),
        ("Modified Description: .", (None, EMPTY)),
        # Chat around the answer: the answer the prompt asks for is read wherever it stands.
        (
            "Sure! Here is the modified description you asked for:\n\na man closes a door.",
            ("a man closes a door", CANDIDATE),
        ),
        ('Certainly.\nModified Description:\n"a man closes a door."', CLOSES),
        ("Here is my answer: a man closes a door.", CLOSES),
        ("Original Description: a man opens a door.\nModified Description: NA", (None, NA_ANSWER)),
        ("I changed the verb.\nModified Description: a man closes a door.", CLOSES),
        ("Great white sharks swim away.", ("Great white sharks swim away", CANDIDATE)),
        # Refusals and replies with no answer are parse failures, never candidates.
        ("I'm sorry, but I can't help with that.", (None, REFUSAL)),
        ("I\u2019m sorry, but I can\u2019t assist with that request.", (None, REFUSAL)),
        ("Modified Description: I cannot modify this description.", (None, REFUSAL)),
        ("Sure! Here is the modified description you asked for:", (None, UNPARSED)),
        ("Of course! I'd be happy to help with that.", (None, UNPARSED)),
        # Refusals that declare inability later in the line or on another line, or cite policy.
        ("My apologies, but I won't be able to rewrite this description.", (None, REFUSAL)),
        ("Unfortunately, it cannot be modified, so I cannot provide an answer.", (None, REFUSAL)),
        ("This request goes against my guidelines.", (None, REFUSAL)),
        ("I don't feel comfortable modifying this description.", (None, REFUSAL)),
        (
            "I'm sorry, I cannot.\nIf you have another description, I'd be glad to help.",
            (None, REFUSAL),
        ),
        # Comments, fences, tokens, error objects and one-word debris are not descriptions.
        ("Here you go!", (None, UNPARSED)),
        ("```\n```", (None, UNPARSED)),
        ("Note: I changed the verb to reflect the opposite direction.", (None, UNPARSED)),
        ("Explanation: the order of events was swapped.", (None, UNPARSED)),
        ('{"error": "rate limit exceeded"}', (None, UNPARSED)),
        ("<|im_end|>", (None, UNPARSED)),
        ("1.", (None, UNPARSED)),
        ("null", (None, UNPARSED)),
        ("```\na man closes a door.\n```", CLOSES),
        # A quotation at the answer's end is the description's own; quotes around it are not.
        ('a girl sings "happy birthday"', ('a girl sings "happy birthday"', CANDIDATE)),
        ('"a girl sings "happy birthday"".', ('a girl sings "happy birthday"', CANDIDATE)),
        ("\u201ca man closes a door\u201d.", CLOSES),
        # issue 46: refusals not in English or in formal words, chat with no chat opener, API
        # error bodies returned as replies, a Llama-3 header's tokens run together
        ("Lo siento, no puedo modificar esta descripción.", (None, REFUSAL)),
        ("Modified Description: Je suis désolé, je ne peux pas.", (None, REFUSAL)),
        ("对不起，我不能做这个。", (None, REFUSAL)),
        ("Modified Description: Un hombre cierra la puerta con una llave.", (None, UNPARSED)),
        ("I must respectfully decline to rewrite this.", (None, REFUSAL)),
        ("I hope this helps! Let me know if you need anything else.", (None, UNPARSED)),
        ("Thank you for the clear instructions. I will now rewrite it.", (None, UNPARSED)),
        ("This change swaps the two actions.", (None, UNPARSED)),
        ("Error: Rate limit exceeded. Please retry after 20 seconds.", (None, UNPARSED)),
        ("Modified Description: Error: Rate limit exceeded", (None, UNPARSED)),
        ("503 Service Unavailable", (None, UNPARSED)),
        ("<|start_header_id|>assistant<|end_header_id|>", (None, UNPARSED)),
        ("<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n<|eot_id|>", (None, UNPARSED)),
        (
            "<|start_header_id|>assistant<|end_header_id|>\n\n"
            "Modified Description: a man closes a door.",
            CLOSES,
        ),
        ("<|start_header_id|>assistant<|end_header_id|>a man closes a door", CLOSES),
        # descriptions the new patterns must leave alone
        (
            "I opened the washing machine and shut the lid.",
            ("I opened the washing machine and shut the lid", CANDIDATE),
        ),
        ("a man thanks his viewers", ("a man thanks his viewers", CANDIDATE)),
    ],
)
def test_parse_answer(answer, expected):
    assert parse_answer(answer, "a man opens a door") == expected


def test_final_full_stop_follows_the_caption():
    assert parse_answer("A man closes a door", "A man opens a door.") == (
        "A man closes a door.",
        CANDIDATE,
    )


QUERIES = [
    Query("1", "a man opens the door of a car", "direction", "MSRVTT", "video1.mp4"),
    Query("2", "a man is talking about a car", "direction", "MSRVTT", "video2.mp4"),
    Query("3", "a woman lifts a heavy box", "direction", "VATEX", "v3.mp4"),
    Query("1", "a man opens the door of a car", "type", "MSRVTT", "video1.mp4"),
]


def _generate(server, tmp_path, **options):
    client = ChatClient(
        LLMSettings(
            model="tiny-chat",
            base_url=server.base_url,
            top_p=0.8,
            cache_dir=str(tmp_path / "cache"),
            retry_backoff_s=0.001,
        )
    )
    candidates = generate_candidates(
        QUERIES,
        client=client,
        exemplars=ExemplarSets.load(),
        prompt=CounterfactualPrompt.load(),
        aspects=load_aspects(),
        progress=False,
        **options,
    )
    return client, candidates


def test_generation_over_http(tmp_path, responder, query_caption):
    with OpenAICompatibleServer(responder) as server:
        client, candidates = _generate(server, tmp_path, seed=1, iteration=2)
    assert len(server.requests) == 4
    assert all(body["top_p"] == 0.8 and body["model"] == "tiny-chat" for body in server.requests)
    prompts = {
        (query_caption(p), p) for p in (b["messages"][0]["content"] for b in server.requests)
    }
    assert sorted(caption for caption, _ in prompts) == sorted(q.caption for q in QUERIES)
    type_instruction = load_aspects()["type"].instruction
    assert sum(type_instruction in prompt for _, prompt in prompts) == 1
    assert [c.status for c in candidates] == [CANDIDATE, NA_ANSWER, CANDIDATE, CANDIDATE]
    assert candidates[0].counterfactual == "a man closes the door of a car"
    assert candidates[2].counterfactual == "a woman drops a heavy box"  # prefix and "." gone
    assert candidates[1].counterfactual is None and candidates[1].raw == "NA"
    assert {c.iteration for c in candidates} == {2} and {c.model for c in candidates} == {
        "tiny-chat"
    }
    assert len({c.prompt_hash for c in candidates}) == 4
    assert client.usage.requests == 4 and client.usage.completion_tokens > 0
    # Candidates survive their JSON round trip (the loop's files).
    assert [Candidate.from_record(c.to_record()) for c in candidates] == candidates


def test_rerun_hits_the_cache_and_prompts_depend_on_the_seed(tmp_path, responder):
    with OpenAICompatibleServer(responder) as server:
        _, first = _generate(server, tmp_path, seed=1)
        client, again = _generate(server, tmp_path, seed=1)
        assert len(server.requests) == 4 and client.usage.cache_hits == 4
        assert [c.prompt_hash for c in again] == [c.prompt_hash for c in first]
        _, reseeded = _generate(server, tmp_path, seed=2)
    assert [c.prompt_hash for c in reseeded] != [c.prompt_hash for c in first]


def test_several_prompts_and_choices_per_query(tmp_path, responder):
    with OpenAICompatibleServer(responder) as server:
        client = ChatClient(LLMSettings(model="m", base_url=server.base_url, n=2))
        candidates = generate_candidates(
            QUERIES[:1],
            client=client,
            exemplars=ExemplarSets.load(),
            prompt=CounterfactualPrompt.load(),
            aspects=load_aspects(),
            settings=GenerationSettings(prompts_per_query=3),
            progress=False,
        )
    assert len(server.requests) == 3  # three prompts, each with its own demonstrations
    assert [c.sample for c in candidates] == [0, 1, 2, 3, 4, 5]
    assert len({c.prompt_hash for c in candidates}) == 3
    assert len({c.id for c in candidates}) == 6


def test_query_with_unknown_aspect_is_refused():
    with pytest.raises(ValueError, match="aspect 'speed'"):
        Query("1", "a car", "speed")


def test_chatty_and_refusing_replies_never_become_candidates(tmp_path, query_caption):
    """The replies a chat model gives over HTTP: the answer after a lead-in line is the
    candidate; a refusal or a lead-in with nothing after it is a recorded parse failure."""
    replies = {
        "a man opens the door of a car": "I'm sorry, but I can't help with that.",
        "a man is talking about a car": "Sure! Here is the modified description you asked for:",
        "a woman lifts a heavy box": (
            "Sure! Here is the modified description you asked for:\na woman drops a heavy box."
        ),
    }

    def responder(body):
        return replies[query_caption(body["messages"][-1]["content"])]

    with OpenAICompatibleServer(responder) as server:
        _, candidates = _generate(server, tmp_path, seed=1)
    assert [(c.status, c.counterfactual) for c in candidates] == [
        (REFUSAL, None),
        (UNPARSED, None),
        (CANDIDATE, "a woman drops a heavy box"),
        (REFUSAL, None),
    ]
    assert candidates[0].raw == "I'm sorry, but I can't help with that."  # kept for audit
