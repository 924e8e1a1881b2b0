"""Loader messages for repeated ids and keys and for NUL bytes in video paths (issue 41, item 11).

A repeated TemporalBench ``idx`` ended in ``failed: DatasetGenerationError`` naming no row; a
video key repeated in a keyed JSON file (TempCompass' questions) kept its last copy without a
word; a NUL byte in one row's video path ended the whole run in ``embedded null byte``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from upstream_formats import (
    FILES,
    RTIME,
    TEMPORALBENCH_QUESTIONS,
    TSV_HEADER,
    VILMA,
    write_temporalbench,
)

import foilkit
from foilkit.builders import build
from foilkit.builders.annotations import AnnotationError
from foilkit.builders.base import DuplicateIdError
from foilkit.cli import main
from foilkit.synthetic.videos import write_video

# --- a repeated id --------------------------------------------------------------------------------


def _repeated_idx(folder: Path) -> Path:
    """TemporalBench's questions with the third one's idx repeating the first's."""
    first, second, third = TEMPORALBENCH_QUESTIONS
    return write_temporalbench(folder, [first, second, {**third, "idx": first["idx"]}])


def test_a_repeated_temporalbench_idx_names_both_rows(tmp_path):
    folder = _repeated_idx(tmp_path / "temporalbench")
    idx = TEMPORALBENCH_QUESTIONS[0]["idx"]
    path = folder / "temporalbench_short_qa.json"
    with pytest.raises(AnnotationError) as caught:
        build(
            "temporalbench",
            "short_qa",
            annotations=folder,
            on_missing="keep",
            cache_dir=str(tmp_path / "cache"),
        )
    assert (caught.value.file, caught.value.row) == (str(path), 3)
    assert str(caught.value) == (
        f"{path}, row 3: field 'idx' is {idx!r}, as in row 1: an idx names one question (the "
        "row's id); remove or rename one of them"
    )


