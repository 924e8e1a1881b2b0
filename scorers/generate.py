"""``generate`` mode: ask the multiple-choice question, read the answers, score the texts.

What is asked and how answers become scores is the same whatever generates them; a backend
only turns :class:`~foilkit.scorers.requests.GenerateRequest` into
:class:`~foilkit.scorers.requests.Generations` (:class:`GeneratingBackend`). For each
:class:`~foilkit.scorers.requests.TextsRequest` (a caption and its foils about one view):

1. the options are shown in every cyclic order (order ``k`` shows text ``(k + j) mod n`` at
   position ``j``; order 0 lists the caption first), so a model that always answers "A" is
   right exactly as often as it is wrong, as in ``choice`` mode;
2. each order is answered ``num_samples`` times (one greedy answer by default);
3. each answer is read by the benchmark's parser (:mod:`foilkit.scorers.parsers`) into the
   text it chose, or recorded ``unparseable`` / ``refused`` and choosing nothing;
4. a text's score is the share of all answers that chose it (score kind ``probability``): the
   caption beats a foil when it was chosen more often, and an item whose answers choose nothing
   ties at 0, which VITATECS' strict tie policy counts wrong, as the official scripts count an
   answer they cannot read. ``order_<k>`` holds the share of order ``k``'s samples, and, with
   several samples, ``sample_<s>`` the share of sample ``s``'s orders, from which the
   accuracy of each sample and its spread are computed.

A request that carries its own ``question`` (TempCompass, TOMATO: the row's ``prompt``, its
options listed in the published order) is asked that question as it is, once, in the model's
chat template with no system prompt, as the benchmarks' official inference asks it; its answers
are read with the labels the question gives the texts (``request.answers``: ``A``,
``Sentence B``, ``yes``), and scored as above with the one order the question shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from foilkit.scorers.judge import Judge, JudgeCase, Verdict, judge_protocol
from foilkit.scorers.output import ORDER_DETAIL, SAMPLE_DETAIL
from foilkit.scorers.parsers import (
    DEFAULT_PARSER,
    PARSED,
    REFUSED,
    UNPARSEABLE,
    AnswerParser,
    get_parser,
)
from foilkit.scorers.prompts import LETTERS, choice_messages, question_text
from foilkit.scorers.requests import (
    DECODING_SETTINGS,
    Answer,
    Decoding,
    GenerateRequest,
    Generations,
    TextScores,
    TextsRequest,
)


class GeneratingBackend(Protocol):
    """What a backend implements to answer in ``generate`` mode (the in-process video LLM,
    or an OpenAI-compatible server): one :class:`Generations` per request, in order, with
    ``decoding.num_samples`` texts each."""

    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generations]: ...


def check_generation(settings: Mapping[str, Any], judged: bool = False) -> None:
    """Refuse a protocol's decoding settings or parser that generate mode cannot run (a
    ``ValueError`` naming the flag), before any model loads; ``judged``: whether an LLM judge
    is configured (a parser without rules needs one)."""
    Decoding(**{k: settings[k] for k in DECODING_SETTINGS if settings.get(k) is not None})
    name = settings.get("parser") or DEFAULT_PARSER
    get_parser(name)
    if not judged:
        protocol = judge_protocol(name)
        if protocol is not None and protocol.every_answer:
            raise ValueError(
                f"answers read by {name!r} are scored by the official LLM judge alone (no rules "
                "read them): configure one with --judge-model NAME (--judge-base-url URL, "
                "--judge-api-key-env VAR)"
            )


def cyclic_orders(count: int) -> list[list[int]]:
    """Every cyclic order of ``count`` options: position ``k`` of order ``shift`` shows text
    ``order[k]``."""
    return [[(shift + k) % count for k in range(count)] for shift in range(count)]


def generate_requests(
    request: TextsRequest, prompt: str, decoding: Decoding
) -> list[GenerateRequest]:
    """The questions asked about ``request``'s texts, with its frames: its own question once
    (no system prompt), else the ``prompt`` question once per cyclic order."""
    if request.question is not None:
        messages = choice_messages(prompt, request.question, None)
        return [GenerateRequest(tuple(messages), request.frames, request.timestamps, decoding)]
    count = len(request.texts)
    if count > len(LETTERS):
        raise ValueError(f"generate mode takes at most {len(LETTERS)} options, got {count}")
    return [
        GenerateRequest(
            tuple(
                choice_messages(
                    prompt, question_text(prompt, [request.texts[i] for i in order]), count
                )
            ),
            request.frames,
            request.timestamps,
            decoding,
        )
        for order in cyclic_orders(count)
    ]


def _orders(count: int, labels: Sequence[str] | None) -> list[list[int]]:
    """The option orders answered: every cyclic one, or the published one of a request's own
    question (``labels``)."""
    return cyclic_orders(count) if labels is None else [list(range(count))]


def read_answers(
    texts: Sequence[str],
    generations: Sequence[Generations],
    parser: AnswerParser,
    labels: Sequence[str] | None = None,
    verdicts: Mapping[tuple[int, int], Verdict] | None = None,
) -> TextScores:
    """Scores of ``texts`` from the answers to each cyclic order (``generations[k]``: order
    ``k``'s samples): each text's share of the answers that chose it, with the per-order and
    per-sample shares as details and every answer as read. With ``labels`` (how a request's
    own question names each text), ``generations`` holds the answers to that one question,
    read with those labels. ``verdicts``: the LLM judge's, by (order, sample), for the answers
    it was asked about (their choice, outcome and reply replace the rules'). A generation or
    verdict with a ``fault`` (its request failed alone) fails the request with it."""
    count = len(texts)
    fault = next((g.fault for g in generations if g.fault is not None), None)
    fault = fault or next((v.fault for v in (verdicts or {}).values() if v.fault), None)
    if fault is not None:  # a request (the answer's or the judge's) that failed alone
        return TextScores(tuple(0.0 for _ in texts), fault=fault)
    orders = _orders(count, labels)
    if len(generations) != len(orders):
        raise ValueError(f"{len(generations)} generations for {len(orders)} option orders")
    samples = {len(g.texts) for g in generations}
    if len(samples) != 1 or 0 in samples:
        raise ValueError(f"every order needs the same number of answers, got {sorted(samples)}")
    num_samples = samples.pop()
    chosen = [[0] * count for _ in range(len(orders) * num_samples)]  # [order*S + sample][text]
    answers = []
    for shift, (order, generated) in enumerate(zip(orders, generations)):
        shown = [texts[i] for i in order]
        for sample, text in enumerate(generated.texts):
            parsed = parser(text, shown, None if labels is None else [labels[i] for i in order])
            verdict = (verdicts or {}).get((shift, sample))
            if verdict is not None:
                outcome, position = verdict.outcome, verdict.choice
            else:
                outcome = parsed.outcome
                position = parsed.choice if outcome == PARSED else None
            choice = None if position is None else order[position]
            if choice is not None:
                chosen[shift * num_samples + sample][choice] = 1
            judged = (
                {}
                if verdict is None
                else {
                    "judge_reply": verdict.reply,
                    "judge_verdict": verdict.verdict,
                }
            )
            answers.append(Answer(text, outcome, choice, shift, sample, **judged))

    def share(cells: list[list[int]]) -> tuple[float, ...]:
        return tuple(sum(cell[i] for cell in cells) / len(cells) for i in range(count))

    details = {
        f"{ORDER_DETAIL}{shift}": share(chosen[shift * num_samples : (shift + 1) * num_samples])
        for shift in range(len(orders))
    }
    if num_samples > 1:
        for sample in range(num_samples):
            details[f"{SAMPLE_DETAIL}{sample}"] = share(chosen[sample::num_samples])
    return TextScores(share(chosen), details, tuple(answers))


def judge_answers(
    judge: Judge,
    requests: Sequence[TextsRequest],
    generations: Sequence[Sequence[Generations]],
    parser: AnswerParser,
) -> list[dict[tuple[int, int], Verdict]]:
    """The judge's verdicts on the answers its protocol asks it about (those the rules leave
    ``unparseable``, or every answer given: TempCompass captioning), per request by (order,
    sample); all asked at once."""
    cases, where = [], []
    for number, (request, answered) in enumerate(zip(requests, generations)):
        if any(generated.fault is not None for generated in answered):
            continue  # no answers to judge: the row fails with the request's fault
        count = len(request.texts)
        labels = request.answers
        for shift, order in enumerate(_orders(count, labels)):
            shown = tuple(request.texts[i] for i in order)
            named = tuple(LETTERS[:count]) if labels is None else tuple(labels[i] for i in order)
            for sample, text in enumerate(answered[shift].texts):
                outcome = parser(text, shown, None if labels is None else named).outcome
                if outcome == UNPARSEABLE or (judge.protocol.every_answer and outcome != REFUSED):
                    case = JudgeCase(text, shown, named, order.index(0), request.reference)
                    cases.append(case)
                    where.append((number, shift, sample))
    verdicts: list[dict[tuple[int, int], Verdict]] = [{} for _ in requests]
    for (number, shift, sample), verdict in zip(where, judge.judge(cases) if cases else []):
        verdicts[number][shift, sample] = verdict
    return verdicts


def score_by_generation(
    backend: GeneratingBackend,
    requests: Sequence[TextsRequest],
    *,
    prompt: str,
    decoding: Decoding,
    parser: AnswerParser,
    judge: Judge | None = None,
) -> list[TextScores]:
    """Each request's texts scored from ``backend``'s answers to its own question, else to the
    ``prompt`` question in every option order (one backend call for all of them); with a
    ``judge``, the answers its official protocol asks it about are read by it."""
    asked = [generate_requests(request, prompt, decoding) for request in requests]
    generations = backend.generate([question for questions in asked for question in questions])
    answered, start = [], 0
    for questions in asked:
        answered.append(generations[start : start + len(questions)])
        start += len(questions)
    verdicts: list[dict[tuple[int, int], Verdict]] = [{} for _ in requests]
    if judge is not None:
        verdicts = judge_answers(judge, requests, answered, parser)
    return [
        read_answers(request.texts, mine, parser, request.answers, found)
        for request, mine, found in zip(requests, answered, verdicts)
    ]
