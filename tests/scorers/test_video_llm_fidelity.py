"""The video LLM adapter sees what the real checkpoints see: score kinds and reductions, the
frames' real time axis, and the token ids of the whole rendered chat template."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from answering_model import assert_greedy_answer_follows_the_logits
from conformance import (
    INTERVAL,
    TEXTS,
    TIMESTAMPS,
    answered_prompts,
    choice_prompts,
    full_forward_logprob,
    has_real_tokenizer,
    scored_calls,
    user_turn,
)

import foilkit
from foilkit.answers import LETTERS
from foilkit.builders.velociti.answers import ENTAIL_QUESTION
from foilkit.builders.vitatecs.answers import lmms_eval_question
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.adapters.video_llm import VideoLLMAdapter
from foilkit.scorers.modes import LIKELIHOOD_QUESTION
from foilkit.scorers.requests import TextScores, TextsRequest
from foilkit.synthetic.models import TOKENS_PER_SECOND, fidelity_model_path

REAL_TOKENIZER_MODELS = {"llava-next-video-llama2": "llama2", "qwen2.5-vl-qwen3": "qwen3"}


def _path(name: str, tiny_model) -> str:
    return (
        tiny_model(name)
        if name in ("llava-next-video", "qwen2-vl")
        else str(fidelity_model_path(name))
    )


def _adapter(name: str, tiny_model, **options) -> VideoLLMAdapter:
    return load_adapter(_path(name, tiny_model), device="cpu", **options)


# --- score kinds and reductions ------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode, kind",
    [("likelihood", "log_probability"), ("choice", "probability"), ("entail", "probability")],
)
def test_each_mode_declares_its_score_kind(mode, kind, tiny_model):
    adapter = _adapter("llava-next-video", tiny_model, mode=mode)
    assert adapter.score_kind == kind
    assert adapter.describe()["score_kind"] == kind


def test_likelihood_scores_pass_vilmas_metric(tiny_model, frames):
    """ViLMA's metric refused likelihood scores declared as probabilities (-6.78 not in [0, 1])."""
    from foilkit.metrics.proficiency_combined_accuracy.proficiency_combined_accuracy import (
        proficiency_combined_accuracy,
    )

    adapter = _adapter("llava-next-video", tiny_model, mode="likelihood")
    main, proficiency = adapter.score(
        [TextsRequest(TEXTS, frames), TextsRequest(("a red square", "a blue square"), frames)]
    )
    assert all(score < 0 for score in main.scores + proficiency.scores)
    result = proficiency_combined_accuracy(
        [main.scores[0]],
        [[main.scores[1]]],
        [proficiency.scores[0]],
        [[proficiency.scores[1]]],
        score_kind=adapter.score_kind,
        n_resamples=0,
    )
    assert 0.0 <= result["combined_accuracy"] <= 1.0


@pytest.mark.parametrize(
    ("options", "field", "value"),
    [
        ({"mode": "likelihood"}, "reduction", "mean"),
        ({"mode": "likelihood", "reduction": "sum"}, "reduction", "sum"),
        ({"mode": "choice", "prompt": "lmms-eval"}, "prompt_name", "lmms-eval"),
        ({"mode": "choice"}, "prompt_name", "vitatecs"),
        ({"mode": "choice", "prompt": "temporalbench"}, "prompt_name", "temporalbench"),
        ({"mode": "likelihood", "continuation": "turn"}, "continuation", "turn"),
    ],
)
def test_each_mode_records_its_options(tiny_model, options, field, value):
    """The reduction and continuation are likelihood options, the prompt a choice option."""
    assert _adapter("llava-next-video", tiny_model, **options).describe()[field] == value


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "choice", "reduction": "mean"}, "likelihood mode only"),
        ({"mode": "likelihood", "reduction": "max"}, "unknown reduction 'max'"),
        ({"mode": "likelihood", "prompt": "lmms-eval"}, "choice and generate modes only"),
        ({"mode": "choice", "continuation": "turn"}, "likelihood mode only"),
        ({"mode": "choice", "prompt": "mvbench"}, "unknown prompt 'mvbench'"),
    ],
)
def test_an_option_of_the_other_mode_or_an_unknown_value_is_refused(tiny_model, options, message):
    with pytest.raises(ValueError, match=message):
        _adapter("llava-next-video", tiny_model, **options)


