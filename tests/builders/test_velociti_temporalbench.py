"""VELOCITI and TemporalBench build from their upstream formats (Hub-only annotations, so the
fixtures of tests/upstream_formats.py), refuse bad rows by file/row/field, and keep their licence
terms: no fine-tuning on VELOCITI, no redistribution of TemporalBench."""

from __future__ import annotations

import datasets
import huggingface_hub
import pytest
from upstream_formats import (
    TEMPORALBENCH_QUESTIONS,
    VELOCITI_ROWS,
    temporalbench_question,
    write_temporalbench,
    write_velociti,
)

from foilkit.builders import build, export, push_to_hub
from foilkit.builders.annotations import AnnotationError
from foilkit.builders.hub import RedistributionError
from foilkit.cli import main


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub-clones")
    return {
        "velociti": write_velociti(root / "velociti"),
        "temporalbench": write_temporalbench(root / "temporalbench"),
        "cache": str(root / "datasets-cache"),
    }


def _build(folders, name, config, **options):
    options.setdefault("on_missing", "keep")
    return build(name, config, annotations=folders[name], cache_dir=folders["cache"], **options)


def _export(folders, name, out, *configs):
    """``name`` exported text-only into ``out`` from the clone in ``folders`` (``configs``: all
    of them when none is given)."""
    local = {"annotations": folders[name], "on_missing": "keep", "cache_dir": folders["cache"]}
    return export(name, out, list(configs) or None, **local)


def test_velociti_rows_follow_data_py(folders):
    rows = _build(folders, "velociti", "all")["test"]
    assert rows["id"] == ["chrono-1", "chrono-2", "agent_random-1", "action_adv-1"]
    assert rows["video_path"][0] == "v_-0Qs5OQb1Ew_seg_10_20.mp4"  # <frames_root>/<video_id>.mp4
    assert rows["caption"] == [row["pos"] for row in VELOCITI_ROWS]
    assert rows["foils"] == [[row["neg"]] for row in VELOCITI_ROWS]
    assert rows["test_name"][:2] == ["chrono", "chrono"] and rows["event"][0] == "Ev1-Ev2"
    chrono = _build(folders, "velociti", "chrono")["test"]
    assert chrono["id"] == ["chrono-1", "chrono-2"]
    with pytest.raises(AnnotationError, match="no row has test_name 'coref'"):
        _build(folders, "velociti", "coref")


def test_temporalbench_rows_are_caption_vs_negative(folders):
    rows = _build(folders, "temporalbench", "short_qa")["test"]
    first = TEMPORALBENCH_QUESTIONS[0]
    assert rows["id"][0] == first["idx"] and rows["video_path"][0] == first["video_name"]
    assert rows["label"][0] == "B" and rows["options"][0] == [
        "A person picks up a fruit with his left hand.",
        "A person picks up a fruit with his right hand.",
    ]
    assert rows["caption"][0] == rows["options"][0][1]
    assert rows["foils"][0] == [rows["options"][0][0]]
    assert rows["caption"][1] == "A person tosses the fruit twice."  # GT "A"
    assert rows["category"] == [
        "Action Effector",
        "Action Frequency",
        "Motion Direction/Orientation",
    ]
    assert rows["source_dataset"] == ["Charades", "Charades", "COIN"]


@pytest.mark.parametrize(
    ("name", "bad", "message"),
    [
        ("velociti", {"test_name": "chronology"}, r"row 1: field 'test_name' is 'chronology'"),
        ("velociti", {"neg": ""}, r"row 1: field 'neg' is empty"),
        ("velociti", {"video_id": "../x"}, r"row 1: field 'video_id' is '../x'"),
        ("temporalbench", {"GT": "C"}, r"row 1: field 'GT' is 'C', not 'A' or 'B'"),
        ("temporalbench", {"question": "A or B?"}, r"row 1: field 'question' does not hold"),
        ("temporalbench", {"dataset": None}, r"row 1: missing field 'dataset'"),
    ],
)
def test_bad_rows_name_file_row_and_field(tmp_path, name, bad, message):
    if name == "velociti":
        folder = write_velociti(tmp_path / name, [{**VELOCITI_ROWS[0], **bad}])
        file = "test-00000-of-00001.parquet"
    else:
        folder = write_temporalbench(tmp_path / name, [{**TEMPORALBENCH_QUESTIONS[0], **bad}])
        file = "temporalbench_short_qa.json"
    config = "all" if name == "velociti" else "short_qa"
    with pytest.raises(AnnotationError, match=message) as caught:
        build(name, config, annotations=folder, on_missing="keep", cache_dir=str(tmp_path / "c"))
    assert file in str(caught.value)


