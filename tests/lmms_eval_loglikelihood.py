"""lmms-eval's own ``loglikelihood`` on a model folder and frames; prints JSON.

Run by the python of the lmms-eval virtualenv ``./dev.sh`` makes (``ensure_lmms_eval``: lmms-eval
from PyPI with its ``av<16``, torch and transformers shared from foilkit's virtualenv), never
by foilkit's own python, which has PyAV 18. ``tests/scorers/test_lmms_eval_fidelity.py`` runs
it beside foilkit on the same tiny model and frames.

usage: ``python lmms_eval_loglikelihood.py REQUEST.json`` where REQUEST is
``{"model": "llava_hf" | "qwen2_vl", "pretrained": folder, "frames": .npy of (T, H, W, 3)
uint8, "question": str, "continuations": [str, ...]}``. Output: ``{"lmms_eval": version,
"results": [[loss, greedy], ...]}`` (what ``loglikelihood`` returns), or ``{"lmms_eval":
version, "error": exception type, "message": str}`` when lmms-eval's code refuses the request
(``NotImplementedError``, or a ``ValueError`` of the processor it calls).

The request is one lmms-eval ``Instance`` per continuation, as its task runner builds them
(``(context, target, doc_to_visual, doc_id, task, split)``), and the model class's own
``loglikelihood`` runs on them unchanged. For ``llava_hf`` on a LLaVA-NeXT-Video folder, the
smallest shims make it take a video at all; each replaces one thing:

* ``model_map["llava_next_video"]``: ``llava_hf`` maps the config's ``model_type`` to a class
  for ``llava``, ``llava_next`` and ``llava_onevision`` only, so a LLaVA-NeXT-Video folder is
  a ``KeyError``; the entry names transformers' ``LlavaNextVideoForConditionalGeneration``.
* ``DEFAULT_IMAGE_TOKEN`` = the processor's video token, and the processor's ``images=`` goes to
  ``videos=`` (with ``do_sample_frames=False``: every frame given is used, as foilkit does):
  ``llava_hf.loglikelihood`` puts one ``<image>`` per visual before the question and passes the
  visuals as images; the doc's one visual here is the video's frames.
* the prompt-only processor call (``contxt_id``, whose length masks the prompt out of the
  labels) gets the same video: lmms-eval calls it with text alone, written for transformers
  4.39, whose processors kept the placeholder one token (the model expanded it and masked the
  video positions itself); transformers >= 4.47 processors expand it, so the prompt-only call
  is refused (5.23: "Found 1 <video> tokens in the text but no videos were passed") or, through
  the tokenizer, counts one token for the video and leaves the prompt's last tokens in the loss.

``qwen2_vl`` runs unshimmed: its ``loglikelihood`` raises ``NotImplementedError`` in every
release (0.3.5 to 0.7.3), which the output reports.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from typing import Any

import numpy as np

DEVICE = {"device": "cpu", "device_map": "cpu"}


class _VideoProcessor:
    """The model's processor as ``llava_hf.loglikelihood`` calls it, for one video: ``images=``
    is the video, and a text-only call sees the same video (see the module docstring)."""

    def __init__(self, processor: Any, frames: np.ndarray):
        self._processor = processor
        self._frames = frames

    def __call__(self, text: list[str], images: list | None = None, **kwargs: Any) -> Any:
        videos = [self._frames] if images is None else images
        return self._processor(text=text, videos=videos, do_sample_frames=False, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._processor, name)


def _llava_hf(request: dict, frames: np.ndarray) -> Any:
    from lmms_eval.models.simple import llava_hf
    from transformers import LlavaNextVideoForConditionalGeneration

    llava_hf.model_map["llava_next_video"] = LlavaNextVideoForConditionalGeneration
    model = llava_hf.LlavaHf(pretrained=request["pretrained"], dtype="float32", **DEVICE)
    llava_hf.DEFAULT_IMAGE_TOKEN = model._image_processor.video_token
    model._image_processor = _VideoProcessor(model._image_processor, frames)
    return model


def _qwen2_vl(request: dict, frames: np.ndarray) -> Any:
    from lmms_eval.models.simple.qwen2_vl import Qwen2_VL

    return Qwen2_VL(pretrained=request["pretrained"], **DEVICE)


MODELS = {"llava_hf": _llava_hf, "qwen2_vl": _qwen2_vl}


def loglikelihood(request: dict) -> list:
    """lmms-eval's ``loglikelihood`` of each continuation given the question and the video."""
    from lmms_eval.api.instance import Instance

    frames = np.load(request["frames"])
    model = MODELS[request["model"]](request, frames)
    model.task_dict = {"foilkit": {"test": [{"video": frames}]}}
    instances = [
        Instance(
            request_type="loglikelihood",
            arguments=(request["question"], text, lambda doc: [doc["video"]], 0, "foilkit", "test"),
            idx=index,
            metadata={"task": "foilkit", "doc_id": 0, "repeats": 1},
        )
        for index, text in enumerate(request["continuations"])
    ]
    return model.loglikelihood(instances)


def main(path: str) -> None:
    with open(path) as handle:
        request = json.load(handle)
    answer: dict[str, Any] = {"lmms_eval": version("lmms_eval")}
    try:
        answer["results"] = [list(result) for result in loglikelihood(request)]
    except (NotImplementedError, ValueError) as error:
        answer.update(error=type(error).__name__, message=str(error))
    print(json.dumps(answer))


if __name__ == "__main__":
    main(sys.argv[1])
