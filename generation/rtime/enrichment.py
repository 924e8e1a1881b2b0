"""RTime step 2: concrete objects for each activity's ``[something]`` (§3.1.2, Tab. 8).

Activities without objects make poor video-search queries, so the paper asks GPT-4 to put
concrete objects in place of ``[something]`` -- about 20 per activity, 5,760 verb-noun phrases
from 288 activities -- and people remove rare or unreasonable phrases (supplementary §7).
Each phrase keeps its opposite with the same object ("open laptop" / "close laptop"): the
paper searched with both, and the reversed video of one must show the other.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from foilkit.generation.prompts import PromptTemplate, prompt_hash
from foilkit.generation.rtime import load_prompt
from foilkit.generation.rtime.activities import PLACEHOLDER, ActivityPair
from foilkit.generation.rtime.replies import first_unique, parse_reply

if TYPE_CHECKING:
    from foilkit.generation.llm import ChatClient

ENRICHMENT_PROMPT = "enrich_activity"
OBJECTS_PER_ACTIVITY = 20  # "on average, we append 20 objects to each activity"
MAX_OBJECT_WORDS = 6

_ARTICLE = re.compile(r"^(?:a|an|the|some)\s+", re.IGNORECASE)
_PARENTHESIS = re.compile(r"\s*\([^)]*\)")
_EXPLANATION = re.compile(r"\s+(?:-|\u2013|\u2014)\s+.*$|:\s.*$")


def read_object(raw: Any) -> str | None:
    """An object name from a list item: no article, explanation or punctuation; else ``None``.

    "A laptop (portable computer)" and "the laptop - easy to film" both read as "laptop"; an
    item longer than a short noun phrase, or holding the placeholder itself, is not an object.
    """
    if not isinstance(raw, str):
        return None
    text = _EXPLANATION.sub("", _PARENTHESIS.sub("", raw)).strip(" \t.,;:!?\"'`")
    text = _ARTICLE.sub("", " ".join(text.split())).lower()
    if not text or len(text.split()) > MAX_OBJECT_WORDS or "[" in text or "]" in text:
        return None
    return text


def fill_object(activity: str, obj: str) -> str:
    """The activity with ``obj`` in place of ``[something]`` (the activity itself if no slot)."""
    return activity.replace(PLACEHOLDER, obj) if obj else activity


@dataclass(frozen=True)
class ActivityPhrase:
    """A verb-noun phrase and its temporal opposite with the same object.

    Attributes:
        activity, opposite: the pair it comes from (with ``[something]``).
        object: what fills the slot; empty for an activity without one ("stand up").
        phrase, opposite_phrase: the filled-in activity and opposite (the search queries);
            filled from ``object`` when left empty, and editable by the curator.
        model, prompt_hash, request_key: where the object came from (empty when no LLM asked).
        notes: free text for the curator.
    """

    activity: str
    opposite: str
    object: str = ""
    phrase: str = ""
    opposite_phrase: str = ""
    model: str = ""
    prompt_hash: str = ""
    request_key: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        if PLACEHOLDER in self.activity and not self.object and not self.phrase:
            raise ValueError(f"activity {self.activity!r} has a {PLACEHOLDER} slot but no object")
        if not self.phrase:
            object.__setattr__(self, "phrase", fill_object(self.activity, self.object))
        if not self.opposite_phrase:
            object.__setattr__(self, "opposite_phrase", fill_object(self.opposite, self.object))
        for name in ("phrase", "opposite_phrase"):
            if PLACEHOLDER in getattr(self, name):
                raise ValueError(f"{name} {getattr(self, name)!r} still holds {PLACEHOLDER}")

    @property
    def key(self) -> tuple[str, str]:
        return (self.phrase.lower(), self.opposite_phrase.lower())

    def to_record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, where: str = "") -> ActivityPhrase:
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in record.items() if k in names and v is not None}
        try:
            return cls(**values)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}{error}") from None


@dataclass(frozen=True)
class Enrichment:
    """The phrases an enrichment produced, and what was thrown away or came up short."""

    phrases: tuple[ActivityPhrase, ...]
    unreadable: tuple[tuple[str, str], ...]  # (activity, item that read as no object)
    short: tuple[tuple[str, int], ...]  # (activity, objects found) where fewer than asked


def directed_activities(pairs: Sequence[ActivityPair]) -> list[tuple[str, str]]:
    """Every activity of ``pairs`` with its opposite, both directions, each once, in order."""
    directed: dict[tuple[str, str], None] = {}
    for pair in pairs:
        directed[(pair.activity, pair.opposite)] = None
        directed[(pair.opposite, pair.activity)] = None
    return list(directed)


def enrich_activities(
    client: ChatClient,
    pairs: Sequence[ActivityPair],
    *,
    objects: int = OBJECTS_PER_ACTIVITY,
    template: PromptTemplate | None = None,
    park: bool = False,
) -> Enrichment:
    """Up to ``objects`` phrases per activity of ``pairs`` (both sides of every pair).

    Activities without a ``[something]`` slot give their one phrase without a request. With
    ``park``, an activity whose request fails after its retries gets no phrase and is recorded
    in the client's ``failures`` (else its error is raised).
    """
    if objects < 1:
        raise ValueError(f"objects must be >= 1, got {objects}")
    template = template or load_prompt(ENRICHMENT_PROMPT)
    directed = directed_activities(pairs)
    requests = {
        (a, o): template.render(activity=a, opposite=o, count=objects)
        for a, o in directed
        if PLACEHOLDER in a
    }
    completions = (
        dict(zip(requests, client.complete_many(list(requests.values()), park=park)))
        if requests
        else {}
    )
    phrases: list[ActivityPhrase] = []
    unreadable: list[tuple[str, str]] = []
    short: list[tuple[str, int]] = []
    for activity, opposite in directed:
        if (activity, opposite) not in completions:
            phrases.append(ActivityPhrase(activity, opposite))
            continue
        completion = completions[(activity, opposite)]
        if completion.failed:
            continue
        messages = requests[(activity, opposite)]
        found, lines = parse_reply(completion, read_object, asked=f"objects for {activity!r}")
        unreadable += [(activity, line) for line in lines]
        found = first_unique(found)[:objects]
        if len(found) < objects:
            short.append((activity, len(found)))
        phrases += [
            ActivityPhrase(
                activity,
                opposite,
                obj,
                model=client.config.model,
                prompt_hash=prompt_hash(messages),
                request_key=completion.key,
            )
            for obj in found
        ]
    return Enrichment(tuple(phrases), tuple(unreadable), tuple(short))
