"""Models larger than one device (``device_map``): a model spread over CPU memory and disk scores
as the whole model does, in one process and in two replicas, and each process gets its own GPUs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from launch import accelerate_launch, launched_score, run_to_success

from foilkit.scorers import placement as placement_module
from foilkit.scorers.api import ScoreOptions, score_rows
from foilkit.scorers.placement import (
    input_device,
    parse_max_memory,
    plan_placement,
    replica_gpus,
)

#: Per tiny model, the share of its weights' bytes that ``max_memory`` gives the CPU: small
#: enough that part of the model goes to disk, large enough that part stays in memory.
CPU_SHARE = {"gpt2": 0.9, "qwen2-vl": 0.5, "llava-next-video": 0.5}
QUIET = {"use_cache": False, "progress": False, "num_workers": 0, "batch_size": 2}


def cpu_budget(model_dir: str, model: str) -> int:
    """Bytes of CPU memory that split ``model`` between memory and disk."""
    size = sum(path.stat().st_size for path in Path(model_dir).glob("*.safetensors"))
    return int(CPU_SHARE[model] * size)


def score_values(rows) -> list[float]:
    """Every score of every row, flattened in row order."""
    values = []
    for record in rows:
        assert record["error"] is None, record["error"]
        values += [record["caption_score"], *record["foil_scores"]]
        if record.get("proficiency_caption_score") is not None:
            values += [record["proficiency_caption_score"], *record["proficiency_foil_scores"]]
    return values


@pytest.mark.parametrize(
    ("model", "mode"),
    [("gpt2", None), ("qwen2-vl", None), ("llava-next-video", None), ("qwen2-vl", "choice")],
)
def test_a_model_split_over_cpu_and_disk_scores_as_the_whole_model(
    model, mode, tiny_model, benchmark, tmp_path
):
    path, rows = tiny_model(model), benchmark.select(range(3))
    whole = score_rows(path, rows, None, ScoreOptions(mode=mode, **QUIET))
    spread = score_rows(
        path,
        rows,
        None,
        ScoreOptions(
            mode=mode,
            device_map="auto",
            max_memory={"cpu": cpu_budget(path, model)},
            offload_folder=str(tmp_path / "offload"),
            **QUIET,
        ),
    )
    placement = spread.run["placement"]
    assert whole.run["placement"] is None
    assert placement["device_map"] == "auto" and placement["replicas"] == 1
    (replica,) = placement["layout"]
    assert set(replica["modules_per_device"]) == {"cpu", "disk"}  # really split
    assert replica["input_device"] == "cpu" and replica["gpus"] == []
    np.testing.assert_allclose(score_values(spread.rows), score_values(whole.rows), atol=1e-5)


@pytest.mark.slow
def test_two_replicas_give_the_scores_of_one(tiny_model, saved_benchmark, tmp_path):
    path = tiny_model("qwen2-vl")
    outs = {}
    for command, name in ([sys.executable], "one"), (accelerate_launch(2), "two"):
        spread = [
            "--device-map",
            "auto",
            "--max-memory",
            f"cpu={cpu_budget(path, 'qwen2-vl')}",
            "--offload-folder",
            str(tmp_path / f"offload-{name}"),
        ]
        run_to_success(
            [*command, *launched_score(path, saved_benchmark, tmp_path / name, 2, 0, *spread)]
        )
        outs[name] = [
            json.loads(line) for line in (tmp_path / name / "scores.jsonl").read_text().splitlines()
        ]
    assert [row["id"] for row in outs["two"]] == [row["id"] for row in outs["one"]]
    np.testing.assert_allclose(score_values(outs["two"]), score_values(outs["one"]), atol=1e-5)
    placement = json.loads((tmp_path / "two/run.json").read_text())["placement"]
    assert placement["replicas"] == 2 and placement["gpus_per_replica"] is None
    assert [replica["process"] for replica in placement["layout"]] == [0, 1]
    assert [replica["offload_folder"] for replica in placement["layout"]] == [
        str(tmp_path / "offload-two" / f"process-{index}") for index in (0, 1)
    ]
    assert all(set(r["modules_per_device"]) == {"cpu", "disk"} for r in placement["layout"])
    shards = tmp_path / "two/shards"
    assert all(shard.read_text() for shard in shards.iterdir())  # both replicas scored rows


def test_a_model_that_must_be_rewritten_to_disk_asks_for_an_offload_folder(
    tiny_model, benchmark, tmp_path
):
    """Weights offloaded from a safetensors checkpoint are read in place; any other checkpoint
    (here a pickled ``pytorch_model.bin``) must be written out, so the folder is needed."""
    import shutil

    import torch
    from safetensors.torch import load_file

    path = tmp_path / "bin-checkpoint"
    shutil.copytree(tiny_model("gpt2"), path)
    for weights in path.glob("*.safetensors"):
        torch.save(load_file(weights), path / "pytorch_model.bin")
        weights.unlink()
    budget = cpu_budget(tiny_model("gpt2"), "gpt2")
    options = ScoreOptions(device_map="auto", max_memory={"cpu": budget}, **QUIET)
    with pytest.raises(ValueError, match=r"pass offload_folder \(--offload-folder DIR\)"):
        score_rows(str(path), benchmark.select(range(1)), None, options)


def test_max_memory_is_read_from_device_size_pairs():
    assert parse_max_memory("0=70GiB, 1=70GiB,cpu=200GiB") == {
        0: "70GiB",
        1: "70GiB",
        "cpu": "200GiB",
    }
    assert parse_max_memory({"cpu": 1000, 0: "2 gb", 1: "1.5gib"}) == {
        "cpu": 1000,
        0: "2GB",
        1: "1.5GiB",
    }
    assert parse_max_memory("cpu=226052") == {"cpu": 226052}  # a byte count is a number
    assert parse_max_memory(None) is None


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("0=70GiB,foo", "'foo' is not DEVICE=SIZE"),
        ("gpu0=1GiB", "device 'gpu0' is neither"),
        ("0=lots", "'lots' (device 0) is not a size"),
        ("0=2TB", "'2TB' (device 0) is not a size"),
        ("0=1GiB,0=2GiB", "names device 0 twice"),
        ("cpu=", "'cpu=' is not DEVICE=SIZE"),
    ],
)
def test_a_malformed_max_memory_names_the_fix(text, named):
    with pytest.raises(ValueError, match="--max-memory") as error:
        ScoreOptions(device_map="auto", max_memory=text)
    assert named in str(error.value)
    assert "e.g. --max-memory 0=70GiB,1=70GiB,cpu=200GiB" in str(error.value)


def test_the_command_line_reports_a_malformed_max_memory_in_one_line(capsys, tmp_path):
    from foilkit.cli import main

    argv = ["score", "--model", "m", "--dataset", "d", "--out", str(tmp_path / "out")]
    status = main([*argv, "--device-map", "auto", "--max-memory", "0=70GiB,foo"])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("foilkit score: error: max_memory (--max-memory)")
    assert "e.g. --max-memory 0=70GiB,1=70GiB,cpu=200GiB" in err


def test_evaluate_takes_the_placement_flags():
    from foilkit.cli import command_parser

    _, parser = command_parser("evaluate")
    args = parser.parse_args(
        ["--benchmark", "vitatecs", "--model", "m", "--out", "o", "--device-map", "auto"]
        + ["--max-memory", "0=70GiB", "--offload-folder", "off", "--gpus-per-replica", "4"]
    )
    assert (args.device_map, args.max_memory, args.offload_folder, args.gpus_per_replica) == (
        "auto",
        "0=70GiB",
        "off",
        4,
    )


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"max_memory": "cpu=1GiB"}, "add device_map='auto' (--device-map auto)"),
        ({"offload_folder": "off"}, "add device_map='auto' (--device-map auto)"),
        ({"gpus_per_replica": 2}, "add device_map='auto' (--device-map auto)"),
        ({"device_map": "auto", "device": "cuda:0"}, "pass one of them"),
        ({"device_map": "everywhere"}, "unknown device_map (--device-map)"),
        ({"device_map": "auto", "gpus_per_replica": 0}, "must be >= 1"),
    ],
)
def test_placement_options_that_do_not_go_together_are_refused(options, named):
    with pytest.raises(ValueError, match=named.replace("(", r"\(").replace(")", r"\)")):
        ScoreOptions(**options)


def test_a_dual_encoder_refuses_a_device_map_before_loading(tiny_model, benchmark):
    with pytest.raises(ValueError, match="only the video LLM and text LM adapters spread"):
        score_rows(tiny_model("clip"), benchmark, None, ScoreOptions(device_map="auto", **QUIET))


def place(process: int, processes: int, num_gpus: int = 8, **options):
    """The placement of local process ``process`` of ``processes`` on a node of ``num_gpus``."""
    return plan_placement(
        options.pop("device_map", "auto"),
        options.pop("max_memory", None),
        options.pop("offload_folder", None),
        options.pop("gpus_per_replica", None),
        device=None,
        local_index=process,
        local_processes=processes,
        process_index=process,
        num_processes=processes,
        num_gpus=num_gpus,
    )


@pytest.fixture
def free_memory(monkeypatch):
    """Every GPU with 80 GB free, 256 GB of free CPU memory."""
    monkeypatch.setattr(placement_module, "_free_gpu_memory", lambda gpu: 80 * 10**9)
    monkeypatch.setattr(placement_module, "_free_cpu_memory", lambda: 256 * 10**9)


def test_each_replica_owns_its_group_of_gpus(free_memory):
    """8 GPUs, 2 processes x 4 GPUs: process i takes GPUs 4i..4i+3, and its max_memory names
    those only (a size given for one of them kept, the rest 90% of their free memory)."""
    first, second = (
        place(i, 2, gpus_per_replica=4, max_memory="4=70GiB,0=60GiB,cpu=200GiB") for i in (0, 1)
    )
    assert first.gpus == (0, 1, 2, 3) and second.gpus == (4, 5, 6, 7)
    assert first.first_device == "cuda:0" and second.first_device == "cuda:4"
    assert second.max_memory == {4: "70GiB", 5: 72e9, 6: 72e9, 7: 72e9, "cpu": "200GiB"}
    assert first.max_memory[0] == "60GiB" and set(first.max_memory) == {0, 1, 2, 3, "cpu"}
    assert second.pretrained_kwargs()["max_memory"] == second.max_memory
    # by default the node's GPUs are shared evenly and the CPU memory too
    default = place(1, 2)
    assert default.gpus == (4, 5, 6, 7) and default.max_memory["cpu"] == int(0.9 * 128 * 10**9)
    # one process takes every GPU, with accelerate's own default budget
    assert place(0, 1).gpus == tuple(range(8)) and place(0, 1).max_memory is None


def test_replica_groups_must_fit_the_node(free_memory):
    assert replica_gpus(2, 2, 8) == (4, 5)
    with pytest.raises(ValueError, match="needs GPUs 8-11.*at most 2 processes per node"):
        place(2, 3, gpus_per_replica=4)
    with pytest.raises(ValueError, match="launch at most one process per GPU"):
        place(0, 4, num_gpus=2)
    with pytest.raises(ValueError, match="names GPU 8, but this machine has 8"):
        place(0, 1, max_memory="8=1GiB")
    with pytest.raises(ValueError, match="needs GPUs and this machine has none"):
        place(0, 1, num_gpus=0, gpus_per_replica=1)
    with pytest.raises(ValueError, match="GPU 0 needs GPUs"):
        place(0, 1, num_gpus=0, max_memory="0=1GiB")


def test_processes_offload_to_folders_of_their_own():
    assert place(0, 1, num_gpus=0, offload_folder="off").offload_folder == "off"
    assert [place(i, 2, num_gpus=0, offload_folder="off").offload_folder for i in (0, 1)] == [
        "off/process-0",
        "off/process-1",
    ]


def test_inputs_go_to_the_first_gpu_of_the_map_else_the_cpu():
    assert str(input_device({"embed": "cpu", "layers.0": 1, "layers.1": 2})) == "cuda:1"
    assert str(input_device({"embed": 0, "lm_head": "disk"})) == "cuda:0"
    assert str(input_device({"embed": "cpu", "lm_head": "disk"})) == "cpu"
    assert str(input_device({"": "disk"})) == "cpu"
