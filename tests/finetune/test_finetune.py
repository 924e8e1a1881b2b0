"""``foilkit finetune``: batches with reversed hard negatives, the loss, training end to end on CPU
with a tiny CLIP, resuming, the saved folder through ``foilkit evaluate``, and bad input."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import datasets
import pytest
import torch

from foilkit.cli import main
from foilkit.finetune import contrastive_loss, finetune, last_checkpoint, push_model
from foilkit.finetune.data import check_reversible, epoch_batches, training_items
from foilkit.scorers.adapters.temporal_clip import ARCHITECTURE, TEMPORAL_WEIGHTS

#: Small, fast settings: 4 frames, batches of 8 clips (4 items + their reversals).
FAST = {
    "num_frames": 4,
    "batch_size": 8,
    "learning_rate": 1e-3,
    "base_learning_rate": 1e-4,
    "temporal_layers": 1,
    "cache_frames": True,
    "workers": 2,
}


@pytest.fixture(scope="module")
def benchmark_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from foilkit.demo import write_demo_benchmark

    return write_demo_benchmark(tmp_path_factory.mktemp("benchmark"))


@pytest.fixture(scope="module")
def trained(finetune_argv, tmp_path_factory: pytest.TempPathFactory):
    """One epoch, then ``--resume`` for a second: through the command line."""
    out = tmp_path_factory.mktemp("run")
    argv = finetune_argv("direction", "--out", str(out), "--num-workers", "2")
    assert main([*argv, "--epochs", "1"]) == 0
    first = json.loads((out / "training.json").read_text())
    assert main([*argv, "--epochs", "2", "--resume"]) == 0
    return out, first


def test_reversed_caption_comes_from_the_reversed_row_or_a_reversal_foil():
    rtime = [
        {"id": "f", "video": "a.mp4", "caption": "a man opens a door", "reversed": False},
        {"id": "r", "video": "a.mp4", "caption": "a man closes a door", "reversed": True},
    ]
    (item,) = training_items(rtime)
    assert (item.caption, item.reversed_caption, item.reversed_rule) == (
        "a man opens a door",
        "a man closes a door",
        "reversed row",
    )
    foil = {
        "id": "d",
        "video": "b.mp4",
        "caption": "moves to the left",
        "reversed": False,
        "foils": ["moves to the right"],
        "aspect": "direction",
    }
    speed = {**foil, "id": "s", "video": "c.mp4", "aspect": "speed", "foils": ["moves slowly"]}
    items = training_items([foil, speed])
    assert items[0].reversed_caption == "moves to the right"
    assert items[1].reversed_caption is None
    with pytest.raises(ValueError, match=r"1 of 2 training items have no reversed caption \('s'\)"):
        check_reversible(items, ("direction",))


@pytest.mark.parametrize("hard_negatives", ["reversed", "none"])
def test_batches_hold_each_item_with_its_reversal_only_with_hard_negatives(
    hard_negatives: str, reversal_rows
):
    items = training_items(reversal_rows(10))
    batches = epoch_batches(items, hard_negatives, 4, seed=0, epoch=0)
    clips = [clip for batch in batches for clip in batch]
    assert sorted((c.item, c.reversed) for c in clips) == [
        (i, r) for i in range(10) for r in (False, True)
    ]
    together = all(
        {(c.item, not c.reversed) for c in batch} == {(c.item, c.reversed) for c in batch}
        for batch in batches
    )
    assert together == (hard_negatives == "reversed")
    assert batches == epoch_batches(items, hard_negatives, 4, seed=0, epoch=0)
    assert batches != epoch_batches(items, hard_negatives, 4, seed=0, epoch=1)


@pytest.mark.parametrize(
    ("hard_negatives", "batch_size", "error"),
    [
        (
            "reversed",
            7,
            "batch_size must be >= 2, and even with reversed hard negatives (an item "
            "and its reversal fill two places), got 7",
        ),
        (
            "none",
            1,
            "batch_size must be >= 2, and even with reversed hard negatives (an item "
            "and its reversal fill two places), got 1",
        ),
        ("random", 8, "unknown hard_negatives 'random'; choose from ['reversed', 'none']"),
    ],
)
def test_the_options_and_the_batches_refuse_the_same_batch_settings(
    hard_negatives: str, batch_size: int, error: str, reversal_rows
):
    """One check (:func:`foilkit.finetune.negatives.check_batch`) for the run's options and for
    :func:`epoch_batches` called alone (``benchmarks/training_speed.py``): the same message."""
    from foilkit.finetune import FinetuneOptions

    with pytest.raises(ValueError, match=f"^{re.escape(error)}$"):
        FinetuneOptions(hard_negatives=hard_negatives, batch_size=batch_size)
    with pytest.raises(ValueError, match=f"^{re.escape(error)}$"):
        epoch_batches(training_items(reversal_rows(4)), hard_negatives, batch_size, 0, 0)


@pytest.mark.parametrize("hard_negatives", ["reversed", "none"])
def test_look_alikes_never_share_a_batch(hard_negatives: str):
    """``distinct_by``: rows of one group (what static cues cannot tell apart) go to different
    batches; an item and its reversal are one item, so without hard negatives they part too."""
    rows = []
    for i in range(24):
        look = f"colour {i % 4}"  # 6 items a colour
        rows += [
            {
                "id": f"{i}",
                "video": f"{i}.mp4",
                "caption": f"c{i}",
                "reversed": False,
                "look": look,
            },
            {
                "id": f"{i}r",
                "video": f"{i}.mp4",
                "caption": f"r{i}",
                "reversed": True,
                "look": look,
            },
        ]
    items = training_items(rows, distinct_by="look")
    assert [item.group for item in items[:5]] == [
        "colour 0",
        "colour 1",
        "colour 2",
        "colour 3",
        "colour 0",
    ]
    batches = epoch_batches(items, hard_negatives, 8, seed=0, epoch=0)
    assert sorted((c.item, c.reversed) for b in batches for c in b) == [
        (i, r) for i in range(24) for r in (False, True)
    ]  # every clip once
    for batch in batches:
        groups = [items[c.item].group for c in batch]
        if hard_negatives == "reversed":  # 4 colours, each with its reversal
            assert sorted(groups) == sorted([*set(groups)] * 2) and len(batch) == 8
        else:  # 12 clips a colour: 12 batches of 4 colours
            assert len(groups) == len(set(groups)) == 4
    assert len(batches) == (6 if hard_negatives == "reversed" else 12)
    with pytest.raises(ValueError, match="distinct_by='colour' is not a column"):
        training_items(rows, distinct_by="colour")


def test_contrastive_loss_counts_every_clip_of_a_repeated_caption_as_positive():
    views = torch.nn.functional.normalize(
        torch.tensor([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0]]), dim=-1
    )
    texts = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    good = contrastive_loss(views, texts, ["a", "a", "b"], torch.tensor(10.0))
    # the same texts, each now the caption of the other clips (texts come in first-seen order)
    bad = contrastive_loss(views, texts.flip(0), ["b", "b", "a"], torch.tensor(10.0))
    assert float(good) < 0.1 < float(bad)


def test_finetune_saves_a_hub_folder_with_record_and_loss_curve(trained):
    from PIL import Image

    out, first = trained
    model = out / "model"
    config = json.loads((model / "config.json").read_text())
    assert config["architectures"] == [ARCHITECTURE] and config["model_type"] == "clip"
    for name in (
        "model.safetensors",
        TEMPORAL_WEIGHTS,
        "tokenizer_config.json",
        "processor_config.json",
    ):
        assert (model / name).is_file(), name
    record = json.loads((out / "training.json").read_text())
    assert record["hard_negatives"] == "reversed" and record["seed"] == 0
    assert record["num_frames"] == 4
    assert record["data"]["reversed_caption_rules"] == {"reversed row": 16}
    assert record["packages"]["torch"] and record["packages"]["transformers"]
    with Image.open(out / "loss.png") as image:
        assert image.format == "PNG"
    # resumed: the first epoch's losses kept, the second epoch's appended
    assert record["losses"][: len(first["losses"])] == first["losses"]
    assert {entry["epoch"] for entry in record["losses"]} == {1, 2}
    assert last_checkpoint(out).name == "epoch-2"


def test_the_towers_train_as_clip4clips_default_freeze_layer_num(trained, clip_model: str):
    """CLIP4Clip's ``freeze_layer_num`` 0 (its default): the embeddings (token, position, patch,
    class) and ``ln_pre`` come out as they went in; every layer and the top were trained."""
    from transformers import CLIPModel

    before = CLIPModel.from_pretrained(clip_model).state_dict()
    after = CLIPModel.from_pretrained(trained[0] / "model").state_dict()
    unchanged = {name for name in before if torch.equal(before[name], after[name])}
    embeddings = {name for name in before if ".embeddings." in name or "pre_layrnorm" in name}
    assert embeddings and embeddings <= unchanged
    trained_names = set(before) - unchanged
    layers = {
        name.split(".layers.")[1].split(".")[0] for name in trained_names if ".layers." in name
    }
    assert layers == {"0", "1"}
    assert {"text_projection.weight", "visual_projection.weight"} <= trained_names
    record = json.loads((trained[0] / "training.json").read_text())
    assert record["options"]["freeze_layers"] == 0


@pytest.mark.parametrize("model", ["clip", "siglip"])
@pytest.mark.parametrize("freeze_layers", [-1, 0, 1])
def test_freeze_layers_keeps_what_sits_below_layer_n_of_both_towers(model: str, freeze_layers: int):
    """The rule on every parameter of a real CLIP and SigLIP: frozen exactly when it is an
    embedding or ``pre_layrnorm`` (from 0 on), or in a layer below N; -1 freezes nothing."""
    from transformers import AutoModel

    from foilkit.finetune.train import frozen
    from foilkit.synthetic.models import tiny_model_path

    names = [
        name for name, _ in AutoModel.from_pretrained(tiny_model_path(model)).named_parameters()
    ]
    layers = {
        name: int(name.split(".layers.")[1].split(".")[0]) for name in names if ".layers." in name
    }
    for name in names:
        below = (
            layers[name] < freeze_layers
            if name in layers
            else (freeze_layers >= 0 and (".embeddings." in name or "pre_layrnorm" in name))
        )
        assert frozen(name, freeze_layers) == below, name
    assert all(
        frozen(name, -1, image_tower=True)
        == name.startswith(("vision_model.", "visual_projection."))
        for name in names
    )


def test_a_checkpoint_recorded_with_the_old_frames_option_resumes(
    trained, finetune_argv, tmp_path: Path, capsys
):
    """Checkpoints written before ``frames`` became ``num_frames`` still resume, and still
    refuse other options."""
    out = tmp_path / "run"
    shutil.copytree(trained[0], out)
    done_file = last_checkpoint(out) / "done.json"
    done = json.loads(done_file.read_text())
    done["options"]["frames"] = done["options"].pop("num_frames")
    argv = [*finetune_argv("direction", "--out", str(out), "--num-workers", "2"), "--resume"]
    done_file.write_text(json.dumps({**done, "options": {**done["options"], "frames": 8}}))
    assert main([*argv, "--epochs", "3"]) == 2  # a user error: the run had other options
    assert "was trained with other options" in capsys.readouterr().err
    done_file.write_text(json.dumps(done))
    assert main([*argv, "--epochs", "3"]) == 0
    assert last_checkpoint(out).name == "epoch-3"


class _WritesMarker:
    """Unpickled, creates the file ``marker``: what a tampered checkpoint pickle could run."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_resume_never_unpickles_a_tampered_checkpoint(
    trained, finetune_argv, tmp_path: Path, capsys
):
    """accelerate unpickled ``custom_checkpoint_0.pkl`` with ``weights_only=False``: a downloaded
    or tampered fine-tuning folder ran its code on ``--resume``. foilkit writes no such file, and
    refuses a checkpoint that holds one, before accelerate reads anything."""
    out = tmp_path / "run"
    shutil.copytree(trained[0], out)
    state = last_checkpoint(out) / "state"
    marker = tmp_path / "ran"
    torch.save(_WritesMarker(marker), state / "custom_checkpoint_0.pkl")
    argv = [*finetune_argv("direction", "--out", str(out), "--num-workers", "2"), "--resume"]
    status = main([*argv, "--epochs", "3"])
    assert not marker.exists(), "resuming ran the checkpoint's pickle"
    assert status == 2
    err = capsys.readouterr().err
    assert f"{state / 'custom_checkpoint_0.pkl'} is a pickle" in err and "never resume" in err
    assert last_checkpoint(out).name == "epoch-2"
    assert not list(trained[0].rglob("custom_checkpoint_*.pkl"))  # foilkit writes none


