"""Without ``annotations``, each builder asks the download manager for the upstream files at the
pinned commits. A download manager serving those URLs from ../shared/data stands in for the
network."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest

from foilkit.builders import builder_class, load_builder
from foilkit.builders.annotations import source_text

RAW = "https://raw.githubusercontent.com"
# each upstream repository at the commit its builder pins
VITATECS = f"{RAW}/lscpku/VITATECS/58bff59bb1d3ed287983fca8ca7589498f4db6b2"
VILMA = f"{RAW}/ilkerkesen/ViLMA/746912b7c8e81d53eb946abe26456ad8b7db826f"
RTIME = f"{RAW}/qyr0403/Reversed-in-Time/a5134b6c4211f610ee410f613b9d48968c23cd1a"
CONTRAST_SETS = (
    f"{RAW}/jamespark3922/video-lang-contrast-set/26e101db1d700a5961261cc152a927c9bcef0c74"
)
# (benchmark, config, options, {pinned upstream URL: file in ../shared/data}, rows per split)
CASES = [
    (
        "vitatecs",
        "sequence",
        {},
        {f"{VITATECS}/data/Sequence.jsonl": "vitatecs/Sequence.jsonl"},
        {"test": 151},
    ),
    (
        "vitatecs",
        "sequence",
        {"annotation_version": "opt"},
        {f"{VITATECS}/data_opt/Sequence.jsonl": "vitatecs/opt/Sequence.jsonl"},
        {"test": 380},
    ),
    (
        "vilma",
        "action_counting_difficult",
        {},
        {f"{VILMA}/data/counting-hard-spelled-sec.json": "vilma/counting-hard-spelled-sec.json"},
        {"test": 675},
    ),
    (
        "rtime",
        "origin",
        {},
        {f"{RTIME}/test.json": "rtime/test.json", f"{RTIME}/valid.json": "rtime/valid.json"},
        {"test": 1000, "validation": 500},
    ),
    (
        "contrast_sets",
        "verb_human",
        {},
        {
            f"{CONTRAST_SETS}/msrvtt/msrvtt_human_contrast_set.tsv": (
                "contrast_sets/msrvtt_human_contrast_set.tsv"
            )
        },
        {"test": 2554},
    ),
]


class Mirror(datasets.DownloadManager):
    """A download manager that serves known URLs from local files and records every request."""

    def __init__(self, files: dict[str, Path]) -> None:
        super().__init__()
        self.files = files
        self.requested: list[str] = []

    def download(self, url_or_urls):
        urls = url_or_urls if isinstance(url_or_urls, dict) else {"_": url_or_urls}
        self.requested += urls.values()
        unknown = [url for url in urls.values() if url not in self.files]
        if unknown:
            raise FileNotFoundError(f"not an upstream file: {unknown}")
        paths = {key: str(self.files[url]) for key, url in urls.items()}
        return paths if isinstance(url_or_urls, dict) else paths["_"]


@pytest.mark.integration
@pytest.mark.parametrize(
    ("name", "config", "options", "upstream", "rows"),
    CASES,
    ids=[f"{case[0]}-{case[1]}-{len(case[2])}" for case in CASES],
)
def test_default_source_is_the_pinned_upstream_files(
    shared_data, tmp_path, name, config, options, upstream, rows
):
    mirror = Mirror({url: shared_data / local for url, local in upstream.items()})
    builder = load_builder(name, config, on_missing="keep", cache_dir=str(tmp_path), **options)
    builder.download_and_prepare(dl_manager=mirror)
    assert sorted(mirror.requested) == sorted(upstream)
    assert {split: data.num_rows for split, data in builder.as_dataset().items()} == rows


@pytest.mark.parametrize("name", ["vitatecs", "vinoground"])
def test_the_card_says_downloaded_files_came_from_the_pin_and_local_ones_from_a_copy(name):
    """A card names the pinned commit or branch as where the files came from only when the build
    downloaded them; a local ``annotations`` folder is said to be a copy of that revision."""
    source = builder_class(name).SOURCE
    link = f"[{source.repo}]({source.homepage})"
    downloaded, local = source_text(source, local=False), source_text(source, local=True)
    assert downloaded.startswith(f"{link} at ") and "copy" not in downloaded
    assert local.startswith("a local copy") and f"should be a copy of the files of {link}" in local
    assert ("when downloaded" in downloaded) == ("when the copy was made" in local)