def test_lmms_eval_question_is_its_vitatecs_task():
    """``lmms_eval/tasks/vitatecs/utils.py``: options capitalised with a full stop, one per line,
    then the task's ``post_prompt``."""
    assert lmms_eval_question(["a man opens the door", "A man closes the Door."]) == (
        "Which of the following best describes the content of the video: \n(A) A man opens the "
        "door. \n(B) A man closes the door.\nPlease response with a single letter (A or B):"
    )


def _reference_loss(
    adapter: VideoLLMAdapter, frames: torch.Tensor, text: str, turn: bool
) -> tuple[float, int]:
    """lmms-eval's ``loglikelihood`` for a video LLM (``llava_hf.py``): one forward over the
    prompt with the answer, ``labels`` masking the prompt, the model's mean cross-entropy (and
    the token count). lmms-eval scores the whole turn (``turn``); foilkit's default the text.
    A port, for every twin and its own chat template (content lists, the video as a video);
    ``test_lmms_eval_fidelity.py`` runs lmms-eval's own code where it can run at all."""
    messages = [user_turn(LIKELIHOOD_QUESTION)]
    prompt = adapter.processor.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=False
    )
    answered = adapter.processor.apply_chat_template(
        messages + [{"role": "assistant", "content": [{"type": "text", "text": text}]}],
        add_generation_prompt=False,
        tokenize=False,
    )
    answer = answered[len(prompt) :]
    if not turn:
        answer = answer[: answer.index(text) + len(text)]  # the answer's tokens only
    inputs = adapter.processor(text=[prompt + answer], videos=[frames], return_tensors="pt")
    count = len(adapter.tokenizer(prompt + answer)["input_ids"]) - len(
        adapter.tokenizer(prompt)["input_ids"]
    )
    labels = inputs["input_ids"].clone()
    labels[:, :-count] = -100
    with torch.inference_mode():
        return float(adapter.model(**inputs, labels=labels).loss), count