def test_resume_restores_the_schedule_from_done_json(trained, finetune_argv, tmp_path: Path):
    """The schedule's state is JSON in done.json and continues on resume, also for a checkpoint
    written before done.json held it (its pickle deleted): the step count goes on from the
    checkpoint's, it does not start again at 0."""
    for name, legacy in (("json", False), ("legacy", True)):
        out = tmp_path / name
        shutil.copytree(trained[0], out)
        done_file = last_checkpoint(out) / "done.json"
        done = json.loads(done_file.read_text())
        assert done["scheduler"]["last_epoch"] == done["optimizer_steps"] > 0
        if legacy:
            done_file.write_text(json.dumps({k: v for k, v in done.items() if k != "scheduler"}))
        argv = [*finetune_argv("direction", "--out", str(out), "--num-workers", "2"), "--resume"]
        assert main([*argv, "--epochs", "3"]) == 0
        resumed = json.loads((last_checkpoint(out) / "done.json").read_text())
        assert resumed["epoch"] == 3
        assert resumed["scheduler"]["last_epoch"] == resumed["optimizer_steps"]
        assert resumed["optimizer_steps"] > done["optimizer_steps"]


def test_saved_model_evaluates_as_any_model_and_sees_the_frame_order(
    trained, benchmark_dir: Path, tmp_path: Path
):
    from foilkit.evaluation import evaluate
    from foilkit.scorers.adapters import load_adapter
    from foilkit.scorers.api import ScoreOptions

    model = str(trained[0] / "model")
    adapter = load_adapter(model, device="cpu")
    assert adapter.name == "temporal-clip"
    frames = torch.randint(0, 255, (4, 3, 48, 64), dtype=torch.uint8)
    forward, backward = adapter.encode_views([frames, frames.flip(0)])
    assert forward.shape == (1, adapter.encode_texts(["a"]).shape[1])
    assert not torch.allclose(forward, backward)
    run = evaluate(
        "synthetic",
        model,
        config="all",
        dataset=benchmark_dir,
        videos=benchmark_dir / "videos",
        out_dir=tmp_path / "eval",
        n_resamples=20,
        score_options=ScoreOptions(num_frames=4, progress=False),
    )
    assert '"adapter": "temporal-clip"' in (run.run_dir / "results.json").read_text()
    scores = datasets.Dataset.from_parquet(str(tmp_path / "eval" / "scores" / "all.parquet"))
    assert scores.num_rows == 36 and not any(scores["error"])
    # and through the command line, as any model
    argv = [
        "evaluate",
        "--benchmark",
        "synthetic",
        "--config",
        "direction",
        "--model",
        model,
        "--dataset",
        str(benchmark_dir),
        "--video-root",
        str(benchmark_dir / "videos"),
        "--out",
        str(tmp_path / "cli"),
        "--n-resamples",
        "20",
        "--frames",
        "4",
        "--no-progress",
    ]
    assert main(argv) == 0
    assert (tmp_path / "cli" / "results.json").is_file()


