"""Bias checks: JS divergence of word frequencies, text-only baseline."""

from __future__ import annotations

import math

import pytest

from foilkit.generation.bias import (
    filter_bias_report,
    js_divergence,
    lexical_bias,
    text_only_baseline,
    word_frequencies,
)
from foilkit.generation.perplexity import perplexities


def test_js_divergence_hand_computed():
    # f = (1/2, 1/2), c = (1, 0), m = (3/4, 1/4):
    # KL(f||m) = 1/2 log2(2/3) + 1/2 log2(2) ; KL(c||m) = log2(4/3)
    expected = ((0.5 * math.log2(2 / 3) + 0.5) + math.log2(4 / 3)) / 2
    assert js_divergence({"a": 1, "b": 1}, {"a": 5}) == pytest.approx(expected)
    assert expected == pytest.approx(0.311278, abs=1e-6)
    assert js_divergence({"a": 1}, {"b": 1}) == pytest.approx(1.0)
    assert js_divergence({"a": 1}, {"b": 1}, base=math.e) == pytest.approx(math.log(2))
    assert js_divergence({"a": 2, "b": 1}, {"b": 2, "a": 4}) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="empty"):
        js_divergence({}, {"a": 1})


def test_lexical_bias_and_filter_report():
    captions = ["a man opens the door", "a woman closes the door"]
    assert word_frequencies(captions)["door"] == 2
    assert lexical_bias(captions, list(reversed(captions))) == pytest.approx(0.0)
    before = ["a man closes the door", "a woman opens the door"]
    after = ["a man closes the door"]
    report = filter_bias_report(captions, before, after, captions_after=captions[:1])
    assert report["js_before"] == pytest.approx(0.0)
    # "a man opens the door" vs "a man closes the door": 2 of 5 words differ.
    assert report["js_after"] == pytest.approx(
        js_divergence(
            {"a": 1, "man": 1, "closes": 1, "the": 1, "door": 1},
            {"a": 1, "man": 1, "opens": 1, "the": 1, "door": 1},
        )
    )
    assert report["js_change"] == pytest.approx(report["js_after"]) and report["foils_after"] == 1


def test_text_only_baseline_counts_preferences(text_lm):
    items = [
        ("a man is walking", ["a woman runs fast", "dog the"]),
        ("a woman runs fast", ["a man is walking"]),
    ]
    report = text_only_baseline(text_lm, items)
    ppl = dict(
        zip(
            *[
                ["a man is walking", "a woman runs fast", "dog the"],
                perplexities(text_lm, ["a man is walking", "a woman runs fast", "dog the"]),
            ]
        )
    )
    wins = (ppl["a man is walking"] < min(ppl["a woman runs fast"], ppl["dog the"])) + (
        ppl["a woman runs fast"] < ppl["a man is walking"]
    )
    assert report["accuracy"] == wins / 2
    assert report["chance"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert report["items"] == 2
    with pytest.raises(ValueError, match="no foils"):
        text_only_baseline(text_lm, [("a caption", [])])


def test_bias_command(tmp_path, capsys):
    import argparse
    import json

    from foilkit.generation import bias_cli
    from foilkit.synthetic.models import tiny_model_path

    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"caption": "a man opens the door", "foils": ["a man closes the door"]}) + "\n"
    )
    parser = argparse.ArgumentParser()
    bias_cli.configure(parser)
    out = tmp_path / "report.json"
    args = parser.parse_args(
        [
            "--rows",
            str(rows),
            "--before",
            str(rows),
            "--lm",
            str(tiny_model_path("gpt2")),
            "-o",
            str(out),
        ]
    )
    assert bias_cli.run(args) == 0
    report = json.loads(out.read_text())
    assert report["js"] == pytest.approx(
        js_divergence(
            {"opens": 1, "a": 1, "man": 1, "the": 1, "door": 1},
            {"closes": 1, "a": 1, "man": 1, "the": 1, "door": 1},
        )
    )
    assert report["filter"]["js_change"] == pytest.approx(0.0)
    assert report["text_only"]["items"] == 1
    assert json.loads(capsys.readouterr().out) == report


def test_bias_command_reads_a_foils_output_and_records_its_run(tmp_path, capsys):
    import argparse
    import json

    from foilkit.generation import bias_cli
    from foilkit.generation.foil import Foil, foil_row, write_foils
    from foilkit.generation.provenance import RunRecord

    rows = [foil_row("a", "a man opens the door", [Foil("a man closes the door", "verb", "r")])]
    out = tmp_path / "foils"
    write_foils(out, rows, RunRecord("contrast", "test"))
    parser = argparse.ArgumentParser()
    bias_cli.configure(parser)
    report_path = tmp_path / "report.json"
    for rows_argument in (out, out / "foils.parquet"):
        args = parser.parse_args(["--rows", str(rows_argument), "-o", str(report_path)])
        assert bias_cli.run(args) == 0
        report = json.loads(report_path.read_text())
        assert report["rows"] == 1 and report["js"] == pytest.approx(
            js_divergence(
                word_frequencies(["a man opens the door"]),
                word_frequencies(["a man closes the door"]),
            )
        )
    record = RunRecord.read(tmp_path / "report.json.run.json")
    assert (record.pipeline, record.stage) == ("bias", "bias")
    assert record.inputs["rows"]["path"] == str(out / "foils.parquet")
    capsys.readouterr()


# ViLMA appendix B.1: JS divergence of foils vs captions per subtest, as the paper prints it.
VILMA_PAPER_JS = {
    "change-state-action": 0.119,
    "rare-actions-verb-foils": 0.383,
    "relations": 0.008,
    "SRL_Actor_Swapping": 0.005,
}


@pytest.mark.parametrize(("subtest", "paper"), sorted(VILMA_PAPER_JS.items()))
def test_bias_command_reproduces_vilma_b1_from_its_files(
    shared_data, tmp_path, capsys, subtest, paper
):
    import argparse
    import json

    from foilkit.generation import bias_cli

    path = shared_data / "vilma" / f"{subtest}.json"
    if not path.exists():
        pytest.skip(f"{path} is not present")
    parser = argparse.ArgumentParser()
    bias_cli.configure(parser)
    assert bias_cli.run(parser.parse_args(["--rows", str(path)])) == 0
    report = json.loads(capsys.readouterr().out)
    print(f"{subtest}: JS {report['js']:.4f} (paper {paper}) over {report['rows']} items")
    assert report["rows"] == len(json.loads(path.read_text()))
    assert round(report["js"], 3) == paper


def test_vilma_files_can_be_limited_to_valid_items(tmp_path):
    import json

    from foilkit.generation.bias_cli import vilma_pairs

    items = {
        "a": {
            "caption": "a man opens a door",
            "foils": ["a man closes a door"],
            "mturk": {"caption": 3},
            "proficiency": {"human": {"caption": 1}},
        },
        "b": {
            "caption": "a dog runs",
            "foils": ["a dog sits"],
            "mturk": {"caption": 1},
            "proficiency": {"human": {"caption": 1}},
        },
    }
    path = tmp_path / "subtest.json"
    path.write_text(json.dumps(items))
    assert len(vilma_pairs(path)) == 2
    assert vilma_pairs(path, valid_only=True) == [("a man opens a door", ["a man closes a door"])]
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="object of items keyed by id"):
        vilma_pairs(path)
