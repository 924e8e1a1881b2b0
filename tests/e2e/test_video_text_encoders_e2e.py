"""``foilkit.evaluate`` with the native video-text encoders (VideoPrism, PE-Video) on VITATECS and
RTime: real annotation rows, synthetic mp4s named after a few of them, the paper protocol with
the model's own frame count."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from annotated_videos import render_rows

from foilkit.evaluation import evaluate
from foilkit.scorers.api import ScoreOptions
from foilkit.synthetic.models import (
    PE_VIDEO_FRAMES,
    TINY_MODELS,
    VIDEOPRISM_FRAMES,
    tiny_model_path,
)

FRAMES = {
    "videoprism": VIDEOPRISM_FRAMES,
    "pe-video": PE_VIDEO_FRAMES,
    "pe-audio-video": PE_VIDEO_FRAMES,  # facebook/pe-av-*'s layout, through its video-text part
}
ADAPTER = {"videoprism": "videoprism", "pe-video": "pe-video", "pe-audio-video": "pe-video"}
CASES = [("vitatecs", "direction"), ("rtime", "origin"), ("rtime", "binary")]


@pytest.mark.parametrize("family", list(FRAMES))
@pytest.mark.parametrize(("name", "config"), CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_a_native_video_encoder_evaluates_end_to_end(
    family, name, config, shared_data: Path, n_resamples: int, tmp_path: Path
):
    missing = TINY_MODELS[family].missing()
    if missing:
        pytest.skip(f"the {family} model needs {', '.join(missing)}: pip install {missing[0]}")
    cache = str(tmp_path / "datasets-cache")
    render_rows(name, config, 3, tmp_path / "videos", shared_data, cache)
    run_dir = tmp_path / "run"
    result = evaluate(
        name,
        str(tiny_model_path(family)),
        config=config,
        out_dir=run_dir,
        videos=tmp_path / "videos",
        annotations=shared_data / name,
        on_missing="skip",
        n_resamples=n_resamples,
        datasets_cache_dir=cache,
        score_options=ScoreOptions(
            num_workers=0, progress=False, cache_dir=str(tmp_path / "embeddings")
        ),
    )
    entry = result.results.configs[config]
    assert entry.num_rows > 0
    assert entry.coverage.failed == 0 and entry.coverage.scored == entry.num_rows
    results = json.loads((run_dir / "results.json").read_text())
    protocol = results["protocol"]
    assert protocol["name"] == "paper" and protocol["family"] == ADAPTER[family]
    assert protocol["settings"]["num_frames"] == FRAMES[family]
    assert protocol["from_model"] == {"num_frames": FRAMES[family]}
    report = result.report.read_text()
    assert f"Left to the model, from its config: frames `{FRAMES[family]}`." in report
    if config == "origin":  # RTime's retrieval pool: every view against every caption
        matrix = np.load(run_dir / "scores" / f"{config}-matrix.npy")
        assert matrix.shape == (entry.num_rows, entry.num_rows) and np.isfinite(matrix).all()
