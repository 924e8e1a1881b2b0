"""The video LLM adapter: the reused video prefix gives what a full forward gives, whatever its
cache's layers (full attention, sliding window, linear attention); choice cancels order."""

from __future__ import annotations

import pytest
import torch

from foilkit.builders.velociti.answers import ENTAIL_QUESTION
from foilkit.builders.vitatecs.answers import choice_question
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.adapters._features import token_logprobs
from foilkit.scorers.modes import LIKELIHOOD_QUESTION
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic.videos import SyntheticScene, render_frames

#: tiny twin -> how its video prefix's cache is reused: full attention is cut back; a sliding
#: window shorter than the prompt (Gemma 4) and linear attention (Qwen3.5) cannot be, and are
#: copied per continuation
PREFIX_REUSE = {
    "llava-next-video": "crop",
    "qwen2-vl": "crop",
    "qwen3.5": "copy",
    "gemma4": "copy",
}
MODELS = list(PREFIX_REUSE)
TEXTS = ("a red square moves to the left", "a red square moves to the right")


@pytest.fixture(scope="module")
def frames() -> torch.Tensor:
    return (
        torch.from_numpy(render_frames(SyntheticScene(direction="left"), num_frames=8))
        .permute(0, 3, 1, 2)
        .contiguous()
    )


@pytest.fixture(scope="module", params=MODELS)
def adapter(request, tiny_model):
    return {
        mode: load_adapter(tiny_model(request.param), mode=mode, device="cpu")
        for mode in ("likelihood", "choice", "entail")
    } | {"name": request.param}


def _full_forward(adapter, frames: torch.Tensor, text: str) -> torch.Tensor:
    """Logits of one forward over the whole prompt ``text`` with the video (every frame as
    given), no cache."""
    inputs = adapter.processor(
        text=[text], videos=[frames], return_tensors="pt", do_sample_frames=False
    )
    with torch.inference_mode():
        return adapter.model(**inputs).logits[0], inputs["input_ids"][0]


def test_likelihood_with_the_cached_prefix_equals_a_full_forward(adapter, frames):
    likelihood = adapter["likelihood"]
    scored = likelihood.score([TextsRequest(TEXTS, frames)])[0]
    prefix, answers = likelihood.prompt_texts(TEXTS)
    head, tail = likelihood._prompt(None)
    assert prefix == head + LIKELIHOOD_QUESTION + tail
    for position, answer in enumerate(answers):
        logits, ids = _full_forward(likelihood, frames, prefix + answer)
        count = len(likelihood.encode(prefix + answer)) - len(likelihood.encode(prefix))
        expected = token_logprobs(logits[-count - 1 : -1], ids[-count:])
        assert scored.details["logprob_sum"][position] == pytest.approx(
            float(expected.sum()), abs=1e-4
        )
        assert scored.details["num_tokens"][position] == len(expected)


def test_entail_with_the_cached_prefix_equals_a_full_forward(adapter, frames):
    """P(Yes) / (P(Yes) + P(No)) after each text's entailment question, whatever the cache."""
    entail = adapter["entail"]
    scored = entail.score([TextsRequest(TEXTS, frames)])[0]
    prefix, questions = entail.prompt_texts(TEXTS)
    yes, no = entail._entail_ids
    for position, question in enumerate(questions):
        assert ENTAIL_QUESTION.format(caption=TEXTS[position]) in question
        logits, _ = _full_forward(entail, frames, prefix + question)
        expected = logits[-1, [yes, no]].float().softmax(0)[0]
        assert scored.scores[position] == pytest.approx(float(expected), abs=1e-5)


@pytest.mark.parametrize(
    "model_type, layers, expected, batched, repeated",
    [
        ("llama", {}, "crop", "padded", True),
        ("qwen2_vl", {}, "crop", "padded", True),
        # linear attention: a recurrent state and a convolution
        ("qwen3_5", {}, "copy", "off", False),
        ("qwen3_5_moe", {}, "copy", "off", False),
        ("lfm2", {"num_hidden_layers": 2, "full_attn_idxs": [1]}, "copy", "off", False),
        # hybrid layers: keys and values beside a running state, which repetition leaves out
        ("falcon_h1", {}, "copy", "off", False),
        ("gemma3", {}, "copy", "same-length", True),  # sliding-window layers
        # sliding window, and layers sharing another's cache
        ("gemma3n", {}, "copy", "same-length", True),
        ("gemma4", {}, "copy", "same-length", True),
        ("mistral", {}, "copy", "same-length", True),  # every layer a sliding window
    ],
)
def test_prefix_reuse_and_batching_of_every_cache_kind(
    model_type, layers, expected, batched, repeated
):
    """The cache a model builds for its layer types (transformers' ``DynamicCache(config=)``)
    decides: only caches of plain full-attention layers are cut back, and decode questions of
    several lengths in one padded batch; a window batches questions of one length only; a
    running state none, and a request's samples are not repeated along the batch over it."""
    from transformers import AutoConfig, DynamicCache

    from foilkit.scorers.adapters._video_llm_support import batching, prefix_reuse
    from foilkit.scorers.adapters.video_llm import _repeatable

    cache = DynamicCache(config=AutoConfig.for_model(model_type, **layers))
    assert prefix_reuse(cache) == expected
    assert prefix_reuse(None) == "full"
    kind, why = batching(cache)
    assert kind == batched and (why is None) == (kind != "off")
    assert batching(None) == ("off", "the model returns no cache to decode on")
    assert _repeatable(cache) is repeated


