"""The video LLM's modes are written once over the backends (:mod:`foilkit.scorers.modes`): a
backend registered by name answers the three questions, and every mode runs through it
unchanged. The fake backend here prefers the text that says "right" and shows a position bias
(it says "A" more often), so each mode's arithmetic is visible in its scores."""

from __future__ import annotations

import json
import math

import pytest
import torch

from foilkit.builders.velociti.answers import ENTAIL_QUESTION
from foilkit.scorers.modes import LIKELIHOOD_QUESTION, FirstTokens, VideoLLM
from foilkit.scorers.requests import Generations, TextsRequest
from foilkit.scorers.serving import SERVING_BACKENDS

TEXTS = ("a dog runs to the left", "a dog runs to the right")
BROKEN = "the server cut this one off"


class Fake(VideoLLM):
    """A third backend: no model, a rule. It records what the modes asked it."""

    def __init__(self, model_id: str, **kwargs):
        super().__init__(model_id, **kwargs)
        self.asked: list[str] = []

    def generate(self, requests):
        answers = []
        for request in requests:
            question = request.messages[-1]["content"][-1]["text"]
            self.asked.append(question)
            letter = "A" if question.index("right") < question.index("left") else "B"
            answers.append(Generations((f"({letter})",) * request.decoding.num_samples))
        return answers

    def answer_logprobs(self, requests):
        results = []
        for request in requests:
            if BROKEN in request.texts:
                results.append(("the reply was too large", "reply too large"))
                continue
            answers = request.answers if request.question is not None else request.texts
            self.asked.append(request.question or LIKELIHOOD_QUESTION)
            results.append(  # a token per word; -1 each for the text saying "right", else -2
                [
                    torch.full((len(answer.split()),), -1.0 if "right" in text else -2.0)
                    for answer, text in zip(answers, request.texts)
                ]
            )
        return results

    def first_tokens(self, asks):
        read = []
        for ask in asks:
            self.asked.append(ask.question)
            if BROKEN in ask.request.texts:
                read.append(("refused", "refused"))
            elif ask.count is None:  # entail: yes for "right"
                yes = 0.9 if "right" in ask.question else 0.2
                vocabulary = torch.tensor([yes / 2, (1 - yes) / 2])
                read.append(FirstTokens(vocabulary.log() + 7.0, vocabulary))
            else:  # choice: "A" four times as likely as any other letter
                logits = torch.tensor([math.log(4.0)] + [0.0] * (ask.count - 1))
                read.append(FirstTokens(logits))
        return read


@pytest.fixture
def fake_backend():
    SERVING_BACKENDS.add("fake", Fake, "a rule standing in for a model (tests)")
    yield SERVING_BACKENDS.get("fake")
    SERVING_BACKENDS.remove("fake")


def request(*texts: str, **own) -> TextsRequest:
    return TextsRequest(texts or TEXTS, torch.zeros(2, 3, 4, 4, dtype=torch.uint8), **own)


def test_the_in_process_and_served_backends_are_registered_by_name():
    from foilkit.scorers.adapters.video_llm import VideoLLMAdapter
    from foilkit.scorers.served import ServedVideoLLM

    assert SERVING_BACKENDS.get("local") is VideoLLMAdapter
    assert SERVING_BACKENDS.get("openai") is ServedVideoLLM
    assert VideoLLMAdapter.name == ServedVideoLLM.name == "video-llm"
    assert "score" not in vars(VideoLLMAdapter) and "score" not in vars(ServedVideoLLM)


@pytest.mark.parametrize(
    ("reduction", "expected"), [("mean", (-2.0, -1.0)), ("sum", (-12.0, -6.0))]
)
def test_likelihood_runs_through_a_registered_backend(fake_backend, reduction, expected):
    model = fake_backend("fake-vlm", mode="likelihood", reduction=reduction)
    (scored,) = model.score([request()])
    assert scored.scores == expected
    assert scored.details["num_tokens"] == (6.0, 6.0)
    assert model.asked == [LIKELIHOOD_QUESTION]
    assert model.describe()["reduction"] == reduction


def test_choice_averages_every_order_and_own_questions_take_their_answers(fake_backend):
    model = fake_backend("fake-vlm", mode="choice")
    own = request(question="Which way? (A) left (B) right", answers=("A", "B"))
    plain, asked, three = model.score([request(), own, request("x", "y", "a right turn")])
    # "A" is 0.8 in each order: order 0 shows the texts as given, order 1 the other way round
    assert plain.details["order_0"] == pytest.approx((0.8, 0.2))
    assert plain.details["order_1"] == pytest.approx((0.2, 0.8))
    assert plain.scores == pytest.approx((0.5, 0.5))
    assert three.scores == pytest.approx((1 / 3,) * 3)  # each text is "A" in one order of three
    # its own question: the softmax of the answers' summed log-probabilities (-2 vs -1)
    assert asked.scores == pytest.approx((1 / (1 + math.e), math.e / (1 + math.e)))
    assert len(model.asked) == 1 + 2 + 3
    assert model.describe()["prompt_name"] == "vitatecs"


