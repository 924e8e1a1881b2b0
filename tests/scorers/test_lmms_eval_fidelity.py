"""foilkit's video-LLM likelihood beside lmms-eval's own ``loglikelihood``, run by lmms-eval's
code in its own virtualenv (``./dev.sh``; lmms-eval pins ``av<16``, foilkit PyAV 18) on the same
tiny model folder and the same frames (saved as ``.npy`` for both sides).

``llava_hf`` (``lmms_eval/models/simple/llava_hf.py``, 0.7.3) is lmms-eval's only
``loglikelihood`` for transformers' LLaVA classes: one forward over the chat-templated prompt with
the answer, labels masking the prompt, the model's mean cross-entropy returned as the loss.
Three shims let it take a LLaVA-NeXT-Video folder and a video at all (its model map, the
placeholder and ``images=`` -> ``videos=``, the prompt-only processor call seeing the video):
``tests/lmms_eval_loglikelihood.py`` says what each replaces. foilkit's ``mode="likelihood",
reduction="mean", continuation="turn"`` is minus that loss. ``qwen2_vl`` has no
``loglikelihood`` in lmms-eval (it raises ``NotImplementedError``), so foilkit's Qwen2-VL
likelihood has no lmms-eval number to match.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conformance import has_real_tokenizer
from references import lmms_eval_loglikelihood

from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.modes import LIKELIHOOD_QUESTION
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic.models import fidelity_model_path
from foilkit.synthetic.videos import SyntheticScene, render_frames

pytestmark = pytest.mark.slow

TEXTS = ("a red square moves to the left", "a red square moves to the right", "a blue square")


@pytest.fixture(scope="module")
def frames_file(tmp_path_factory) -> str:
    """Eight frames of a synthetic clip, (T, H, W, 3) uint8, as both sides read them."""
    path = tmp_path_factory.mktemp("lmms-eval") / "frames.npy"
    np.save(path, render_frames(SyntheticScene(direction="left"), num_frames=8))
    return str(path)


def _request(model: str, pretrained: str, frames_file: str) -> dict:
    return {
        "model": model,
        "pretrained": pretrained,
        "frames": frames_file,
        "question": LIKELIHOOD_QUESTION,
        "continuations": list(TEXTS),
    }


def test_llava_next_video_likelihood_is_minus_lmms_evals_loss(tiny_model, frames_file):
    path = tiny_model("llava-next-video")
    answer = lmms_eval_loglikelihood(_request("llava_hf", path, frames_file))
    assert answer["lmms_eval"] == "0.7.3"
    losses = [loss for loss, _ in answer["results"]]

    adapter = load_adapter(
        path, device="cpu", mode="likelihood", reduction="mean", continuation="turn"
    )
    frames = torch.from_numpy(np.load(frames_file)).permute(0, 3, 1, 2).contiguous()
    scores = adapter.score([TextsRequest(TEXTS, frames)])[0].scores
    assert [-score for score in scores] == pytest.approx(losses, abs=1e-5)
    # the texts' losses differ by more than the tolerance: a mask or template off would show
    assert max(losses) - min(losses) > 1e-4


def test_lmms_eval_drops_the_prompt_under_llava_next_videos_own_template(frames_file):
    """``llava_hf`` sends the user turn as a string; LLaVA-NeXT-Video's chat template (the real
    one, on the Llama-2 twin) renders only content lists, so the question and the video
    placeholder vanish ("USER: ASSISTANT:") and the processor refuses the video. foilkit sends
    the content list (README: the departures from lmms-eval's letter)."""
    if not has_real_tokenizer("llama2"):
        pytest.skip("real llama2 tokenizer not fetched (./dev.sh test fetches it)")
    path = str(fidelity_model_path("llava-next-video-llama2"))
    answer = lmms_eval_loglikelihood(_request("llava_hf", path, frames_file))
    assert answer["error"] == "ValueError"
    assert "Found total 0 <video> tokens" in answer["message"]


def test_lmms_evals_qwen2_vl_has_no_loglikelihood(tiny_model, frames_file):
    """The number foilkit's Qwen2-VL likelihood would match does not exist in lmms-eval; a
    release that adds one fails here, so that it gets compared."""
    answer = lmms_eval_loglikelihood(_request("qwen2_vl", tiny_model("qwen2-vl"), frames_file))
    assert answer["error"] == "NotImplementedError"
    assert "Qwen2_VL" in answer["message"]
