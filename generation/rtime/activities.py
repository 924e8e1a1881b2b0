"""RTime step 1: activity pairs, and their few-shot expansion by an LLM (§3.1.1, Tab. 7).

An activity pair is an activity with a pronounced temporal direction and its temporally
opposite activity -- ``("open [something]", "close [something]")`` -- so that a video of one,
played backwards, shows the other: the hard negative RTime is built around. The paper starts
from labels of action-recognition datasets and brainstormed pairs, asks GPT-4 for more through
few-shot prompting, and has people curate the result (144 pairs, 288 verb phrases).

``data/seed_activity_pairs.jsonl`` holds seed pairs taken from the paper's examples and its
published captions (each with its ``source``); :func:`expand_activity_pairs` asks the LLM for
more in several rounds, each showing a different random sample of the known pairs, and keeps
only pairs not known yet (in either order). The result goes to a person as a curation file
(:mod:`~foilkit.generation.rtime.curation`).
"""

from __future__ import annotations

import dataclasses
import os
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.generation.cli_io import read_jsonl
from foilkit.generation.prompts import PromptTemplate, prompt_hash
from foilkit.generation.rtime import load_prompt
from foilkit.generation.rtime.replies import parse_reply, read_pair

if TYPE_CHECKING:
    from foilkit.generation.llm import ChatClient

PLACEHOLDER = "[something]"
SEED_ACTIVITY_PAIRS = Path(__file__).parent / "data" / "seed_activity_pairs.jsonl"
EXPANSION_PROMPT = "expand_activities"

# How models spell the object slot: [something], <something>, {object}, (sth), bare "something".
_PLACEHOLDER_SPELLINGS = re.compile(
    r"[\[<{(]\s*(?:something|sth|smth|object|obj|noun|item|x)\s*[\]>})]|\bsomething\b|\bsth\b",
    re.IGNORECASE,
)
_EDGE_PUNCTUATION = " \t.,;:!?\"'`\u201c\u201d\u2018\u2019"


def normalise_activity(text: str) -> str:
    """Lower case, one space between words, ``[something]`` for the object slot, no "to "."""
    text = _PLACEHOLDER_SPELLINGS.sub(PLACEHOLDER, text.lower())
    text = " ".join(text.split()).strip(_EDGE_PUNCTUATION)
    return text.removeprefix("to ")


_INFLECTIONS = ("ing", "ed", "es", "s", "e")


def _verb_stem(word: str) -> str:
    """A crude stem that inflections of one verb share: inflate / inflating / inflates ->
    "inflat", put / putting -> "put"; only used to compare activities."""
    for suffix in _INFLECTIONS:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    if len(word) >= 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    return word


def activity_key(activity: str) -> str:
    """A normalised activity with its verb (first word) stemmed: what makes two activities
    the same when de-duplicating ("inflating [something]" is "inflate [something]")."""
    verb, _, rest = normalise_activity(activity).partition(" ")
    return f"{_verb_stem(verb)} {rest}".strip()


def _share_object(activity: str, opposite: str) -> tuple[str, str]:
    """``open / close [something]`` means ``open [something]``: a one-word side borrows the slot."""
    for this, other in ((activity, opposite), (opposite, activity)):
        if PLACEHOLDER in other and PLACEHOLDER not in this and len(this.split()) == 1:
            this_completed = f"{this} {other[other.index(PLACEHOLDER) :]}"
            return (this_completed, other) if this is activity else (other, this_completed)
    return activity, opposite


