"""``foilkit build`` writes the Hub layout; ``push_to_hub`` uploads exactly that layout."""

from __future__ import annotations

import fnmatch
from typing import ClassVar

import datasets
import huggingface_hub
import pytest

from foilkit.builders import export, push_to_hub
from foilkit.cli import main
from foilkit.folders import EXPORT, claim_folder

pytestmark = pytest.mark.integration


class RecordingHfApi:
    """Stands in for ``huggingface_hub.HfApi`` (no network here) and records the calls."""

    calls: ClassVar[list[tuple[str, dict]]] = []

    def __init__(self, token=None):
        self.token = token

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))

    def upload_folder(self, **kwargs):
        self.calls.append(("upload_folder", kwargs))
        return f"https://huggingface.co/datasets/{kwargs['repo_id']}/commit/0"


@pytest.fixture
def hub(monkeypatch):
    RecordingHfApi.calls = []
    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingHfApi)
    return RecordingHfApi


def test_cli_builds_and_reloads(shared_data, cache_dir, tmp_path, capsys):
    out = tmp_path / "vilma"
    code = main(
        [
            "build",
            "vilma",
            "--config",
            "spatial_relations_prepositions",
            "--out",
            str(out),
            "--annotations",
            str(shared_data / "vilma"),
            "--on-missing",
            "keep",
            "--no-validity-filter",
            "--cache-dir",
            cache_dir,
        ]
    )
    assert code == 0
    assert "spatial_relations_prepositions/test-00000-of-00001.parquet" in capsys.readouterr().out
    reloaded = datasets.load_dataset(
        str(out), "spatial_relations_prepositions", cache_dir=str(tmp_path / "cache")
    )
    assert reloaded["test"].num_rows == 708 and sum(reloaded["test"]["valid"]) == 393
    assert "keeps every row (validity_filter=False)" in (out / "README.md").read_text()


def test_push_uploads_exactly_the_exported_layout(shared_data, cache_dir, tmp_path, hub):
    # No configs named: the published sets (gender/random need the user's multiple-choice file).
    out = export(
        "contrast_sets",
        tmp_path / "export",
        on_missing="keep",
        annotations=shared_data / "contrast_sets",
        cache_dir=cache_dir,
    )
    (out / "notes.txt").write_text("not part of the layout")
    (out / "verb_lm" / "old-00000-of-00001.parquet").write_bytes(b"a stale file, not in the card")
    # register=True: eval.yaml goes only to the canonical repository unless asked
    url = push_to_hub(out, "someone/contrast-sets", private=True, register=True)
    assert url.startswith("https://huggingface.co/datasets/someone/contrast-sets")
    (create, created), (upload, uploaded) = hub.calls
    assert (
        create == "create_repo" and created["repo_type"] == "dataset" and created["private"] is True
    )
    assert (
        upload == "upload_folder"
        and uploaded["repo_type"] == "dataset"
        and uploaded["folder_path"] == out
    )
    files = sorted(path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file())
    sent = [
        name
        for name in files
        if any(fnmatch.fnmatch(name, pattern) for pattern in uploaded["allow_patterns"])
    ]
    assert sent == [
        "README.md",
        "eval.yaml",
        "verb_human/test-00000-of-00001.parquet",
        "verb_lm/test-00000-of-00001.parquet",
    ]


def test_push_refuses_a_folder_that_is_not_an_export(tmp_path, hub):
    with pytest.raises(FileNotFoundError, match="no README.md"):
        push_to_hub(tmp_path, "someone/empty")
    assert hub.calls == []


def test_cli_push_to_hub(shared_data, cache_dir, tmp_path, hub, capsys):
    code = main(
        [
            "build",
            "rtime",
            "--config",
            "origin",
            "--out",
            str(tmp_path / "rtime"),
            "--on-missing",
            "keep",
            "--annotations",
            str(shared_data / "rtime"),
            "--cache-dir",
            cache_dir,
            "--push-to-hub",
            "someone/rtime",
        ]
    )
    assert code == 0
    assert [name for name, _ in hub.calls] == ["create_repo", "upload_folder"]
    assert "pushed: https://huggingface.co/datasets/someone/rtime" in capsys.readouterr().out


def test_export_replaces_the_shards_of_an_earlier_export(shared_data, cache_dir, tmp_path, hub):
    # an earlier export (foilkit's own folder) with embedded videos, in four shards
    stale = claim_folder(tmp_path / "export", EXPORT) / "verb_lm" / "test-00003-of-00004.parquet"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"from an earlier export with embedded videos")
    out = export(
        "contrast_sets",
        tmp_path / "export",
        ["verb_lm"],
        on_missing="keep",
        annotations=shared_data / "contrast_sets",
        cache_dir=cache_dir,
    )
    assert sorted(path.name for path in (out / "verb_lm").iterdir()) == [
        "test-00000-of-00001.parquet"
    ]
    (out / "verb_lm" / "test-00000-of-00001.parquet").unlink()
    with pytest.raises(FileNotFoundError, match="lists data files that are not in"):
        push_to_hub(out, "someone/broken")
    assert hub.calls == []
