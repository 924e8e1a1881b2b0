"""The joined view of Vinoground's video question: the frames a video LLM is shown are those its
official scripts sample from the concatenated file (the first video, two seconds of black, the
second), built from one decode of each file."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from foilkit.scorers.engine import UnitDecoder
from foilkit.scorers.plan import make_plan
from foilkit.scorers.video import SamplingPolicy, VideoView, decode_view, decoding
from foilkit.scorers.video.joined import FIRST, PARTS, SEPARATOR, Clip, layout
from foilkit.synthetic.videos import SyntheticScene, write_video


def _official(first: list, second: list, gap: int, nframes: int) -> list:
    """Vinoground's ``load_video`` on the concatenated file: ``np.linspace(0, T - 1, nframes,
    dtype=int)`` over its frames (the first video's, ``gap`` black ones, the second's)."""
    frames = [*first, *(["black"] * gap), *second]
    return [frames[i] for i in np.linspace(0, len(frames) - 1, nframes, dtype=int)]


def _ours(first: Clip, second: Clip, nframes: int) -> list:
    joined = layout(first, second, SamplingPolicy("uniform", nframes), 2.0)
    return [
        "black" if part == SEPARATOR else (PARTS[part], int(source))
        for part, source in zip(joined.parts, joined.sources)
    ]


@pytest.mark.parametrize(
    ("n_first", "n_second", "fps", "nframes"),
    [(12, 8, 4, 32), (40, 25, 8, 8), (3, 5, 2, 16), (250, 300, 30, 32)],
)
def test_frames_are_the_official_sampling_of_the_concatenated_file(n_first, n_second, fps, nframes):
    first = [("first", i) for i in range(n_first)]
    second = [("second", i) for i in range(n_second)]
    expected = _official(first, second, 2 * fps, nframes)
    assert _ours(Clip(0, n_first - 1, fps), Clip(0, n_second - 1, fps), nframes) == expected


def test_a_window_a_reversed_clip_and_another_rate():
    # a window of frames 5..14 played backwards; the second clip at half the rate shows each of
    # its frames twice on the joined timeline (8 fps, the faster clip's), the separator 16 frames
    first = [("first", i) for i in range(14, 4, -1)]
    second = [("second", i // 2) for i in range(12)]
    expected = _official(first, second, 16, 16)
    assert _ours(Clip(5, 14, 8.0, reversed=True), Clip(0, 5, 4.0), 16) == expected
    joined = layout(Clip(5, 14, 8.0, True), Clip(0, 5, 4.0), SamplingPolicy("uniform", 16), 2.0)
    assert joined.lengths == (10, 16, 12) and joined.rate == 8.0
    assert joined.timestamps.tolist() == (joined.positions / 8.0).tolist()


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[str, str]:
    folder = tmp_path_factory.mktemp("joined")
    first = write_video(
        folder / "first.mp4", SyntheticScene(direction="left"), num_frames=12, fps=4
    )
    second = write_video(
        folder / "second.mp4",
        SyntheticScene(direction="up", colour="green"),
        width=32,
        height=24,
        num_frames=8,
        fps=4,
    )
    return str(first), str(second)


def test_joined_frames_from_one_decode_of_each_file(pair, monkeypatch):
    """On real mp4s: the first video's frames, black frames, the second video's (smaller, so
    centred on black), in that order, each file opened once with the pair's own views."""
    first, second = pair
    row = {
        "id": "0",
        "video": first,
        "foil_video": second,
        "caption": "a square moves left",
        "foils": ["a square moves up"],
    }
    plan = make_plan([row], video_question=True)
    (unit,) = plan.units
    policy = SamplingPolicy("uniform", 16)
    opened: Counter = Counter()
    real = decoding.open_video

    def counting(view, *options):
        opened[Path(view.source).name] += 1
        return real(view, *options)

    monkeypatch.setattr(decoding, "open_video", counting)
    decoded = UnitDecoder(plan, policy, decoder="pyav", control=None, seed=0, cache=None)(unit)
    assert opened == {"first.mp4": 1, "second.mp4": 1}
    monkeypatch.setattr(decoding, "open_video", real)
    assert not decoded.view_errors and decoded.error is None
    every = {  # every frame of each file, decoded alone
        path: decode_view(VideoView(path), SamplingPolicy("uniform", count), "pyav").frames
        for path, count in ((first, 12), (second, 8))
    }
    video_first, foil_first = plan.rows[0].joined_views
    for key, (shown_first, shown_second) in (
        (video_first, (first, second)),
        (foil_first, (second, first)),
    ):
        joined = layout(
            Clip(0, 11 if shown_first == first else 7, 4.0),
            Clip(0, 7 if shown_second == second else 11, 4.0),
            policy,
            2.0,
        )
        frames = decoded.views[key].frames
        assert frames.shape == (16, 3, 48, 64)
        assert decoded.sampled[key] == list(joined.sampled())
        for position, (part, source) in enumerate(zip(joined.parts, joined.sources)):
            frame = frames[position]
            if part == SEPARATOR:
                assert not frame.any()
                continue
            path = shown_first if part == FIRST else shown_second
            original = every[path][source]
            if original.shape[1:] == (48, 64):
                assert torch.equal(frame, original)
            else:  # the smaller video, centred on black
                assert torch.equal(frame[:, 12:36, 16:48], original)
                assert not frame[:, :12].any() and not frame[:, :, :16].any()
        assert decoded.views[key].frame_indices == joined.positions.tolist()
        assert all(decoded.sampled[key])  # both videos and the separator are seen