def test_the_card_states_the_licences_and_temporalbench_exports_stay_local(
    folders, tmp_path, monkeypatch
):
    velociti = _export(folders, "velociti", tmp_path / "velociti", "chrono")
    card = (velociti / "README.md").read_text()
    assert "license: cc-by-nc-sa-4.0" in card and "strictly a test set" in card
    # a local copy of the Hub repository's branch, not pinned: never called a commit
    assert "at branch `main` (not pinned to a commit" in card and "commit `main`" not in card
    assert "- Annotations: a local copy" in card and "when the copy was made" in card
    tasks = (velociti / "eval.yaml").read_text()
    assert "id: chrono_classic" in tasks and "id: chrono_strict" in tasks
    out = _export(folders, "temporalbench", tmp_path / "temporalbench")
    card = (out / "README.md").read_text()
    assert "license: other" in card and "README says MIT" in card and "apache-2.0" in card
    assert "at branch `main` (not pinned to a commit" in card
    assert "foilkit refuses to push it" in card and "holds no video bytes" in card
    reloaded = datasets.load_dataset(str(out), "short_qa", cache_dir=str(tmp_path / "cache"))
    assert reloaded["test"].num_rows == len(TEMPORALBENCH_QUESTIONS)

    def no_network(*args, **kwargs):
        raise AssertionError("the Hub was contacted")

    monkeypatch.setattr(huggingface_hub, "HfApi", no_network)
    with pytest.raises(RedistributionError, match="will not push it to the Hub for temporalbench"):
        push_to_hub(out, "someone/temporalbench")
    with pytest.raises(RedistributionError, match="embed its videos"):
        export("temporalbench", tmp_path / "x", video_root=tmp_path, embed_videos=True)


def test_cli_build_refuses_to_push_temporalbench_before_building(folders, tmp_path, capsys):
    argv = ["build", "temporalbench", "--out", str(tmp_path / "tb"), "--push-to-hub", "me/tb"]
    argv += ["--annotations", str(folders["temporalbench"]), "--on-missing", "keep"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "licence statements conflict" in err[0]
    assert not (tmp_path / "tb").exists()


@pytest.mark.parametrize("given", ["export", "katha-ai-iiith/VELOCITI", "foilkit/velociti"])
def test_finetune_refuses_velociti_naming_its_licence(folders, tmp_path, capsys, given):
    if given == "export":
        given = str(_export(folders, "velociti", tmp_path / "velociti", "chrono"))
    argv = ["finetune", "--model", "no/model", "--dataset", given, "--out", str(tmp_path / "ft")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "strictly a test set" in err[0] and "velociti" in err[0]
    assert not (tmp_path / "ft").exists()


def test_the_choice_prompt_asks_the_published_question(folders):
    """The video LLM's ``temporalbench`` prompt, given a row's options in published order, is
    the row's question (up to the space the file leaves after option A)."""
    from foilkit.scorers.prompts import question_text

    rows = _build(folders, "temporalbench", "short_qa")["test"]
    for question, options in zip(rows["question"], rows["options"], strict=True):
        assert question_text("temporalbench", options) == question.replace(" \nB.", "\nB.")


def test_a_question_keeps_extra_spaces_out_of_the_options():
    from foilkit.builders.temporalbench.builder import question_row

    record = temporalbench_question("v.mp4_0", "v.mp4", "x  ", "y", "A")
    row = question_row(record, file="f.json", row=1)
    assert row["options"] == ["x", "y"] and row["caption"] == "x"


@pytest.mark.parametrize("name", ["velociti", "temporalbench"])
def test_downloads_ask_the_hub_for_annotation_tables_only(name, tmp_path, monkeypatch):
    """What the builder asks ``snapshot_download`` for (never the video archives), and the one
    line a gated or unreachable repository gives."""
    import httpx
    from huggingface_hub.errors import GatedRepoError, LocalEntryNotFoundError

    from foilkit.builders.annotations import AnnotationsUnavailableError

    asked = []

    def gated(repo_id, **kwargs):
        asked.append((repo_id, kwargs))
        request = httpx.Request("GET", f"https://huggingface.co/api/datasets/{repo_id}")
        raise GatedRepoError("gated", response=httpx.Response(401, request=request))

    monkeypatch.setattr(huggingface_hub, "snapshot_download", gated)
    config = "all" if name == "velociti" else "short_qa"
    with pytest.raises(AnnotationsUnavailableError, match="is gated: accept its terms") as caught:
        build(name, config, on_missing="keep", cache_dir=str(tmp_path / "c"))
    assert "hf auth login" in str(caught.value) and "--annotations" in str(caught.value)
    repo, kwargs = asked[0]
    assert (
        repo
        == {"velociti": "katha-ai-iiith/VELOCITI", "temporalbench": "microsoft/TemporalBench"}[name]
    )
    assert kwargs["repo_type"] == "dataset" and kwargs["revision"] == "main"
    assert not any(
        pattern.endswith(".zip") or pattern == "*" for pattern in kwargs["allow_patterns"]
    )

    def offline(repo_id, **kwargs):
        raise LocalEntryNotFoundError("outgoing traffic has been disabled")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(
        AnnotationsUnavailableError, match="could not download the annotation files"
    ):
        build(name, config, on_missing="keep", cache_dir=str(tmp_path / "c"))