def test_the_cli_prints_the_repeated_idx_not_dataset_generation_error(tmp_path, capsys):
    folder = _repeated_idx(tmp_path / "temporalbench")
    argv = ["build", "temporalbench", "--out", str(tmp_path / "out"), "--annotations", str(folder)]
    argv += ["--on-missing", "keep", "--datasets-cache", str(tmp_path / "cache")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "DatasetGenerationError" not in err
    assert err.startswith("foilkit build: error: ") and ", row 3: field 'idx' is " in err
    assert "as in row 1" in err and len(err.strip().splitlines()) == 1


def test_any_builder_s_repeated_id_reaches_the_user(tmp_path, capsys):
    """The builders' own check (every split's ids unique), wrapped by ``datasets`` before: here
    an MSR-VTT contrast set naming one clip twice (its clip is the row's id)."""
    folder = tmp_path / "contrast_sets"
    folder.mkdir()
    rows = "video7\ta\tb\tc\td\te\t1\nvideo8\ta\tb\tc\td\te\t2\nvideo7\tf\tg\th\ti\tj\t0\n"
    (folder / FILES["contrast_sets"][1]).write_text(TSV_HEADER + rows)
    options = {"annotations": folder, "on_missing": "keep", "cache_dir": str(tmp_path / "c")}
    with pytest.raises(DuplicateIdError) as caught:
        build("contrast_sets", FILES["contrast_sets"][0], **options)
    assert str(caught.value).startswith("split 'test': id 'video7' of row 2 repeats row 0 ")
    argv = ["build", "contrast_sets", "--config", FILES["contrast_sets"][0], "--out"]
    argv += [str(tmp_path / "out"), "--annotations", str(folder), "--on-missing", "keep"]
    assert main([*argv, "--datasets-cache", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "DatasetGenerationError" not in err and "id 'video7' of row 2 repeats row 0" in err


# --- a repeated key in a keyed JSON file ----------------------------------------------------------

QUESTION = {"question": "What is the man doing?\nA. dunking\nB. dribbling", "answer": "A. dunking"}
OTHER = {"question": "What does the man do?\nA. dribbling\nB. dunking", "answer": "B. dunking"}


def _tempcompass(folder: Path, questions: str, videos: tuple[str, ...] = ("111", "222")) -> Path:
    """TempCompass' multi-choice questions as ``questions`` (raw JSON text) and their
    ``meta_info.json``."""
    (folder / "questions").mkdir(parents=True)
    (folder / "questions" / "multi-choice.json").write_text(questions)
    action = {"eval_dim": {"action": {"type": "fine-grained action"}}}
    (folder / "meta_info.json").write_text(json.dumps(dict.fromkeys(videos, action)))
    return folder


def _entry(video: str, *items: dict) -> str:
    return f'{json.dumps(video)}: {{"action": {json.dumps(list(items))}}}'


def _build_tempcompass(folder: Path, tmp_path: Path):
    return build(
        "tempcompass",
        "multi_choice",
        annotations=folder,
        on_missing="keep",
        cache_dir=str(tmp_path / "cache"),
    )


def test_a_repeated_tempcompass_video_key_is_an_error_naming_both_copies(tmp_path, capsys):
    questions = "{\n " + ",\n ".join(
        [_entry("111", QUESTION), _entry("222", QUESTION), _entry("111", OTHER)]
    )
    folder = _tempcompass(tmp_path / "tempcompass", questions + "\n}\n")
    path = folder / "questions" / "multi-choice.json"
    with pytest.raises(AnnotationError) as caught:
        _build_tempcompass(folder, tmp_path)
    assert (caught.value.file, caught.value.row) == (str(path), "111")
    assert str(caught.value) == (
        f"{path}, row 111: the example id appears 2 times (lines 2 and 4): JSON keeps only the "
        "last copy and drops the others' content; merge them into one entry or remove the copies"
    )
    argv = ["build", "tempcompass", "--config", "multi_choice", "--out", str(tmp_path / "out")]
    argv += ["--annotations", str(folder), "--on-missing", "keep"]
    assert main([*argv, "--datasets-cache", str(tmp_path / "cache")]) == 2
    assert "the example id appears 2 times (lines 2 and 4)" in capsys.readouterr().err


def test_a_repeated_key_inside_an_entry_is_an_error_naming_the_entry(tmp_path):
    questions = '{"111": {"action": [%s], "action": [%s]}}' % (
        json.dumps(QUESTION),
        json.dumps(OTHER),
    )
    folder = _tempcompass(tmp_path / "tempcompass", questions, videos=("111",))
    with pytest.raises(AnnotationError, match=r", row 111: the entry holds the key 'action' twice"):
        _build_tempcompass(folder, tmp_path)


def test_the_entries_without_repeats_build_as_before(tmp_path):
    questions = "{" + ", ".join([_entry("111", QUESTION, OTHER), _entry("222", QUESTION)]) + "}"
    rows = _build_tempcompass(_tempcompass(tmp_path / "tempcompass", questions), tmp_path)["test"]
    assert rows["id"] == ["111-action-0", "111-action-1", "222-action-0"]


@pytest.mark.parametrize(
    ("benchmark", "record"), [("vilma", VILMA), ("rtime", RTIME)], ids=["vilma", "rtime"]
)
def test_every_keyed_json_loader_refuses_a_repeated_example_id(annotations, benchmark, record):
    body = json.dumps(record)
    folder = annotations.write(benchmark, f'{{\n"a": {body},\n"b": {body},\n"a": {body}\n}}\n')
    with pytest.raises(AnnotationError, match=r", row a: the example id appears 2 times \(lines"):
        annotations.build(benchmark, folder)


# --- a NUL byte in a video path -----------------------------------------------------------------


@pytest.mark.parametrize("confined", [True, False], ids=["video-root", "unconfined"])
def test_a_nul_byte_in_one_row_s_video_path_fails_that_row(
    tmp_path, tiny_clip, scoring_dataset, confined
):
    good = str(write_video(tmp_path / "clip.mp4", width=32, height=32, num_frames=8))
    bad = str(tmp_path / "cl\x00ip.mp4")
    rows = [
        {"id": "good", "video": good, "caption": "a square"},
        {"id": "nul", "video": bad, "caption": "a square"},
    ]
    scores = foilkit.score(
        tiny_clip,
        scoring_dataset(rows),
        video_root=str(tmp_path) if confined else None,
        num_workers=0,
        progress=False,
        use_cache=False,
    )
    assert scores["error"][0] is None and scores["caption_score"][0] is not None
    assert scores["error"][1] == (
        f"row 1 (id='nul'), field 'video': {bad!r} holds a NUL byte (\\x00), which no file name "
        "can: fix the row's path"
    )
    assert scores["caption_score"][1] is None


def test_a_nul_byte_in_an_annotation_s_video_name_names_file_row_and_field(tmp_path, capsys):
    questions = "{" + ", ".join([_entry("111", QUESTION), _entry("2\x002", QUESTION)]) + "}"
    folder = _tempcompass(tmp_path / "tempcompass", questions, videos=("111", "2\x002"))
    path = folder / "questions" / "multi-choice.json"
    with pytest.raises(AnnotationError) as caught:
        _build_tempcompass(folder, tmp_path)
    assert str(caught.value) == (
        f"{path}, row '2\\x002': field 'video id' is '2\\x002.mp4': a NUL byte (\\x00) cannot "
        "be in a file name"
    )
    argv = ["build", "tempcompass", "--config", "multi_choice", "--out", str(tmp_path / "out")]
    argv += ["--annotations", str(folder), "--video-root", str(tmp_path)]
    assert main([*argv, "--datasets-cache", str(tmp_path / "cache")]) == 2
    err = capsys.readouterr().err
    assert "embedded null byte" not in err and "a NUL byte (\\x00) cannot be in a file name" in err