@pytest.mark.parametrize("control", ["reversed", "single"])
def test_a_control_breaks_the_order_inside_each_video_not_the_segments(pair, control):
    """The question asks which segment shows a caption: a temporal control reorders (or thins)
    each video's frames in its own segment and keeps the separator between them."""
    first, second = pair
    row = {"id": "0", "video": first, "foil_video": second, "caption": "c", "foils": ["f"]}
    plan = make_plan([row], video_question=True)
    policy = SamplingPolicy("uniform", 16)
    key = plan.rows[0].joined_views[0]

    def decoded(control):
        decoder = UnitDecoder(plan, policy, decoder="pyav", control=control, seed=0, cache=None)
        return decoder(plan.units[0])

    plain, controlled = decoded(None), decoded(control)
    counts = plain.sampled[key]
    a, gap = counts[0], counts[1]
    frames = plain.views[key].frames
    parts = [frames[:a], frames[a + gap :]]
    if control == "reversed":
        expected = torch.cat([parts[0].flip(0), frames[a : a + gap], parts[1].flip(0)])
        assert controlled.sampled[key] == counts
        times = plain.views[key].timestamps
        assert controlled.views[key].timestamps[:a] == times[:a][::-1]
    else:  # each segment's middle frame, around the separator
        middle = [part[len(part) // 2 : len(part) // 2 + 1] for part in parts]
        expected = torch.cat([middle[0], frames[a : a + gap], middle[1]])
        assert controlled.sampled[key] == [1, gap, 1]
    assert torch.equal(controlled.views[key].frames, expected)


def test_a_missing_video_fails_only_the_rows_using_it(pair, tmp_path):
    """A pair sharing its first video with a pair whose foil video is missing: one unit, the
    missing file fails its row by name, the other row's views and joined views are built."""
    first, second = pair
    gone = str(tmp_path / "gone.mp4")
    rows = [
        {"id": "ok", "video": first, "foil_video": second, "caption": "c", "foils": ["f"]},
        {"id": "gone", "video": first, "foil_video": gone, "caption": "c", "foils": ["f"]},
    ]
    plan = make_plan(rows, video_question=True)
    (unit,) = plan.units
    decoded = UnitDecoder(
        plan, SamplingPolicy("uniform", 8), decoder="pyav", control=None, seed=0, cache=None
    )(unit)
    ok, missing = plan.rows
    assert decoded.error_of(ok) is None
    assert all(view in decoded.views for view in (*ok.views, *ok.joined_views))
    fault = decoded.error_of(missing)
    assert fault.cause == "video missing" and "gone.mp4" in fault.message