@dataclass(frozen=True)
class ActivityPair:
    """An activity and its temporally opposite activity, and where the pair came from.

    Attributes:
        activity, opposite: verb phrases with ``[something]`` for the object, normalised by
            :func:`normalise_activity`.
        origin: ``"seed"``, ``"llm"`` (expansion) or ``"human"`` (added during curation).
        source: for seeds, where in the paper they come from.
        model, prompt_hash, request_key, round: for LLM pairs, the model, the hash of the
            rendered prompt, the request's cache key and the expansion round.
        notes: free text for the curator.
    """

    activity: str
    opposite: str
    origin: str = "seed"
    source: str = ""
    model: str = ""
    prompt_hash: str = ""
    request_key: str = ""
    round: int | None = None
    notes: str = ""

    def __post_init__(self) -> None:
        activity, opposite = _share_object(
            normalise_activity(self.activity), normalise_activity(self.opposite)
        )
        if not activity or not opposite:
            raise ValueError(
                f"activity pair ({self.activity!r}, {self.opposite!r}) has an empty side"
            )
        if activity == opposite:
            raise ValueError(f"activity pair has the same activity on both sides: {activity!r}")
        object.__setattr__(self, "activity", activity)
        object.__setattr__(self, "opposite", opposite)

    @property
    def key(self) -> frozenset[str]:
        """The pair regardless of order and of the verbs' inflection: (open, close),
        (close, open) and (opening, closes) are one pair."""
        return frozenset((activity_key(self.activity), activity_key(self.opposite)))

    def to_record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, where: str = "") -> ActivityPair:
        """A pair from a record (JSONL line, curation row); ``where`` prefixes errors."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in record.items() if k in names and v not in (None, "")}
        try:
            if "round" in values:
                values["round"] = int(values["round"])
            return cls(**values)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{where}{error}") from None


def read_activity_pairs(path: str | os.PathLike | None = None) -> list[ActivityPair]:
    """Pairs from a JSONL file (``activity``, ``opposite``, provenance fields); default: seeds.

    A pair seen earlier in the file (in either order) is an error naming both lines.
    """
    path = Path(path or SEED_ACTIVITY_PAIRS)
    pairs: list[ActivityPair] = []
    first_line: dict[frozenset[str], int] = {}
    for number, record in enumerate(read_jsonl(path, required=("activity", "opposite")), 1):
        pair = ActivityPair.from_record(record, where=f"{path}: pair {number}: ")
        if pair.key in first_line:
            raise ValueError(
                f"{path}: pair {number} {sorted(pair.key)} repeats pair {first_line[pair.key]}"
            )
        first_line[pair.key] = number
        pairs.append(pair)
    if not pairs:
        raise ValueError(f"{path}: no activity pairs")
    return pairs


def format_pairs(pairs: Iterable[ActivityPair]) -> str:
    """The pairs as the prompt shows them: ``activity | opposite``, one per line."""
    return "\n".join(f"{pair.activity} | {pair.opposite}" for pair in pairs)


@dataclass(frozen=True)
class Expansion:
    """What an expansion produced: new pairs, and what was thrown away."""

    pairs: tuple[ActivityPair, ...]
    repeated: int  # pairs the model proposed that were known already (or proposed twice)
    unreadable: tuple[tuple[int, str], ...]  # (round, line) that read as no pair
    invalid: tuple[tuple[int, str], ...]  # (round, reason): e.g. the same activity twice


def expansion_requests(
    known: Sequence[ActivityPair],
    *,
    rounds: int,
    shots: int,
    count: int,
    rng: random.Random,
    template: PromptTemplate,
) -> list[list[dict[str, str]]]:
    """One few-shot request per round, each with ``shots`` pairs sampled from ``known``."""
    if rounds < 1 or shots < 1 or count < 1:
        raise ValueError(f"rounds, shots and count must be >= 1, got {rounds}, {shots}, {count}")
    return [
        template.render(
            examples=format_pairs(rng.sample(list(known), min(shots, len(known)))), count=count
        )
        for _ in range(rounds)
    ]


def expand_activity_pairs(
    client: ChatClient,
    known: Sequence[ActivityPair],
    *,
    rounds: int = 5,
    shots: int = 8,
    count: int = 20,
    rng: random.Random,
    template: PromptTemplate | None = None,
    park: bool = False,
) -> Expansion:
    """New activity pairs from ``rounds`` few-shot requests, none of them already ``known``.

    Rounds run concurrently (the client's pool); a reply with no readable pair raises
    :class:`~foilkit.generation.rtime.replies.ReplyFormatError` naming its request, after the
    other replies were cached. With ``park``, a round whose request fails after its retries
    adds nothing and is recorded in the client's ``failures`` (else its error is raised).
    """
    template = template or load_prompt(EXPANSION_PROMPT)
    requests = expansion_requests(
        known, rounds=rounds, shots=shots, count=count, rng=rng, template=template
    )
    completions = client.complete_many(requests, park=park)
    seen = {pair.key for pair in known}
    new: list[ActivityPair] = []
    repeated = 0
    unreadable: list[tuple[int, str]] = []
    invalid: list[tuple[int, str]] = []
    for number, (messages, completion) in enumerate(zip(requests, completions), 1):
        if completion.failed:
            continue
        sides, lines = parse_reply(completion, read_pair, asked=f"activity pairs, round {number}")
        unreadable += [(number, line) for line in lines]
        for activity, opposite in sides:
            try:
                pair = ActivityPair(
                    activity,
                    opposite,
                    origin="llm",
                    model=client.config.model,
                    prompt_hash=prompt_hash(messages),
                    request_key=completion.key,
                    round=number,
                )
            except ValueError as error:
                invalid.append((number, str(error)))
                continue
            if pair.key in seen:
                repeated += 1
                continue
            seen.add(pair.key)
            new.append(pair)
    return Expansion(tuple(new), repeated, tuple(unreadable), tuple(invalid))
