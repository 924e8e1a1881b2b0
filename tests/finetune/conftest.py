"""Fixtures of the fine-tuning tests: a tiny training split, a tiny CLIP, the ``foilkit finetune``
command line with small, fast settings, and training rows that pair each clip with its reversal."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from foilkit.finetune.synthetic import write_train_split

#: Small, fast flags: 4 frames, batches of 8 clips (4 items + their reversals), one temporal
#: layer, decoded frames cached, no progress bars.
FAST_FLAGS = (
    "--num-frames",
    "4",
    "--batch-size",
    "8",
    "--learning-rate",
    "1e-3",
    "--temporal-layers",
    "1",
    "--cache-frames",
    "--no-progress",
)


@pytest.fixture(scope="module")
def train_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_train_split(tmp_path_factory.mktemp("train"), variants=1)


@pytest.fixture(scope="module")
def clip_model() -> str:
    from foilkit.synthetic.models import tiny_model_path

    return str(tiny_model_path("clip"))


@pytest.fixture(scope="module")
def finetune_argv(train_dir: Path, clip_model: str) -> Callable[..., list[str]]:
    """``finetune_argv(config, *extra)``: ``foilkit finetune`` of the tiny CLIP on ``config`` of
    the training split with the fast flags, then ``extra`` (each test's own flags)."""

    def argv(config: str, *extra: str) -> list[str]:
        data = ["--dataset", str(train_dir), "--config", config]
        videos = ["--video-root", str(train_dir / "videos")]
        return ["finetune", "--model", clip_model, *data, *videos, *FAST_FLAGS, *extra]

    return argv


@pytest.fixture(scope="session")
def reversal_rows() -> Callable[[int], list[dict]]:
    """``reversal_rows(count)``: ``count`` training items as rows, each forward row followed by
    its reversed row (the same video, its own caption)."""

    def rows(count: int) -> list[dict]:
        return [
            {"id": f"{i}{suffix}", "video": f"{i}.mp4", "caption": f"{text}{i}", "reversed": flag}
            for i in range(count)
            for suffix, text, flag in (("", "c", False), ("r", "r", True))
        ]

    return rows