def test_prefix_reuse_follows_the_cache_layers_and_is_recorded(adapter):
    expected = PREFIX_REUSE[adapter["name"]]
    for mode in ("likelihood", "choice"):
        assert adapter[mode].prefix_reuse == expected
        assert adapter[mode].describe()["prefix_reuse"] == expected


def test_a_full_forward_per_text_scores_the_same(adapter, frames):
    """``full`` (no cache reuse) gives the numbers the reused prefix gives."""
    likelihood = adapter["likelihood"]
    reused = likelihood.score([TextsRequest(TEXTS, frames)])[0]
    strategy = likelihood.prefix_reuse
    try:
        likelihood.prefix_reuse = "full"
        whole = likelihood.score([TextsRequest(TEXTS, frames)])[0]
    finally:
        likelihood.prefix_reuse = strategy
    assert whole.details["logprob_sum"] == pytest.approx(reused.details["logprob_sum"], abs=1e-4)


def test_every_frame_reaches_the_model(adapter, frames):
    """Processors that sample frames by default (Qwen3-VL's, Gemma 4's) keep all of them."""
    likelihood = adapter["likelihood"]
    prefix, _ = likelihood.prompt_texts(TEXTS)
    inputs = likelihood.model_inputs(TextsRequest(TEXTS, frames), prefix)
    if "video_grid_thw" in inputs:  # 2 frames a temporal patch
        assert int(inputs["video_grid_thw"][0, 0]) == len(frames) // 2
    if "num_frames_per_video" in inputs:
        assert int(inputs["num_frames_per_video"][0]) == len(frames)


def test_choice_with_the_cached_prefix_equals_a_full_forward(adapter, frames):
    choice = adapter["choice"]
    head, tail = choice._prompt(2)
    probabilities = []
    for order in (TEXTS, TEXTS[::-1]):
        logits, _ = _full_forward(choice, frames, head + choice_question(order) + tail)
        letters = torch.stack(
            [torch.logsumexp(logits[-1, ids], 0) for ids in choice._letter_ids[:2]]
        ).softmax(0)
        probabilities.append(letters if order == TEXTS else letters.flip(0))
    expected = torch.stack(probabilities).mean(0)
    scored = choice.score([TextsRequest(TEXTS, frames)])[0].scores
    # the continuation's ids are the whole prompt's past the prefix: only float noise differs
    assert scored == pytest.approx(expected.tolist(), abs=1e-5)


def test_choice_logs_each_orders_letter_probabilities_and_its_prompt(adapter, frames):
    """The per-order probabilities (position bias) are details whose mean is the score, and the
    recorded template fills to exactly the prompt each order asked."""
    choice = adapter["choice"]
    scored = choice.score([TextsRequest(TEXTS, frames)])[0]
    assert set(scored.details) == {"order_0", "order_1"}
    head, tail = choice._prompt(2)
    for shift, order in enumerate((TEXTS, TEXTS[::-1])):
        logits, _ = _full_forward(choice, frames, head + choice_question(order) + tail)
        letters = torch.stack(
            [torch.logsumexp(logits[-1, ids], 0) for ids in choice._letter_ids[:2]]
        ).softmax(0)
        expected = letters if shift == 0 else letters.flip(0)  # per text, caption first
        # the cached prefix against a full forward: float noise only (each order's own)
        assert scored.details[f"order_{shift}"] == pytest.approx(expected.tolist(), abs=1e-4)
    means = [sum(p) / 2 for p in zip(scored.details["order_0"], scored.details["order_1"])]
    assert scored.scores == pytest.approx(means)
    template = choice.prompt_templates()["2"]
    assert template.replace("{question}", choice_question(TEXTS[::-1])) == (
        head + choice_question(TEXTS[::-1]) + tail
    )
    assert adapter["likelihood"].prompt_templates() is None


