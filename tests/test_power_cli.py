"""``foilkit power``: before a run on every benchmark foilkit has (from its real annotation files
where ../shared has them, from the upstream formats' fixtures and the demo's exported folder
elsewhere), and from one or two run folders."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from upstream_formats import vinoground_csv, write_temporalbench, write_velociti

from foilkit import power
from foilkit.builders import BENCHMARKS, build
from foilkit.cli import main
from foilkit.compare import compare_runs

FORMAT_1 = Path(__file__).parent / "e2e" / "fixtures" / "run-format-1"
FAST = ["--simulations", "200"]


@pytest.fixture(scope="module")
def demo_benchmark(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from foilkit.demo import write_demo_benchmark

    return write_demo_benchmark(tmp_path_factory.mktemp("power") / "benchmark")


def _run(capsys, argv: list[str]) -> dict:
    capsys.readouterr()
    assert main(["power", *argv, "--json", *FAST]) == 0
    return json.loads(capsys.readouterr().out)


def test_before_a_run_on_the_demo_benchmark(capsys, demo_benchmark: Path, tmp_path: Path):
    summary = _run(
        capsys,
        [
            "--dataset",
            str(demo_benchmark),
            "--config",
            "direction,all",
            "--effect",
            "10",
            "--out",
            str(tmp_path),
        ],
    )
    assert (
        summary["benchmark"] == "synthetic" and summary["alpha"] == 0.05 and summary["power"] == 0.8
    )
    assert [c["config"] for c in summary["configs"]] == ["direction", "all"]
    for config in summary["configs"]:
        methods = [(f["question"], f["method"]) for f in config["figures"]]
        assert methods == [
            ("paired", "exact-mcnemar"),
            ("paired", "cluster-simulation"),
            ("versus", "exact-binomial"),
            ("versus", "cluster-simulation"),
        ]
        for figure in config["figures"]:
            assert figure["n_items"] == config["n_items"] and figure["effect"] == 10.0
            assert figure["n_required"] > 0 and {"mde", "alpha", "power", "n_clusters"} <= set(
                figure
            )
        # the exact figures: what foilkit.power says for these items and the stated assumptions
        accuracy = 0.5 + 0.5 / 2  # halfway between chance and 1
        discordance = power.discordance_from_accuracy(accuracy)
        assert config["figures"][0]["assumptions"]["discordance"] == round(discordance, 4)
        assert config["figures"][2]["mde"] == pytest.approx(
            100
            * power.minimum_detectable(
                lambda d, n=config["n_items"]: power.binomial_power(n, 0.5, d), 0.8, 0.5
            ),
            abs=0.01,
        )
    assert [c["n_items"] for c in summary["configs"]] == [16, 36]
    assert (tmp_path / "power.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((tmp_path / "power.json").read_text())["configs"][1]["n_items"] == 36


def test_the_terminal_table_names_every_method(capsys, demo_benchmark: Path, tmp_path: Path):
    assert (
        main(
            [
                "power",
                "--dataset",
                str(demo_benchmark),
                "--config",
                "all",
                "--plot",
                str(tmp_path / "p.png"),
                *FAST,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    for word in ("MDE (points)", "exact-mcnemar", "exact-binomial", "cluster-simulation", "vs 50%"):
        assert word in out
    assert (tmp_path / "p.png").is_file()


def _shared_folder(name: str, shared: Path | None, tmp: Path) -> Path:
    if shared is None:
        pytest.skip("../shared/data (the published annotation files) is not present")
    return shared / name


def _upstream(name: str, tmp: Path) -> Path:
    if name == "vinoground":
        folder = tmp / "vinoground"
        folder.mkdir()
        (folder / "vinoground.csv").write_text(vinoground_csv())
        return folder
    return {"velociti": write_velociti, "temporalbench": write_temporalbench}[name](tmp / name)


#: Per benchmark: a config to size and where its items come from (the published files in
#: ../shared, the upstream formats' fixtures, or the demo's exported folder).
SOURCES = {
    "vitatecs": ("sequence", "shared"),
    "vilma": ("spatial_relations_prepositions", "shared"),
    "rtime": ("binary", "shared"),
    "contrast_sets": ("verb_human", "shared"),
    "tempcompass": ("caption_matching", "shared"),
    "tomato": ("count", "shared"),
    "vinoground": ("all", "upstream"),
    "velociti": ("all", "upstream"),
    "temporalbench": ("short_qa", "upstream"),
    "synthetic": ("all", "demo"),
}


def test_every_benchmark_is_covered():
    assert set(SOURCES) == set(BENCHMARKS.names())


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_before_a_run_on_every_benchmark(name, capsys, tmp_path, demo_benchmark):
    config, source = SOURCES[name]
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    if source == "demo":
        where = ["--dataset", str(demo_benchmark)]
        rows = None
    else:
        folder = (
            _shared_folder(name, shared if shared.is_dir() else None, tmp_path)
            if source == "shared"
            else _upstream(name, tmp_path)
        )
        where = ["--benchmark", name, "--annotations", str(folder)]
        built = build(
            name, config, annotations=folder, on_missing="keep", cache_dir=str(tmp_path / "c")
        )
        rows = built["test"]
    summary = _run(capsys, [*where, "--config", config])
    (section,) = summary["configs"]
    assert section["config"] == config
    if rows is not None:
        # the benchmark's own structure: its items and the videos they share
        assert section["n_items"] == rows.num_rows
        column = BENCHMARKS.get(name).cluster_column
        assert section["n_clusters"] == len(set(map(str, rows[column]))) > 1
    assert section["chance"] is not None and 0 < section["chance"] < 1
    for figure in section["figures"]:
        assert figure["method"] in power.METHODS
        assert (
            figure["n_items"] == section["n_items"]
            and figure["n_clusters"] == section["n_clusters"]
        )
        assert figure["mde"] is None or 0 < figure["mde"] <= 100


def test_a_retrieval_pool_is_named_as_left_out(capsys, shared_data, tmp_path):
    summary = _run(
        capsys,
        ["--benchmark", "rtime", "--annotations", str(shared_data / "rtime"), "--config", "hard"],
    )
    assert summary["configs"] == [
        {"config": "hard", "skipped": "a retrieval pool, no per-item test"}
    ]


def test_two_runs_give_the_achieved_power_of_the_test_compare_reports(capsys, tmp_path):
    runs = [str(FORMAT_1 / "clip"), str(FORMAT_1 / "xclip")]
    summary = _run(capsys, [*runs, "--effect", "20", "--plot", str(tmp_path / "p.png")])
    (section,) = summary["configs"]
    exact, resampled = section["figures"]
    mcnemar = compare_runs(*runs, n_resamples=0)["all"]["pairwise_foil_accuracy"]["all"]["mcnemar"]
    assert (exact["assumptions"]["a_only"], exact["assumptions"]["b_only"]) == (
        mcnemar["a_only"],
        mcnemar["b_only"],
    )
    n = section["n_items"]
    discordance = (mcnemar["a_only"] + mcnemar["b_only"]) / n
    observed = abs(mcnemar["b_only"] - mcnemar["a_only"]) / n
    assert exact["achieved_power"] == round(power.mcnemar_power(n, discordance, observed), 4)
    assert exact["method"] == "exact-mcnemar" and resampled["method"] == "cluster-resampling"
    assert resampled["n_required"] > 0 and exact["power_at_effect"] > 0
    assert (tmp_path / "p.png").is_file()


def test_one_run_gives_its_figures_against_chance(capsys):
    summary = _run(capsys, [str(FORMAT_1 / "clip")])
    (section,) = summary["configs"]
    methods = [(f["question"], f["method"]) for f in section["figures"]]
    assert ("versus", "exact-binomial") in methods and ("versus", "cluster-resampling") in methods
    versus = section["figures"][0]
    assert versus["assumptions"]["null"] == 0.5
    assert 0 <= versus["assumptions"]["observed_accuracy"] <= 100
    expected = power.minimum_detectable(
        lambda d: power.binomial_power(section["n_items"], 0.5, d), 0.8, 0.5
    )
    assert versus["mde"] == round(100 * expected, 2)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "name a benchmark"),
        (["a", "b", "c"], "one or two run folders"),
        ([str(FORMAT_1 / "clip"), "--benchmark", "vitatecs"], "do not go with RUN"),
        (["--benchmark", "vitatecs", "--effect", "0"], "--effect"),
        (["--benchmark", "vitatecs", "--icc", "1"], "--icc"),
        (["--benchmark", "vitatecs", "--config", "nope"], "no config 'nope'"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(argv, message, capsys):
    assert main(["power", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_alpha_and_power_must_be_fractions(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["power", "--benchmark", "vitatecs", "--alpha", "5"])
    assert exit_.value.code == 2
    assert "--alpha" in capsys.readouterr().err


def test_items_cluster_by_their_benchmark_column():
    from foilkit.cli.power import config_items

    rows = {"id": list("abcd"), "video_path": ["v1", "v1", "v2", "v3"], "foils": [["x"]] * 4}
    items = config_items(BENCHMARKS.get("vitatecs"), "direction", rows)
    assert items.n_items == 4 and sorted(items.sizes.tolist()) == [1, 1, 2]
    assert items.chance == 0.5 and items.outcome == "accuracy"
    # a chance level no spec declares: each item's 1 / (1 + foils), averaged (TOMATO)
    rows = {**rows, "foils": [["x"], ["x", "y", "z"], ["x", "y", "z"], ["x"]]}
    assert config_items(BENCHMARKS.get("tomato"), "count", rows).chance == np.mean(
        [0.5, 0.25, 0.25, 0.5]
    )


def test_compare_states_each_mcnemar_tests_mde(tmp_path):
    out = tmp_path / "both"
    runs = [str(FORMAT_1 / "clip"), str(FORMAT_1 / "xclip")]
    assert main(["compare", *runs, "--out", str(out), "--n-resamples", "20"]) == 0
    from foilkit.compare import TEST_COLUMNS, test_rows

    tests = json.loads((out / "comparison.json").read_text())["tests"]
    scopes = tests["all"]["pairwise_foil_accuracy"]
    for scope in scopes.values():
        mcnemar = scope["mcnemar"]
        expected = power.mcnemar_mde(mcnemar["n"], mcnemar["a_only"] + mcnemar["b_only"])
        assert mcnemar["mde"] == (None if expected is None else round(expected, 4))
        assert mcnemar["mde_method"] == "exact-mcnemar"
    assert scopes["all"]["mcnemar"]["n"] == 36 and scopes["direction"]["mcnemar"]["n"] == 16
    assert TEST_COLUMNS[-1] == "MDE at 80% power"
    rows = {(row[2], row[3]): row[-1] for row in test_rows(tests)}
    assert rows[("all", "mcnemar")] == f"{100 * scopes['all']['mcnemar']['mde']:.1f}"
    assert rows[("all", "bootstrap")] == ""
    assert rows[("speed", "mcnemar")] == "—"  # the runs agree on every speed item
    sentence = (
        f"On all (pairwise_foil_accuracy, 36 items), the exact McNemar test detects a difference "
        f"of {100 * scopes['all']['mcnemar']['mde']:.1f} points or more with 80% power"
    )
    assert sentence in (out / "report.md").read_text()
    assert sentence in (out / "report.html").read_text()
    assert "below what these items can detect" in (out / "report.md").read_text()


def test_leaderboard_states_the_mde_beside_each_paired_test(tmp_path):
    import csv

    assert main(["leaderboard", str(FORMAT_1), "--out", str(tmp_path), "--n-resamples", "20"]) == 0
    rows = list(csv.DictReader((tmp_path / "leaderboard.csv").open()))
    tested = [row for row in rows if row["p_value_vs_next"]]
    assert tested and all("mde_vs_next" in row for row in rows)
    compared = compare_runs(FORMAT_1 / "clip", FORMAT_1 / "xclip", n_resamples=0)["all"]
    for row in tested:
        scope = "all" if row["task"] == "average" else row["task"]
        mcnemar = compared["pairwise_foil_accuracy"][scope]["mcnemar"]
        mde = mcnemar["mde"]
        assert row["mde_vs_next"] == ("" if mde is None else str(100 * mde))
    markdown = (tmp_path / "leaderboard.md").read_text()
    assert "| MDE (80% power) |" in markdown and "*MDE*: the smallest difference" in markdown
    page = (tmp_path / "leaderboard.html").read_text()
    assert "<th>MDE (80% power)</th>" in page and "MDE: the smallest difference" in page


def test_a_leaderboard_page_shows_the_csvs_mde(tmp_path):
    from PIL import Image

    (tmp_path / "leaderboard.csv").write_text(
        "benchmark,task,rank,model,value,ci_low,ci_high,n,p_value_vs_next,difference_vs_next,"
        "mde_vs_next,source\n"
        "vitatecs,direction,1,clip,61.5,58.0,65.0,100,0.02,4.5,3.25,runs/clip\n"
        "vitatecs,direction,2,xclip,57.0,53.0,61.0,100,,,,runs/xclip\n",
        encoding="utf-8",
    )
    Image.new("RGB", (40, 30), "white").save(tmp_path / "leaderboard.png")
    assert main(["report", str(tmp_path)]) == 0
    assert "<td>+4.5, p = 0.020</td><td>3.2</td>" in (tmp_path / "leaderboard.html").read_text()


def test_groups_are_sized_on_their_own_items(capsys, demo_benchmark: Path):
    summary = _run(capsys, ["--dataset", str(demo_benchmark), "--config", "all", "--groups"])
    labels = [c["config"] for c in summary["configs"]]
    assert labels == ["all", "all / direction", "all / order", "all / speed"]
    counts = {c["config"]: c["n_items"] for c in summary["configs"]}
    assert counts["all"] == sum(counts[label] for label in labels[1:]) == 36
    # a group's MDE is its own: fewer items, a larger effect to detect
    mde = {c["config"]: c["figures"][2]["mde"] for c in summary["configs"]}
    assert all(mde[label] > mde["all"] for label in labels[1:])


def test_two_runs_per_group_pair_the_same_items(capsys):
    runs = [str(FORMAT_1 / "clip"), str(FORMAT_1 / "xclip")]
    summary = _run(capsys, [*runs, "--groups"])
    compared = compare_runs(*runs, n_resamples=0)["all"]["pairwise_foil_accuracy"]
    for section in summary["configs"]:
        scope = section["config"].removeprefix("all / ")
        exact = section["figures"][0]["assumptions"]
        mcnemar = compared[scope]["mcnemar"]
        assert (exact["a_only"], exact["b_only"]) == (mcnemar["a_only"], mcnemar["b_only"])
        assert section["n_items"] == mcnemar["n"]