@pytest.mark.parametrize("name", ["llava-next-video", "qwen2-vl"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("continuation", ["answer", "turn"])
def test_reductions_give_the_reference_numbers(name, reduction, continuation, tiny_model, frames):
    adapter = _adapter(
        name, tiny_model, mode="likelihood", reduction=reduction, continuation=continuation
    )
    scored = adapter.score([TextsRequest(TEXTS, frames)])[0]
    for position, text in enumerate(TEXTS):
        loss, count = _reference_loss(adapter, frames, text, continuation == "turn")
        expected = -loss if reduction == "mean" else -loss * count
        assert scored.scores[position] == pytest.approx(expected, abs=1e-4)
        assert scored.details["num_tokens"][position] == count


# --- the time axis -------------------------------------------------------------------------------


def _video_positions(adapter: VideoLLMAdapter, call: dict) -> torch.Tensor:
    """The temporal position ids of the video tokens of a recorded prefix forward."""
    model = adapter.model.model
    keys = (
        "input_ids",
        "mm_token_type_ids",
        "video_grid_thw",
        "second_per_grid_ts",
        "attention_mask",
    )
    positions, _ = model.get_rope_index(**{key: call.get(key) for key in keys})
    video = call["input_ids"][0] == adapter.model.config.video_token_id
    return positions[0, 0, video]


def test_qwen2_5_vl_generates_what_its_logits_rank_first(tiny_model, frames):
    """``generate`` mode with Qwen2.5-VL's time axis (the frames' real timestamps): a greedy
    answer is the full forward's argmax."""
    adapter = _adapter("qwen2.5-vl", tiny_model, mode="generate")
    times = tuple(0.5 * k for k in range(len(frames)))
    assert_greedy_answer_follows_the_logits(adapter, frames, TEXTS, times)


@pytest.mark.parametrize("order", ["forward", "reversed", "shuffled"])
def test_qwen2_5_vl_temporal_ids_follow_the_real_frame_spacing(order, tiny_model, frames):
    adapter = _adapter("qwen2.5-vl", tiny_model, mode="likelihood")
    shown = {
        "forward": np.arange(8),
        "reversed": np.arange(8)[::-1],
        "shuffled": np.array([3, 0, 7, 1, 6, 2, 5, 4]),
    }[order]
    prefix, *_ = scored_calls(
        adapter, frames[shown.copy()], timestamps=tuple(np.array(TIMESTAMPS)[shown])
    )
    # 2 frames a temporal patch, 0.75 s apart: 1.5 s a patch, whatever order they are shown in
    assert prefix["second_per_grid_ts"].tolist() == pytest.approx([2 * INTERVAL])
    steps = torch.unique(_video_positions(adapter, prefix)).diff()
    assert (
        steps.tolist() == [int(TOKENS_PER_SECOND * 2 * INTERVAL)] * 3
    )  # increasing, at the real rate


def test_qwen2_vl_temporal_ids_count_temporal_patches(tiny_model, frames):
    """Qwen2-VL has no time axis (one temporal id per temporal patch); the metadata leaves it so."""
    adapter = _adapter("qwen2-vl", tiny_model, mode="likelihood")
    prefix, *_ = scored_calls(adapter, frames)
    assert "second_per_grid_ts" not in prefix
    assert torch.unique(_video_positions(adapter, prefix)).diff().tolist() == [1, 1, 1]


def _engine_timestamps(control, tiny_model, benchmark, monkeypatch) -> dict:
    """The timestamps of each request the engine builds, by (texts, frame count)."""
    seen: dict = {}

    def capture(self, requests):
        for request in requests:
            assert request.timestamps is not None and len(request.timestamps) == len(request.frames)
            seen[request.texts] = np.array(request.timestamps)
        return [TextScores(tuple(-1.0 for _ in request.texts)) for request in requests]

    monkeypatch.setattr(VideoLLMAdapter, "score", capture)
    foilkit.score(
        tiny_model("llava-next-video"),
        benchmark,
        mode="likelihood",
        control=control,
        num_workers=0,
        progress=False,
        num_frames=4,
    )
    return seen


@pytest.mark.parametrize("control", ["reversed", "shuffled"])
def test_the_engine_gives_requests_the_frames_real_timestamps(
    control, tiny_model, benchmark, monkeypatch
):
    plain = _engine_timestamps(None, tiny_model, benchmark, monkeypatch)
    controlled = _engine_timestamps(control, tiny_model, benchmark, monkeypatch)
    assert plain and plain.keys() == controlled.keys()
    for texts, times in plain.items():
        assert len(times) == 4
        assert (np.diff(times) > 0).all() or (
            np.diff(times) < 0
        ).all()  # RTime rows show reversed views
        if control == "reversed":  # each frame keeps its own time, in the order shown
            assert controlled[texts].tolist() == times[::-1].tolist()
        else:
            assert sorted(controlled[texts]) == sorted(times)


# --- token ids: the whole rendered prompt, tokenized at once --------------------------------------


def _needs(name: str) -> None:
    tokenizer = REAL_TOKENIZER_MODELS.get(name)
    if tokenizer is not None and not has_real_tokenizer(tokenizer):
        pytest.skip(f"real {tokenizer} tokenizer not fetched (./dev.sh test fetches it)")


def _whole_prompts(adapter: VideoLLMAdapter) -> list[str]:
    """The rendered chat template the model should see, one per model input, built here from
    ``apply_chat_template`` alone: likelihood = prompt + each text as the template writes an
    answer (to the text's end, or the turn's); entail = VELOCITI's question about each text, no
    system prompt; choice = the system prompt (VITATECS') and question, or lmms-eval's question
    alone, in each order of the options."""
    processor = adapter.processor
    if adapter.mode == "likelihood":
        return answered_prompts(processor, turn=adapter.continuation == "turn")
    if adapter.mode == "entail":
        return [
            processor.apply_chat_template(
                [user_turn(ENTAIL_QUESTION.format(caption=text))],
                add_generation_prompt=True,
                tokenize=False,
            )
            for text in TEXTS
        ]
    if adapter.prompt == "vitatecs":
        return choice_prompts(processor)
    return choice_prompts(processor, None, lmms_eval_question)


@pytest.mark.parametrize("name", [*REAL_TOKENIZER_MODELS, "llava-next-video", "qwen2.5-vl"])
@pytest.mark.parametrize(
    "options",
    [
        {"mode": "likelihood"},
        {"mode": "likelihood", "continuation": "turn"},
        {"mode": "choice"},
        {"mode": "choice", "prompt": "lmms-eval"},
        {"mode": "entail"},
    ],
    ids=["likelihood", "likelihood-turn", "choice", "choice-lmms-eval", "entail"],
)
def test_the_model_sees_the_whole_prompts_token_ids(name, options, tiny_model, frames):
    _needs(name)
    adapter = _adapter(name, tiny_model, **options)
    prefix, continuations, _ = scored_calls(adapter, frames)
    prefix_ids = prefix["input_ids"][0].tolist()
    wholes = _whole_prompts(adapter)
    assert len(continuations) == len(wholes)
    for whole, continuation in zip(wholes, continuations):
        expected = adapter.processor(text=[whole], videos=[frames], return_tensors="pt")[
            "input_ids"
        ][0]
        assert prefix_ids + continuation == expected.tolist()


def test_a_merge_across_the_split_is_scored_whole(tiny_model, frames, monkeypatch):
    """Where the prefix's last token and the continuation's first merge, ids still equal the
    whole prompt's: that text runs in one forward."""
    adapter = _adapter("qwen2.5-vl", tiny_model, mode="likelihood")
    prefix = adapter.prompt_texts(TEXTS)[0] + "a red squ"
    monkeypatch.setattr(
        adapter,
        "prompt_texts",
        lambda texts, question=None, answers=None: (prefix, ["are moves to the left"]),
    )
    prefix_ids, whole_ids = adapter.encode(prefix), adapter.encode(prefix + "are moves to the left")
    assert whole_ids[: len(prefix_ids)] != prefix_ids  # "squ" + "are" is one token whole
    scored = adapter.score([TextsRequest(TEXTS[:1], frames, timestamps=TIMESTAMPS)])[0]
    common = next(i for i, (a, b) in enumerate(zip(prefix_ids, whole_ids)) if a != b)
    inputs = adapter.model_inputs(
        TextsRequest(TEXTS[:1], frames, timestamps=TIMESTAMPS), prefix + "are moves to the left"
    )
    count = len(whole_ids) - common
    assert scored.details["num_tokens"][0] == count
    expected = full_forward_logprob(adapter.model, dict(inputs), count)
    assert scored.details["logprob_sum"][0] == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("name", REAL_TOKENIZER_MODELS)
def test_option_letters_are_the_templates_single_answer_tokens(name, tiny_model):
    _needs(name)
    adapter = _adapter(name, tiny_model, mode="choice")
    messages = [user_turn("Q")]
    prompt = adapter.processor.apply_chat_template(
        messages, add_generation_prompt=True, tokenize=False
    )
    prompt_ids = adapter.tokenizer(prompt)["input_ids"]
    for index, letter in enumerate(LETTERS[:5]):
        answered = adapter.processor.apply_chat_template(
            messages + [{"role": "assistant", "content": [{"type": "text", "text": letter}]}],
            add_generation_prompt=False,
            tokenize=False,
        )
        ids = adapter.tokenizer(answered)["input_ids"]
        assert ids[: len(prompt_ids)] == prompt_ids
        token = ids[len(prompt_ids)]
        assert adapter.tokenizer.decode([token]).strip() == letter  # one token spells the letter
        assert token in adapter._letter_ids[index]
        assert all(
            len(adapter.tokenizer.decode([t]).strip()) == 1 for t in adapter._letter_ids[index]
        )