def test_bad_input_is_refused_before_training(
    train_dir: Path, benchmark_dir: Path, clip_model: str, tmp_path: Path
):
    from foilkit.synthetic.models import tiny_model_path

    with pytest.raises(ValueError, match="no 'train' split"):
        finetune(clip_model, str(benchmark_dir), out_dir=tmp_path / "a", **FAST)
    with pytest.raises(ValueError, match="temporal module wraps image-text dual encoders"):
        finetune(str(tiny_model_path("xclip")), str(train_dir), out_dir=tmp_path / "b", **FAST)
    foil_style = datasets.load_dataset(str(train_dir), "speed", split="train")
    foil_style = foil_style.filter(lambda flag: not flag, input_columns="reversed")
    with pytest.raises(ValueError, match="training items have no reversed caption"):
        finetune(
            clip_model, foil_style, out_dir=tmp_path / "c", video_root=train_dir / "videos", **FAST
        )
    assert not any((tmp_path / name).exists() for name in "abc")


def test_push_to_hub_dry_run_lists_the_folder(trained):
    plan = push_model(trained[0] / "model", "someone/temporal-clip", dry_run=True)
    assert plan["dry_run"] and plan["repo_id"] == "someone/temporal-clip"
    assert {"config.json", "model.safetensors", TEMPORAL_WEIGHTS} <= set(plan["files"])


