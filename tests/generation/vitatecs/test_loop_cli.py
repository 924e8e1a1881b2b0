"""The whole loop through the command line, offline: a local OpenAI-compatible server (real
openai client, real HTTP), tiny NLI/filter models, one human revision, finalisation into a
dataset the VITATECS builder reads."""

from __future__ import annotations

import argparse
import csv
import json
import shutil

import pytest
import yaml
from openai_server import OpenAICompatibleServer

from foilkit.errors import UserError
from foilkit.generation.vitatecs import cli
from foilkit.generation.vitatecs.exemplars import ExemplarSets


@pytest.fixture
def vitatecs(capsys):
    """Run ``foilkit generate vitatecs <argv>`` (the configure/run contract); returns stdout."""

    def run(*argv: str) -> str:
        parser = argparse.ArgumentParser(prog="foilkit generate vitatecs")
        cli.configure(parser)
        assert cli.run(parser.parse_args([str(a) for a in argv])) == 0
        return capsys.readouterr().out

    return run


@pytest.fixture
def loop_config(tmp_path, tiny_nli, biased_classifier):
    def write(base_url: str):
        neutral_nli = biased_classifier(tiny_nli, tmp_path / "nli-neutral", "neutral")
        config = {
            "seed": 3,
            "llm": {"model": "tiny-chat", "base_url": base_url, "retry_backoff_s": 0.001},
            "nli": {"model": neutral_nli},
            "filter": {"init_model": tiny_nli, "epochs": 1},
            "loop": {"queries_per_aspect": 3},
            "toxicity": {"model": tiny_nli, "labels": ["contradiction"], "threshold": 1.0},
            "device": "cpu",
        }
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        return path

    return write


def _jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _give_filter_a_verdict(loop, iteration, biased_classifier, label="direction"):
    """Replace a trained filter by one that classifies every pair as ``label``: the random
    tiny model's verdicts are arbitrary, a test needs known ones."""
    folder = loop / "iterations" / str(iteration) / "filter-model"
    biased_classifier(folder, loop / "biased", label)
    shutil.rmtree(folder)
    (loop / "biased").rename(folder)