def test_choice_is_independent_of_option_order(adapter, frames):
    choice = adapter["choice"]
    forward = choice.score([TextsRequest(TEXTS, frames)])[0].scores
    swapped = choice.score([TextsRequest(TEXTS[::-1], frames)])[0].scores
    assert forward == pytest.approx(swapped[::-1], abs=1e-6)
    assert sum(forward) == pytest.approx(1.0)


def test_choice_question_is_vitatecs_prompt():
    assert choice_question(["x", "y"]) == (
        "Which of the following best describes the content of the video: (A) x (B) y "
        "Respond with a single letter (A or B)."
    )


#: A TempCompass-style item: the benchmark's own question (options listed, answer instruction),
#: each option named by its label; multi-token labels ("Caption A") as caption matching has them.
QUESTIONS = {
    "multi_choice": (
        "Which direction does the square move?\nA. left\nB. right\nC. up\n"
        "Please directly give the best option:",
        ("left", "right", "up"),
        ("A", "B", "C"),
    ),
    "caption_matching": (
        f"Which caption matches the video better?\nCaption A: {TEXTS[0]}\nCaption B: {TEXTS[1]}"
        "\nPlease directly give the best option:",
        TEXTS,
        ("Caption A", "Caption B"),
    ),
}


@pytest.mark.parametrize("item", list(QUESTIONS))
def test_a_question_scores_each_answer_as_a_full_forward_does(adapter, frames, item):
    """Both modes ask the request's own question and score each text by its answer label:
    likelihood its log-probability, choice its probability among the labels (the softmax of the
    summed log-probabilities), equal to a forward over the whole prompt and answer."""
    question, texts, answers = QUESTIONS[item]
    request = TextsRequest(texts, frames, question=question, answers=answers)
    likelihood, choice = adapter["likelihood"], adapter["choice"]
    prefix, continuations = choice.prompt_texts(texts, question, answers)
    head, tail = choice._prompt(None)
    assert prefix == head + question + tail
    expected = []
    for answer, continuation in zip(answers, continuations, strict=True):
        assert continuation.strip().startswith(answer)
        logits, ids = _full_forward(choice, frames, prefix + continuation)
        count = len(choice.encode(prefix + continuation)) - len(choice.encode(prefix))
        expected.append(float(token_logprobs(logits[-count - 1 : -1], ids[-count:]).sum()))
    scored = likelihood.score([request])[0]
    assert list(scored.details["logprob_sum"]) == pytest.approx(expected, abs=1e-4)
    probabilities = torch.tensor(expected, dtype=torch.float64).softmax(0).tolist()
    assert list(choice.score([request])[0].scores) == pytest.approx(probabilities, abs=1e-5)
    with pytest.raises(ValueError, match="2 answers for 3 texts"):
        TextsRequest(("a", "b", "c"), frames, question=question, answers=("A", "B"))


@pytest.mark.parametrize(
    ("template", "system", "answer"),
    [
        ("glm4v", "string", "string"),  # GLM-4.1V: every text-only turn's content written as is
        ("perception_lm", "string", "parts"),  # a trimmed system string, answers' text parts
        ("molmo2", "user", "parts"),  # no system role: it opens the user turn
    ],
)
def test_one_probe_reads_how_a_template_writes_each_turns_content(template, system, answer):
    """The checkpoints' own chat templates, rendered as transformers renders them: one probe
    answers for the system turn and the answer turn, each by its own role (Perception LM writes
    a system list as its repr but an answer's parts as text, so its answers stay parts)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    from foilkit.scorers.adapters._video_llm_support import content_forms
    from foilkit.synthetic.models.glm import GLM4V_CHAT_TEMPLATE
    from foilkit.synthetic.models.molmo2 import MOLMO2_CHAT_TEMPLATE
    from foilkit.synthetic.models.perception_lm import PERCEPTION_LM_CHAT_TEMPLATE

    chat_template = {
        "glm4v": GLM4V_CHAT_TEMPLATE,
        "perception_lm": PERCEPTION_LM_CHAT_TEMPLATE,
        "molmo2": MOLMO2_CHAT_TEMPLATE,
    }[template]

    def render(messages):
        (rendered,), _ = render_jinja_template(
            [messages], chat_template=chat_template, bos_token=""
        )
        return rendered

    user = [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": "Which?"}]}]
    forms = content_forms(render, "<<probe>>", user)
    assert (forms.system, forms.answer) == (system, answer)
    # the forms found write the probe as text, never a list's repr
    content = {"string": "<<probe>>", "parts": [{"type": "text", "text": "<<probe>>"}]}
    answered = render([*user, {"role": "assistant", "content": content[answer]}])
    assert "<<probe>>" in answered and "'type'" not in answered