class FakeHubApi:
    """``huggingface_hub.HfApi`` offline: records the repo it would create and the commit."""

    calls: ClassVar[list[tuple]] = []

    def __init__(self, token=None):
        pass

    def create_repo(self, repo_id, **options):
        self.calls.append(("create_repo", repo_id, options))

    def create_commit(self, repo_id, operations, **options):
        files = {op.path_in_repo: op.path_or_fileobj for op in operations}
        self.calls.append(("create_commit", repo_id, files, options))
        return SimpleNamespace(
            commit_url=f"https://huggingface.co/{repo_id}/commit/0a1b", pr_url=None
        )


def test_push_to_hub_sends_the_model_folder_as_one_commit(
    finetune_argv, tmp_path: Path, monkeypatch, capsys
):
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeHubApi)
    FakeHubApi.calls = []
    out = tmp_path / "run"
    pushed = ["--push-to-hub", "someone/temporal-clip"]
    argv = finetune_argv("order", "--out", str(out), "--epochs", "1", "--num-workers", "1", *pushed)
    assert main(argv) == 0
    (create, repo_id, options), (commit, commit_repo, files, commit_options) = FakeHubApi.calls
    assert (create, repo_id, commit, commit_repo) == (
        "create_repo",
        "someone/temporal-clip",
        "create_commit",
        "someone/temporal-clip",
    )
    assert options["repo_type"] == commit_options["repo_type"] == "model"
    assert options["private"] is True
    model = out / "model"
    on_disk = {p.relative_to(model).as_posix() for p in model.rglob("*") if p.is_file()}
    assert set(files) == on_disk
    assert {"config.json", "model.safetensors", TEMPORAL_WEIGHTS, "training.json"} <= on_disk
    for path, sent in files.items():
        assert sent == (model / path).read_bytes(), path
    config = json.loads(files["config.json"])
    assert config["architectures"] == [ARCHITECTURE]
    record = json.loads((out / "training.json").read_text())
    assert record["pushed"]["url"] == "https://huggingface.co/someone/temporal-clip/commit/0a1b"
    assert "pushed: " in capsys.readouterr().out


@pytest.mark.parametrize("share_decode", [True, False])
def test_an_item_and_its_reversal_come_from_one_decode(
    train_dir: Path, clip_model: str, share_decode: bool
):
    from transformers import AutoProcessor

    from foilkit.finetune.data import FramePipeline
    from foilkit.finetune.train import load_train_split
    from foilkit.scorers.video import SamplingPolicy

    data = load_train_split(str(train_dir), "order", "train")
    items = training_items(data, video_root=str(train_dir / "videos"))
    (batch, *_) = epoch_batches(items, "reversed", 8, seed=0, epoch=0)
    processor = AutoProcessor.from_pretrained(clip_model)
    pipeline = FramePipeline(
        items,
        SamplingPolicy("uniform", num_frames=4),
        processor.image_processor,
        share_decode=share_decode,
    )
    pixels, rows, flips = pipeline.pixels(batch)
    pipeline.close()
    assert pipeline.decodes == len(pixels) == (4 if share_decode else 8)
    views = [pixels[row].flip(0) if flip else pixels[row] for row, flip in zip(rows, flips)]
    for forward, backward in zip(views[::2], views[1::2]):  # each item, then its reversal
        assert torch.equal(forward.flip(0), backward)
