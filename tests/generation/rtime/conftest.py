"""Fixtures of the RTime generation tests: a scripted LLM behind a real OpenAI-compatible server."""

from __future__ import annotations

import re

import pytest
from openai_server import OpenAICompatibleServer

# What the scripted LLM answers to the rewrite prompt, per caption: good rewrites, one that
# drops "then", one that reverses "opens", one unrelated sentence, and a repeat of the caption.
REWRITES = {
    "A man opens the door and then walks into the room.": [
        "1. A man opens the door, then he walks into the room.",
        "2. After opening the door, the man then enters the room.",
        "3. The door is opened by a man, who then steps into the room.",
        "4. A man opens the door, walking into the room.",
        "5. A man closes the door and then walks into the room.",
        "6. Bright red apples are stacked in a wooden crate at the market.",
        "7. A man opens the door and then walks into the room.",
    ],
    "A woman picks up a cup and drinks from it.": [
        "- A woman lifts a cup and drinks from it.",
        "- Picking up a cup, a woman takes a drink from it.",
        "- A woman puts down a cup and drinks from it.",
    ],
    "A boy takes off his shoes before entering the house.": [
        "A boy removes his shoes before he enters the house.",
        "Before going into the house, a boy takes his shoes off.",
    ],
}

_PAIR_REPLY = """Here are more activity pairs:
1. Zip [something] | Unzip [something]
2. close [something] | open [something]
3. (plug in [something], unplug [something])
4. lock sth / unlock sth
5. light a candle
6. Zip [something] | unzip [something]
7. "climb up [something]" | "climb down [something]"
8. jump | jump"""

_OBJECTS = {
    "zip [something]": (
        "1. A jacket\n2. the backpack (a school bag)\n3. Jacket\n4. suitcase - easy to film"
    ),
    "unzip [something]": "jacket\nbackpack\nsuitcase",
}


def _activity(prompt: str) -> str:
    return re.search(r"^Activity: (.*)$", prompt, re.M).group(1)


def scripted_reply(body: dict) -> str:
    """The scripted LLM: answers the expansion, enrichment and rewrite prompts."""
    prompt = body["messages"][-1]["content"]
    if prompt.startswith("Here are activity pairs"):
        return _PAIR_REPLY
    if prompt.startswith("Activity: "):
        return _OBJECTS.get(_activity(prompt), "box\nbag\nbottle")
    caption = re.search(r"^Description: (.*)$", prompt, re.M).group(1)
    return "\n".join(REWRITES.get(caption, [f"1. {caption.rstrip('.')}, as seen in the video."]))


@pytest.fixture
def responder():
    return scripted_reply


@pytest.fixture
def llm_server():
    """``llm_server(responder=scripted_reply, **options)``: a started server, stopped after."""
    servers = []

    def start(responder=scripted_reply, **options) -> OpenAICompatibleServer:
        server = OpenAICompatibleServer(responder, **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def chat_client(tmp_path):
    """``chat_client(server, **config)``: a cached ChatClient talking to a test server."""
    from foilkit.generation.llm import ChatClient, LLMSettings

    def make(server: OpenAICompatibleServer, **config) -> ChatClient:
        config.setdefault("cache_dir", str(tmp_path / "llm-cache"))
        return ChatClient(
            LLMSettings(
                model="scripted-llm", base_url=server.base_url, retry_backoff_s=0.0, **config
            )
        )

    return make


@pytest.fixture(scope="session")
def tokenize(nlp):
    from foilkit.generation.rtime.temporal_words import spacy_tokenizer

    return spacy_tokenizer(nlp)
