"""Stage 1 of the loop: in-context generation of counterfactual candidates (§3.3, appendix E).

For each (caption, aspect) query the prompt of Tab. 15 is built with the aspect's instruction
and demonstrations drawn from X+ and X^NA, and sent through :class:`~foilkit.generation.llm.
ChatClient` (any OpenAI-compatible server; cached, retried, concurrent). Each answer becomes a
:class:`Candidate`: a counterfactual, or an ``na`` answer when the LLM says the caption has no
such aspect. The demonstrations of a query are drawn with a random generator seeded by the run
seed and the query, so the same query always gets the same prompt (and a rerun hits the cache)
whatever else is in the batch.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from foilkit.builders.vitatecs import ASPECTS
from foilkit.generation.llm import ChatClient
from foilkit.generation.llm_replies import (
    is_chatter,
    is_not_answer,
    is_refusal,
    strip_special_tokens,
)
from foilkit.generation.prompts import prompt_hash
from foilkit.generation.vitatecs.exemplars import ExemplarSets
from foilkit.generation.vitatecs.prompt import AspectSpec, CounterfactualPrompt

# Candidate statuses, in the order the stages set them.
CANDIDATE = "candidate"  # a counterfactual waiting for the filters
NA_ANSWER = "na"  # the LLM answered NA: the caption has no such aspect
UNCHANGED = "unchanged"  # the answer repeats the caption
EMPTY = "empty"  # no usable text in the answer
REFUSAL = "refusal"  # the LLM declined: a parse failure, never a candidate
UNPARSED = "unparsed"  # the reply holds only chat, no answer line: a parse failure
PARSE_FAILURES = (REFUSAL, UNPARSED)
REQUEST_FAILED = "request_failed"  # no usable reply after the retries: parked, asked again later
ENTAILED = "entailed"  # rejected by the NLI filter, criterion (a)
REJECTED = "rejected"  # the filter model did not classify it into an aspect with confidence
OTHER_ASPECT = "other_aspect"  # accepted by the filter, but for another aspect than asked
ACCEPTED = "accepted"  # classified into an aspect by the filter model
TOXIC = "toxic"  # dropped by the safety filter
SELECTED = "selected"  # kept in the final dataset
REDUNDANT = "redundant"  # a more diverse candidate was kept instead

# The label the prompt ends with ("Modified Description:"), and the ones models use for it.
_ANSWER_LABEL = re.compile(r"\b(?:modified description|counterfactual|answer)\s*:\s*", re.I)
_ECHO = re.compile(r"^\W*original description\s*:", re.IGNORECASE)  # the query repeated
_NA = re.compile(r"^\W*(?:N/?A|n/?a)(?:\W.*)?$", re.DOTALL)


@dataclass(frozen=True)
class Query:
    """A caption to write a counterfactual for, in one aspect.

    ``id`` identifies the caption (its video and sentence) across aspects; ``src_dataset`` and
    ``video_name`` locate its video in the VITATECS layout (``<src_dataset>/<video_name>``).
    """

    id: str
    caption: str
    aspect: str
    src_dataset: str = ""
    video_name: str = ""

    def __post_init__(self) -> None:
        if self.aspect not in ASPECTS:
            raise ValueError(f"query {self.id!r}: aspect {self.aspect!r} not in {ASPECTS}")
        if not self.caption.strip():
            raise ValueError(f"query {self.id!r}: empty caption")


@dataclass(frozen=True)
class Candidate:
    """One answer of the LLM to one query, and what the filters made of it.

    Attributes:
        query: the query answered.
        counterfactual: the parsed counterfactual (``None`` for NA/empty answers).
        raw: the answer as the LLM wrote it.
        status: where the candidate stands (see the module constants).
        sample: which answer of the query this is (several prompts or choices per query).
        prompt_hash: SHA-256 of the prompt's chat messages
            (:func:`foilkit.generation.prompts.prompt_hash`).
        request_key: the LLM request's cache key (prompt, model and sampling).
        model: the LLM that wrote it.
        iteration: the loop iteration it was generated in.
        exemplar_version: the version of the exemplar sets its demonstrations came from.
        label: the filter model's class (an aspect or ``"invalid"``), once filtered.
        scores: per filter, the scores it gave (``nli``, ``filter``, ``toxicity``).
        request_seed: the sampling seed sent with the LLM request (``None``: none was sent).
    """

    query: Query
    counterfactual: str | None
    raw: str
    status: str
    sample: int
    prompt_hash: str
    request_key: str
    model: str
    iteration: int
    exemplar_version: int
    label: str | None = None
    scores: Mapping[str, Any] = field(default_factory=dict)
    request_seed: int | None = None

    @property
    def id(self) -> str:
        return f"{self.query.id}:{self.query.aspect}:{self.sample}"

    def with_status(self, status: str, *, label: str | None = None, **scores: Any) -> Candidate:
        """A copy with a new status (and filter label, if given) and more scores recorded."""
        return dataclasses.replace(
            self,
            status=status,
            label=self.label if label is None else label,
            scores={**self.scores, **scores},
        )

    def to_record(self) -> dict[str, Any]:
        record = dataclasses.asdict(self)
        record["id"] = self.id
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Candidate:
        values = {k: v for k, v in record.items() if k != "id"}
        values["query"] = Query(**values["query"])
        return cls(**values)


def parse_answer(text: str, caption: str, na_answer: str = "NA") -> tuple[str | None, str]:
    """The counterfactual in an LLM answer and the candidate status it gives.

    The answer is what follows the prompt's ``Modified Description:`` label wherever it stands
    (on its line, else on the next), else the first line that is not chat ("Sure! Here is the
    modified description you asked for:"), a refusal, or the query repeated; a reply that
    declines on any line and labels no answer is a refusal ("I'm sorry, I cannot.\nIf you have
    another description, I'd be glad to help."); quotation marks
    around the whole answer are dropped; a model's special tokens ("<|start_header_id|>assistant
    <|end_header_id|>") are dropped from every line, and an answer that is an API's error body or
    not in English is none (``unparsed``). An answer of fewer than two words is not a description
    (``unparsed``). ``NA``/``N/A`` (alone or followed by an explanation) is an N/A answer. A reply
    without an answer is a parse failure, never a candidate: ``refusal`` when the model
    declined, else ``unparsed``. The final full stop follows the caption's, so a
    counterfactual differs from its caption only in words.
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if not lines:
        return None, EMPTY
    lines = [line for line in map(strip_special_tokens, lines) if line]
    if not lines:  # special tokens only
        return None, UNPARSED
    answer, labelled = _answer_line(lines)
    declined = any(is_refusal(line) for line in (*lines, answer or ""))
    if answer is None or is_refusal(answer) or (declined and not labelled):
        return None, REFUSAL if declined else UNPARSED
    answer = _unquote(answer)
    if answer == na_answer or _NA.match(answer):
        return None, NA_ANSWER
    answer = answer.rstrip(".").rstrip()
    if not answer:
        return None, EMPTY
    if is_not_answer(answer):  # an error body, a line not in English, behind the label
        return None, UNPARSED
    if len(re.findall(r"[^\W\d_]+", answer)) < 2:  # "null", "-": no description of a video
        return None, UNPARSED
    if caption.rstrip().endswith("."):
        answer += "."
    if _normalise(answer) == _normalise(caption):
        return answer, UNCHANGED
    return answer, CANDIDATE


def _answer_line(lines: Sequence[str]) -> tuple[str | None, bool]:
    """The line (or labelled part of one) of a reply that holds its answer, if any does, and
    whether the answer label marked it."""
    for index, line in enumerate(lines):
        label = _ANSWER_LABEL.search(line)
        if label is not None and not _ECHO.match(line):
            after = line[label.end() :].strip()
            if after:
                return after, True
            if index + 1 < len(lines):
                return lines[index + 1], True
    unlabelled = (line for line in lines if not (is_chatter(line) or _ECHO.match(line)))
    return next(unlabelled, None), False


_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’"}


def _unquote(answer: str) -> str:
    """The answer without the quotation marks around the whole of it; a quotation inside or at
    the end of the answer (``a girl sings "happy birthday"``) is the description's own."""
    core = answer.rstrip(".").rstrip()  # '"A man opens the door".'
    if len(core) > 1 and _QUOTES.get(core[0]) == core[-1]:
        return core[1:-1].strip()
    return answer


def _normalise(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


@dataclass(frozen=True)
class GenerationSettings:
    """How prompts are built: demonstrations per query (appendix E: 6 positive, 2 N/A) and how
    many prompts (each with its own demonstrations) are sent per query."""

    positives_per_prompt: int = 6
    na_per_prompt: int = 2
    prompts_per_query: int = 1


PAPER_SETTINGS = GenerationSettings()


def build_prompts(
    queries: Sequence[Query],
    *,
    exemplars: ExemplarSets,
    prompt: CounterfactualPrompt,
    aspects: Mapping[str, AspectSpec],
    settings: GenerationSettings,
    seed: int,
) -> list[tuple[Query, int, list[dict[str, str]]]]:
    """(query, sample, chat messages) for every prompt of every query."""
    prompts = []
    for query in queries:
        for sample in range(settings.prompts_per_query):
            rng = random.Random(f"{seed}:{query.id}:{query.aspect}:{sample}")
            demonstrations = exemplars.demonstrations(
                query.aspect,
                rng,
                positives=settings.positives_per_prompt,
                na=settings.na_per_prompt,
            )
            instruction = aspects[query.aspect].instruction
            prompts.append(
                (query, sample, prompt.render(instruction, demonstrations, query.caption))
            )
    return prompts


def generate_candidates(
    queries: Sequence[Query],
    *,
    client: ChatClient,
    exemplars: ExemplarSets,
    prompt: CounterfactualPrompt,
    aspects: Mapping[str, AspectSpec],
    settings: GenerationSettings = PAPER_SETTINGS,
    seed: int = 0,
    iteration: int = 0,
    progress: bool = True,
) -> list[Candidate]:
    """Candidates for every query: one per prompt and per choice the LLM returns.

    A request that gets no usable reply after the client's retries does not stop the others:
    it is parked (:attr:`ChatClient.failures`) and stands as one ``request_failed`` candidate
    holding its key and the reply; being uncached, it is asked again on a rerun.
    """
    prompts = build_prompts(
        queries,
        exemplars=exemplars,
        prompt=prompt,
        aspects=aspects,
        settings=settings,
        seed=seed,
    )
    completions = client.complete_many(
        [messages for _, _, messages in prompts], progress=progress, park=True
    )
    candidates = []
    for (query, sample, messages), completion in zip(prompts, completions, strict=True):
        made = functools.partial(  # where each answer of this request came from
            Candidate,
            query=query,
            prompt_hash=prompt_hash(messages),
            request_key=completion.key,
            model=client.config.model,
            iteration=iteration,
            exemplar_version=exemplars.version,
            request_seed=completion.seed,
        )
        if completion.failure is not None:  # parked: recorded with its key and reply
            raw, first = completion.failure.reply or "", sample * client.config.n
            candidates.append(
                made(counterfactual=None, raw=raw, status=REQUEST_FAILED, sample=first)
            )
        for choice, text in enumerate(completion.texts):
            counterfactual, status = parse_answer(text, query.caption, prompt.na_answer)
            number = sample * len(completion.texts) + choice
            candidates.append(
                made(counterfactual=counterfactual, raw=text, status=status, sample=number)
            )
    return candidates


def status_counts(candidates: Iterable[Candidate]) -> dict[str, int]:
    """How many candidates have each status."""
    counts: dict[str, int] = {}
    for candidate in candidates:
        counts[candidate.status] = counts.get(candidate.status, 0) + 1
    return dict(sorted(counts.items()))