def test_entail_asks_velocitis_question_per_text(fake_backend):
    model = fake_backend("fake-vlm", mode="entail")
    (scored,) = model.score([request()])
    assert scored.scores == pytest.approx((0.2, 0.9))
    assert scored.details["p_yes"] == pytest.approx((0.1, 0.45))
    assert model.asked == [ENTAIL_QUESTION.format(caption=text) for text in TEXTS]


def test_generate_reads_the_backends_answers_in_every_order(fake_backend):
    model = fake_backend("fake-vlm", mode="generate", num_samples=2, temperature=1.0)
    (scored,) = model.score([request()])
    assert scored.scores == (0.0, 1.0)
    assert [answer.text for answer in scored.answers] == ["(B)", "(B)", "(A)", "(A)"]
    assert len(model.asked) == 2


@pytest.mark.parametrize("mode", ["likelihood", "choice", "entail"])
def test_a_request_the_backend_failed_alone_fails_its_rows_and_no_other(fake_backend, mode):
    model = fake_backend("fake-vlm", mode=mode)
    broken, fine = model.score([request("one", BROKEN), request()])
    assert broken.fault is not None and broken.scores == (0.0, 0.0)
    assert fine.fault is None


def test_an_unknown_backend_names_the_registered_ones():
    with pytest.raises(ValueError, match="unknown backend 'vllm'; choose from: local, openai"):
        SERVING_BACKENDS.get("vllm")


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_a_registered_backend_is_a_choice_of_backend_and_listed_in_the_help(
    fake_backend, command, capsys
):
    """``--backend``'s choices are the registry's names, read when the parser is made: a third
    backend is one registry entry, not an edit of the options."""
    from foilkit.cli import command_parser, main
    from foilkit.scorers.options import ScoreOptions

    _, parser = command_parser(command)
    args = parser.parse_args(["--model", "m", "--dataset", "d", "--out", "o", "--backend", "fake"])
    assert args.backend == "fake"
    assert ScoreOptions(backend="fake").backend == "fake"
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "local, openai, fake" in " ".join(capsys.readouterr().out.split())


def test_an_unregistered_backend_is_a_usage_error_naming_the_registered_ones(capsys):
    from foilkit.cli import command_parser
    from foilkit.scorers.options import ScoreOptions

    _, parser = command_parser("score")
    with pytest.raises(SystemExit):
        parser.parse_args(["--model", "m", "--dataset", "d", "--out", "o", "--backend", "fake"])
    assert "invalid choice: 'fake' (choose from" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown backend 'fake' .--backend.; choose from: local"):
        ScoreOptions(backend="fake")


class ServedFake(Fake):
    """:class:`Fake` as a served backend: what it connects with is made once per run."""

    made: list[str] = []

    @classmethod
    def serving(cls, options):
        cls.made.append(options.backend)
        return f"connection for {options.backend}"

    def __init__(self, model_id: str, *, server: str, device: str, **kwargs):
        assert device == "cpu"
        super().__init__(model_id, **kwargs)
        self.server = server

    def backend_record(self):
        return {"name": "served-fake", "server": self.server}


def test_a_third_backend_runs_a_whole_evaluation_without_touching_the_job(tmp_path):
    """Registered by name with its ``serving`` classmethod, a backend is run by ``evaluate``:
    its connection made once, every row scored by its rule (the caption says "right")."""
    from foilkit.demo import DEMO_BENCHMARK, write_demo_benchmark
    from foilkit.evaluation import evaluate
    from foilkit.scorers.options import ScoreOptions

    benchmark = write_demo_benchmark(tmp_path / "benchmark")
    SERVING_BACKENDS.add("served-fake", ServedFake, "a rule behind a connection (tests)")
    ServedFake.made.clear()
    try:
        result = evaluate(
            DEMO_BENCHMARK,
            "fake-vlm",
            config="direction",
            dataset=benchmark,
            videos=benchmark / "videos",
            out_dir=tmp_path / "run",
            n_resamples=10,
            score_options=ScoreOptions(backend="served-fake", mode="choice", num_frames=2),
        )
    finally:
        SERVING_BACKENDS.remove("served-fake")
    assert ServedFake.made == ["served-fake"]
    record = json.loads((result.run_dir / "scoring" / "direction" / "run.json").read_text())
    assert record["backend"] == {"name": "served-fake", "server": "connection for served-fake"}
    assert record["adapter"]["adapter"] == "video-llm" and record["mode"] == "choice"
    results = json.loads((result.run_dir / "results.json").read_text())
    overall = results["configs"]["direction"]["metrics"]["pairwise_foil_accuracy"]["overall"]
    # choice mode over the rule's position bias: each text is "A" in one of the two orders
    assert overall["n"] == 16 and overall["n_tied"] == 16
