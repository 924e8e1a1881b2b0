"""The conformance table of model families (``foilkit.synthetic.models.families``).

One test per model type transformers lists as video-capable (and per encoder foilkit claims):
it is ``tested`` (its tiny twin exists and the test file the row names scores it, in each of its
adapter's modes), ``refused`` (foilkit's one-line reason, rebuilt from the config alone), or
``untested``, which is reported as a skip with its reason, so ``pytest -ra`` lists what is left
and nothing untested passes as supported.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from foilkit.synthetic.models import FIDELITY_MODELS, TINY_MODELS
from foilkit.synthetic.models.families import (
    COLUMNS,
    REFUSED,
    Family,
    bare_config,
    claiming_adapter,
    counts,
    families,
    readme_table,
    refusal,
    spliced_readme,
    video_model_types,
)

ROOT = Path(__file__).resolve().parents[1]
MODEL_TYPES = video_model_types()


@functools.cache
def rows() -> dict[str, Family]:
    return {row.model_type: row for row in families()}


def test_the_list_is_transformers_own():
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
    from transformers.models.auto.video_processing_auto import VIDEO_PROCESSOR_MAPPING_NAMES

    video_llms = set(MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES) & set(
        VIDEO_PROCESSOR_MAPPING_NAMES
    )
    assert video_llms <= set(MODEL_TYPES)
    assert {"xclip", "videoprism", "pe_video", "pe_audio_video", "clip", "blip"} <= set(MODEL_TYPES)
    assert len(MODEL_TYPES) == len(set(MODEL_TYPES))


@pytest.mark.parametrize("model_type", MODEL_TYPES)
def test_every_family_is_tested_refused_or_reported_untested(model_type):
    row = rows()[model_type]
    assert row.status in ("tested", "refused", "untested")
    if row.status == "refused":
        # foilkit's reason, rebuilt from the weight-less config: one line naming the family
        reason = refusal(model_type, claiming_adapter(bare_config(model_type)))
        assert reason and row.reason == reason and "\n" not in reason
        assert repr(model_type) in reason
        # no frame reaches it: the table claims nothing of how many, or how frame times would
        cells = readme_table([row]).splitlines()[2].strip("| ").split(" | ")
        assert row.timestamps == "" and cells[COLUMNS.index("timestamps")] == "-"
        assert row.frames == "" and cells[COLUMNS.index("frames")] == "-"
        return
    assert row.adapter is not None, f"{model_type}: no adapter claims it, yet it is not refused"
    if row.status == "untested":
        assert row.twin is None
        pytest.skip(f"untested: {model_type} ({row.adapter}) has no tiny twin scored yet")
    registry = {**TINY_MODELS, **FIDELITY_MODELS}
    assert row.twin in registry, f"{model_type}: twin {row.twin!r} is not a registered tiny model"
    test = ROOT / row.test
    source = test.read_text(encoding="utf-8")
    assert f'"{row.twin}"' in source, f"{row.test} does not score the twin {row.twin!r}"
    if len(row.modes) > 1:
        for mode in row.modes:
            assert f'"{mode}"' in source, f"{row.test} never scores {model_type} in mode {mode!r}"


@pytest.mark.parametrize("model_type", REFUSED)
def test_the_documented_refusals_stay_refused(model_type):
    assert rows()[model_type].status == "refused"


def test_the_untested_families_are_counted(capsys):
    tally = counts(list(rows().values()))
    assert tally["families"] == len(MODEL_TYPES)
    assert tally["tested"] + tally["refused"] + tally["untested"] == tally["families"]
    assert tally["tested"] >= 10 and tally["refused"] >= 1
    with capsys.disabled():
        print(f"\nmodel families: {json.dumps(tally)}")


def test_the_docs_table_is_the_generated_one():
    """The families table lives on the docs' model families page (the README links to it)."""
    page = (ROOT / "docs" / "model-families.md").read_text(encoding="utf-8")
    table = readme_table(list(rows().values()))
    assert spliced_readme(page, table) == page, (
        "the families table of docs/model-families.md is stale: run "
        "python -m foilkit.synthetic.models.families --update-readme docs/model-families.md"
    )
    assert "| untested |" in table or counts(list(rows().values()))["untested"] == 0


def test_splicing_needs_the_markers():
    with pytest.raises(ValueError, match="lacks the markers"):
        spliced_readme("# no table here\n", "| x |\n")


def test_foilkit_models_prints_the_table(capsys):
    from foilkit.cli import main

    assert main(["models", "--json", "--status", "untested"]) == 0
    listing = json.loads(capsys.readouterr().out)
    tally = counts(list(rows().values()))
    assert listing["counts"] == tally
    assert len(listing["families"]) == tally["untested"]
    assert all(row["status"] == "untested" for row in listing["families"])
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert f"{tally['families']} families: {tally['tested']} tested" in out
    assert "llava" in out and "refused" in out