def test_whole_loop(
    tmp_path, vitatecs, loop_config, captions_file, responder, scripted_answers, biased_classifier
):
    from foilkit.builders import load_builder, prepare
    from foilkit.builders.vitatecs.builder import FEATURES
    from foilkit.generation.foil import read_foils

    loop = tmp_path / "loop"
    with OpenAICompatibleServer(responder, fail_first=2) as server:
        out = vitatecs("init", "--loop", loop, "--config", loop_config(server.base_url))
        assert "Iter. 0" in out and "next: train-filter" in out
        config = yaml.safe_load((loop / "config.yaml").read_text())
        assert config["seed"] == 3 and config["llm"]["top_p"] == 0.8  # the paper's default kept

        # Iteration 0: the filter fine-tuned on the initial exemplars, scored held out.
        out = vitatecs("train-filter", "--loop", loop)
        state = json.loads((loop / "state.json").read_text())
        zero = state["iterations"][0]["filter"]
        assert {"precision", "recall", "f1"} <= zero.keys() and 0.0 <= zero["f1"] <= 1.0
        assert zero["heldout_pairs"] > 0 and zero["synonyms"] == "builtin"
        # Up to the paper's 100 per class, at most half of a class while the sets are small.
        seeds = ExemplarSets.load().pairs()
        sizes = {label: sum(p.label == label for p in seeds) for label in {p.label for p in seeds}}
        assert zero["heldout_per_class"] == {
            label: n // 2 for label, n in sorted(sizes.items()) if n // 2
        }
        assert "next: generate" in out
        _give_filter_a_verdict(loop, 0, biased_classifier)

        # Iteration 1: generate (retried through two rate limits), filter, export.
        out = vitatecs("generate", "--loop", loop, "--captions", captions_file, "--no-progress")
        candidates = _jsonl(loop / "iterations/1/candidates.jsonl")
        assert len(candidates) == 18  # 3 captions x 6 aspects
        assert len(server.requests) == 18 + 2
        for candidate in candidates:
            caption = candidate["query"]["caption"]
            assert candidate["status"] == ("candidate" if caption in scripted_answers else "na")
        # A rerun neither draws new captions nor pays for new requests: refused, and with
        # --force the same captions again, from the cache.
        requests = len(server.requests)
        with pytest.raises(UserError, match=r"iteration 1 already has its candidates.*--force"):
            vitatecs("generate", "--loop", loop, "--captions", captions_file, "--no-progress")
        vitatecs(
            "generate", "--loop", loop, "--captions", captions_file, "--no-progress", "--force"
        )
        assert _jsonl(loop / "iterations/1/candidates.jsonl") == candidates
        assert len(server.requests) == requests
        vitatecs("filter", "--loop", loop)
        filtered = _jsonl(loop / "iterations/1/filtered.jsonl")
        accepted = [c for c in filtered if c["status"] == "accepted"]
        assert len(accepted) == sum(c["status"] == "candidate" for c in candidates) > 0
        assert all(
            c["label"] == "direction" and c["scores"]["nli"]["policy"] == "vitatecs"
            for c in accepted
        )
        out = vitatecs("export", "--loop", loop)
        unique = {(c["query"]["caption"], c["counterfactual"]) for c in accepted}
        assert f"{len(unique)} candidates for revision" in out  # each pair once

        # People rectify the labels; the import starts iteration 1.
        revision = loop / "iterations/1/revision.csv"
        with open(revision, newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert {row["label"] for row in rows} == {"direction"}
        assert all(row["label"] == row["filter_label"] for row in rows)  # as the sheet says
        sheet = (loop / "iterations/1/revision.instructions.md").read_text()
        assert "pre-filled with the filter model's label" in sheet
        rows[0]["label"] = "invalid"
        if len(rows) > 1:
            rows[1]["label"] = ""  # not decided: skipped
        with open(revision, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        labelled = [row for row in rows if row["label"]]
        out = vitatecs("import", "--loop", loop, revision)
        state = json.loads((loop / "state.json").read_text())
        one = state["iterations"][1]
        assert one["human_labels"] == len(labelled)
        assert one["valid_samples"] == sum(row["label"] == "direction" for row in rows)
        pairs = {(row["caption"], row["counterfactual"]) for row in labelled}  # new to the sets
        assert one["exemplar_size"] == state["iterations"][0]["exemplar_size"] + len(pairs)
        assert yaml.safe_load((loop / "exemplars.yaml").read_text())["version"] == 2
        assert "next: train-filter" in out

        out = vitatecs("train-filter", "--loop", loop, "--epochs", "1")
        out = vitatecs("status", "--loop", loop)
        state = json.loads((loop / "state.json").read_text())
        lines = out.splitlines()
        assert lines[0].split() == ["Iter.", "0", "Iter.", "1"]
        assert [line.split()[0] for line in lines[1:7]] == [
            "Precision",
            "Recall",
            "F1-score",
            "Valid",
            "Human",
            "Exemplar",
        ]
        f1 = [f"{r['filter']['f1']:.2f}" for r in state["iterations"]]
        assert lines[3].split()[1:] == f1
        assert lines[6].split()[2:] == [str(r["exemplar_size"]) for r in state["iterations"]]
        assert ("converged" in out) and (loop / "iterations/1/train-filter.run.json").exists()
        trained = json.loads((loop / "iterations/1/train-filter.run.json").read_text())
        assert trained["stage"] == "train-filter" and trained["seed"] == 3
        assert set(trained["models"]) == {"filter.init_model"} and "exemplars" in trained["inputs"]
        assert trained["results"]["model"].endswith("iterations/1/filter-model")

        # Finalisation with the iteration-1 filter, at "scale": every caption for every aspect.
        _give_filter_a_verdict(loop, 1, biased_classifier)
        before = len(server.requests)
        final = tmp_path / "final"
        out = vitatecs(
            "finalize",
            "--loop",
            loop,
            "--captions",
            captions_file,
            "--output",
            final,
            "--per-aspect",
            "10",
            "--no-progress",
        )
        # Prompts of iteration 1 come from the cache, unless their demonstrations changed: the
        # revision added Direction exemplars, so Direction queries draw new ones.
        cached = sum(c["query"]["aspect"] != "direction" for c in candidates)
        assert len(server.requests) - before == 60 - cached

    # Every scripted caption became one Direction row (the filter's aspect), NA ones none.
    table = read_foils(final)  # the one foils output: foils.parquet + run.json
    assert sorted(table["caption"]) == sorted(scripted_answers)
    for name, feature in FEATURES.items():
        assert table.features[name] == feature, name
    assert set(table["aspect"]) == {"direction"} and set(table["iteration"]) == {1}
    provenance = json.loads(table[0]["foil_provenance"][0])
    assert provenance["model_ids"]["generator"] == "tiny-chat"
    assert set(provenance["filter_scores"]) == {"nli", "filter", "toxicity"}
    assert provenance["parameters"]["prompt_hash"] == table[0]["prompt_hash"]
    run = json.loads((final / "run.json").read_text())
    assert run["seed"] == 3 and run["parameters"]["config"]["seed"] == 3
    assert run["results"]["rows"] == {"direction": 8} and run["results"]["rows_written"] == 8
    assert run["models"]["llm"]["id"] == "tiny-chat" and set(run["prompts"]) == {"generation"}
    assert run["inputs"]["captions"]["path"] == str(captions_file)

    # The VITATECS builder reads the annotations the finalisation wrote.
    built = prepare(
        load_builder(
            "vitatecs",
            "direction",
            annotations=str(final / "annotations"),
            on_missing="keep",
            cache_dir=str(tmp_path / "hf"),
        )
    )["test"]
    assert built["id"] == table["id"] and built["foils"] == table["foils"]
    assert built["video_path"] == table["video_path"] and built["caption"] == table["caption"]


def test_errors_name_the_loop_and_the_file(tmp_path, vitatecs, captions_file):
    with pytest.raises(FileNotFoundError, match="not a VITATECS generation loop"):
        vitatecs("status", "--loop", tmp_path / "nowhere")
    bad = tmp_path / "config.yaml"
    bad.write_text("filter: {epoch: 2}\n")
    with pytest.raises(ValueError, match=r"config.yaml: filter: unknown key\(s\) \['epoch'\]"):
        vitatecs("init", "--loop", tmp_path / "loop", "--config", bad)
    vitatecs("init", "--loop", tmp_path / "loop", "--seed", "5", "--model", "local-llm")
    with pytest.raises(FileExistsError, match="is not empty"):
        vitatecs("init", "--loop", tmp_path / "loop")
    with pytest.raises(
        FileNotFoundError, match="candidates.jsonl does not exist yet: run `generate`"
    ):
        vitatecs("filter", "--loop", tmp_path / "loop")
    with pytest.raises(RuntimeError, match="no filter model yet"):
        vitatecs(
            "finalize",
            "--loop",
            tmp_path / "loop",
            "--captions",
            captions_file,
            "--output",
            tmp_path / "final",
        )
    broken = tmp_path / "captions.jsonl"
    broken.write_text('{"caption": "a man runs", "video_name": "v.mp4"}\n')
    with pytest.raises(ValueError, match=r"captions.jsonl:1: missing field\(s\) \['src_dataset'\]"):
        vitatecs("generate", "--loop", tmp_path / "loop", "--captions", broken)
