"""ViLMA's counting windows: QUVA's repetition end points -> clips holding exactly N repetitions,
and the foil counts weighted by how often each count occurs over every video's windows.

The published items give each clip's window but not QUVA's annotations; the boundaries they
reveal are reconstructed per video (every window spans ``class`` repetitions, so the revealed
frames get repetition indices by difference constraints) and the windows are checked against
the candidates foilkit cuts from them; the highest revealed index bounds each video's number of
repetitions, whose windows weigh the published foil counts.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict

import numpy as np
import pytest

from foilkit.generation.vilma.counting import (
    ANNOTATION_FPS,
    MAX_COUNT,
    SMALL_MAX,
    SUBTESTS,
    WINDOWS_PER_VIDEO,
    CountingWindow,
    candidate_windows,
    foil_count_weights,
    normalize_frames,
    read_quva_annotations,
    repetition_boundaries,
    sample_windows,
    subtest_counts,
    window_counts,
    windows_with_count,
)

ENDS = [10, 25, 37, 52, 70]  # a video with five repetitions


def _spans(windows: list[CountingWindow]) -> list[tuple[int, int, int]]:
    return [(w.start_pts, w.end_pts, w.count) for w in windows]


def test_windows_hold_exactly_n_repetitions_from_frame_zero():
    assert repetition_boundaries(ENDS) == [0, *ENDS]
    assert _spans(windows_with_count(ENDS, 2, fps=30)) == [
        (0, 25, 2),
        (10, 37, 2),
        (25, 52, 2),
        (37, 70, 2),
    ]
    assert _spans(windows_with_count(ENDS, 5, fps=30)) == [(0, 70, 5)]
    assert windows_with_count(ENDS, 6, fps=30) == []
    with pytest.raises(ValueError, match="increase strictly"):
        repetition_boundaries([10, 10, 20])
    with pytest.raises(ValueError, match="count must be >= 1"):
        windows_with_count(ENDS, 0, fps=30)


def test_seconds_are_frames_over_fps_rounded_to_four_places():
    window = CountingWindow(56, 96, 3, ANNOTATION_FPS)
    assert (window.start, window.end) == (1.8667, 3.2)  # counting-easy-000-0056-0096-3-9-0
    assert CountingWindow(12, 24, 1, 25.0).end == 0.96


@pytest.mark.parametrize(
    ("subtest", "counts"), [("easy", range(1, SMALL_MAX + 1)), ("difficult", range(4, 11))]
)
def test_candidates_follow_the_subtest_range_in_vilmas_order(subtest, counts):
    assert subtest_counts(subtest) == counts
    candidates = candidate_windows(list(range(5, 5 * 13, 5)), subtest, fps=30)  # 12 repetitions
    assert {w.count for w in candidates} == set(counts)
    assert candidates == sorted(candidates, key=lambda w: (w.start_pts, w.count))
    assert len(candidates) == sum(12 - count + 1 for count in counts)


def test_sampling_draws_distinct_windows_or_all_of_few():
    rng = random.Random(0)
    many = sample_windows(list(range(5, 5 * 13, 5)), "easy", fps=30, rng=rng)
    assert len(many) == WINDOWS_PER_VIDEO == len(set(many))
    few = sample_windows(ENDS, "difficult", fps=30, rng=rng)  # candidates: 2 of 4, 1 of 5
    candidates = candidate_windows(ENDS, "difficult", fps=30)
    assert _spans(candidates) == [(0, 52, 4), (0, 70, 5), (10, 70, 4)]
    assert few[:3] == candidates and set(few) == set(candidates) and len(few) == 10
    assert sample_windows([10, 20], "difficult", fps=30, rng=rng) == []


def test_window_counts_tally_every_window_of_every_video():
    assert window_counts([len(ENDS)]) == {
        count: len(windows_with_count(ENDS, count, fps=30)) for count in range(1, 6)
    }
    assert window_counts([5, 2]) == {1: 7, 2: 5, 3: 3, 4: 2, 5: 1}
    assert window_counts([12], max_count=3) == {1: 12, 2: 11, 3: 10}  # none above max_count
    assert window_counts([0]) == {}
    with pytest.raises(ValueError, match="-1 repetitions"):
        window_counts([-1])


def test_foil_count_weights_keep_the_other_subtests_range_normalised():
    counts = window_counts([5, 2])
    assert foil_count_weights(counts, "easy") == {4: 2 / 3, 5: 1 / 3}  # no window of 6..10
    assert foil_count_weights(counts, "difficult") == {1: 7 / 15, 2: 5 / 15, 3: 3 / 15}
    for subtest in SUBTESTS:  # a caption's own count is never a foil's
        assert not set(foil_count_weights(counts, subtest)) & set(subtest_counts(subtest))
    items = Counter([2, 2, 7, 12])  # the counts of a set of items; 12 is above max_count
    assert foil_count_weights(items, "easy") == {7: 1.0}
    assert foil_count_weights(items, "difficult") == {2: 1.0}
    assert foil_count_weights(items, "easy", small_max=1) == {2: 2 / 3, 7: 1 / 3}
    with pytest.raises(ValueError, match=r"count in 4\.\.10 to weight the foil counts of 'easy'"):
        foil_count_weights(Counter([1, 2, 3]), "easy")
    with pytest.raises(ValueError, match="must not be negative"):
        foil_count_weights({1: -1, 4: 2}, "easy")
    with pytest.raises(ValueError, match="subtest must be one of"):
        foil_count_weights(counts, "hard")


def test_normalize_frames_rescales_to_vilmas_frame_rate():
    assert normalize_frames([25, 50, 63], 25.0) == [30, 60, 76]
    assert normalize_frames([30, 61], 30.0) == [30, 61]


def test_read_quva_annotations(tmp_path):
    np.save(tmp_path / "000_rope_beach.npy", np.array([13, 27, 41]))
    np.save(tmp_path / "001_trampoline.npy", np.array([20.0, 45.0]))
    assert read_quva_annotations(tmp_path) == {
        "000_rope_beach": [13, 27, 41],
        "001_trampoline": [20, 45],
    }
    np.save(tmp_path / "002_bad.npy", np.array([20, 15]))
    with pytest.raises(ValueError, match=r"002_bad\.npy.*increase strictly"):
        read_quva_annotations(tmp_path)
    np.save(tmp_path / "002_bad.npy", np.array([[1, 2]]))
    with pytest.raises(ValueError, match=r"002_bad\.npy: expected a 1-D array"):
        read_quva_annotations(tmp_path)
    np.save(tmp_path / "002_bad.npy", np.array([1.5, 3.0]))
    with pytest.raises(ValueError, match="whole numbers"):
        read_quva_annotations(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_quva_annotations(tmp_path / "missing")


# ---- the published items ----

FILES = {  # (subtest, numbers) -> (frames file, seconds file)
    ("easy", "spelled"): ("counting-easy-spelled-pts", "counting-easy-spelled-sec"),
    ("easy", "digits"): ("counting-easy-digits", "counting-easy-digits-sec"),
    ("difficult", "spelled"): ("counting-hard-spelled-pts", "counting-hard-spelled-sec"),
    ("difficult", "digits"): ("counting-hard-digits", "counting-hard-digits-sec"),
}


def _load(shared_data, name: str) -> dict:
    return json.loads((shared_data / "vilma" / f"{name}.json").read_text())


@pytest.mark.parametrize("key", sorted(FILES))
def test_published_frames_and_seconds_agree_through_the_fps(shared_data, key):
    frames, seconds = (_load(shared_data, name) for name in FILES[key])
    assert frames.keys() == seconds.keys()
    for item_id, item in frames.items():
        window = CountingWindow(item["start_time"], item["end_time"], item["class"], ANNOTATION_FPS)
        assert item["time_unit"] == "pts" and seconds[item_id]["time_unit"] == "sec"
        assert (window.start, window.end) == (
            seconds[item_id]["start_time"],
            seconds[item_id]["end_time"],
        ), item_id


def _revealed_boundaries(windows: set[tuple[int, int, int]]) -> dict[int, int]:
    """Frame -> repetition index of every boundary the windows reveal (frame 0 is index 0):
    the smallest indices with ``index(end) - index(start) == count`` for every window and
    indices increasing with the frame (longest paths; a positive cycle means no boundaries
    can hold the windows, and fails)."""
    frames = sorted({0} | {f for start, end, _ in windows for f in (start, end)})
    edges = [(a, b, 1) for a, b in zip(frames, frames[1:])]
    edges += [edge for s, e, n in windows for edge in ((s, e, n), (e, s, -n))]
    index = {0: 0}
    for _ in range(len(frames) + 1):
        changed = False
        for a, b, weight in edges:
            if a in index and index[a] + weight > index.get(b, -(10**9)):
                index[b], changed = index[a] + weight, True
        if not changed:
            return index
    pytest.fail(f"no repetition boundaries hold the windows {sorted(windows)}")


def _end_points(revealed: dict[int, int]) -> list[int]:
    """End points through the revealed boundaries, the unrevealed ones spread between them."""
    known = sorted((index, frame) for frame, index in revealed.items())
    ends = []
    for (i, a), (j, b) in zip(known, known[1:]):
        ends += [round(a + (b - a) * (k - i) / (j - i)) for k in range(i + 1, j + 1)]
    return ends


def test_published_windows_are_windows_of_class_repetitions(shared_data):
    """Every published window, of either subtest, spans exactly ``class`` repetitions of its
    video between boundaries (frame 0, then QUVA's end points) shared by all its windows; where
    a video has fewer candidates than the windows drawn per video, ViLMA takes every candidate,
    and foilkit's candidates are exactly the published windows."""
    published: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for (subtest, _), (name, _) in FILES.items():
        for item in _load(shared_data, name).values():
            window = (item["start_time"], item["end_time"], item["class"])
            published[item["dataset_idx"]][subtest].add(window)
    assert len(published) == 100
    deterministic = 0
    for video, by_subtest in published.items():
        revealed = _revealed_boundaries(set().union(*by_subtest.values()))
        ends = _end_points(revealed)
        assert repetition_boundaries(ends)  # a valid annotation
        for subtest, windows in by_subtest.items():
            candidates = set(_spans(candidate_windows(ends, subtest, fps=ANNOTATION_FPS)))
            assert windows <= candidates, (video, subtest, sorted(windows - candidates))
            assert {n for _, _, n in windows} <= set(subtest_counts(subtest)) and all(
                n <= MAX_COUNT for _, _, n in windows
            )
            if len(candidates) < WINDOWS_PER_VIDEO:
                deterministic += 1
                assert windows == candidates, (video, subtest)
    assert deterministic >= 40  # 41 (video, subtest) pairs of the published files


def _published_repetitions(shared_data) -> dict[str, int]:
    """Video -> the fewest repetitions its published windows (both subtests) allow: the highest
    repetition index they reveal. A long video may have more after its last revealed boundary."""
    windows: dict[str, set] = defaultdict(set)
    for name, _ in FILES.values():
        for item in _load(shared_data, name).values():
            windows[item["dataset_idx"]].add((item["start_time"], item["end_time"], item["class"]))
    return {video: max(_revealed_boundaries(spans).values()) for video, spans in windows.items()}


@pytest.mark.parametrize("numbers", ["digits", "spelled"])
def test_published_foil_counts_follow_every_windows_counts(shared_data, numbers):
    """Per subtest, the published foil counts (``classes_foil``) are a sample of ViLMA's
    weights: the counts of every window of every video, in the foils' range. The spelled files
    keep a subset of the digits files' draws (the same seed), so each is tested on its own.

    Neither the uniform draw nor weights from the drawn windows' own counts fit both subtests.
    Alone, the difficult subtest's three foil counts cannot tell the weights from uniform (their
    shares differ by ~3 points; p ~0.34 either way with ~900 items); the easy subtest's can.
    """
    from scipy.stats import chi2, chisquare

    repetitions = _published_repetitions(shared_data)
    assert len(repetitions) == 100
    every_window = window_counts(repetitions.values())
    drawn_windows: Counter = Counter()
    drawn_foils = {}
    for subtest in SUBTESTS:
        items = _load(shared_data, FILES[(subtest, numbers)][1]).values()
        drawn_windows.update(item["class"] for item in items)
        drawn_foils[subtest] = Counter(item["classes_foil"][0] for item in items)
    misfit = {"uniform": [0.0, 0], "drawn windows": [0.0, 0]}
    p_values = {}
    for subtest, drawn in drawn_foils.items():
        weights = foil_count_weights(every_window, subtest)
        assert set(drawn) == set(weights), subtest
        observed = [drawn[count] for count in weights]
        total = sum(observed)
        fit = chisquare(observed, [total * weight for weight in weights.values()])
        assert fit.pvalue > 0.05, (subtest, fit, weights)
        alternatives = {
            "uniform": [total / len(weights)] * len(weights),
            "drawn windows": [
                total * weight for weight in foil_count_weights(drawn_windows, subtest).values()
            ],
        }
        for name, expected in alternatives.items():
            result = chisquare(observed, expected)
            misfit[name][0] += result.statistic
            misfit[name][1] += len(weights) - 1
            p_values[subtest, name] = result.pvalue
    assert p_values["easy", "uniform"] < 1e-6, p_values
    for name, (statistic, dof) in misfit.items():
        assert chi2.sf(statistic, dof) < 1e-6, (name, statistic, dof, p_values)


def _stage(tmp_path, records: list[dict], *options: str) -> tuple[list[dict], dict]:
    """Runs ``foilkit generate vilma counting``: its rows and its run record's results."""
    import argparse

    from foilkit.generation.foil import read_foils
    from foilkit.generation.provenance import RunRecord
    from foilkit.generation.vilma import cli

    source, out = tmp_path / "counting.in.jsonl", tmp_path / "counting"
    source.write_text("".join(json.dumps(record) + "\n" for record in records))
    parser = argparse.ArgumentParser()
    cli.configure(parser)
    assert (
        cli.run(parser.parse_args(["counting", "-i", str(source), "-o", str(out), *options])) == 0
    )
    return read_foils(out).to_list(), dict(RunRecord.read(out / "run.json").results)


def test_counting_stage_draws_by_every_annotated_videos_windows(tmp_path):
    quva = tmp_path / "quva"
    quva.mkdir()
    np.save(quva / "000_rope_beach.npy", np.arange(7, 7 * 41, 7))  # 40 repetitions
    np.save(quva / "001_trampoline.npy", np.array(ENDS))  # no row names it: it still weighs
    template = "a man skips rope exactly <number> times."
    rows, results = _stage(
        tmp_path,
        [{"id": "000", "template": template, "video": "000_rope_beach.mp4"}],
        *("--quva-annotations", str(quva), "--windows-per-video", "60", "--seed", "1"),
    )
    counts = window_counts([40, len(ENDS)])
    weights = {s: {str(n): w for n, w in foil_count_weights(counts, s).items()} for s in SUBTESTS}
    assert results["foil_count_weights"] == weights
    for row in rows:
        (foil,) = (json.loads(record) for record in row["foil_provenance"])
        assert foil["parameters"]["foil_count_weights"] == weights[row["subtest"]]
        assert str(foil["source"]["foil_count"]) in weights[row["subtest"]]
    plain = [{"id": "q0", "template": template, "count": 2}]
    with pytest.raises(SystemExit, match=r"count in 4\.\.10 to weight the foil counts of 'easy'"):
        _stage(tmp_path, plain)
