"""Each benchmark's spec, declared beside its builder, agrees with the builder and the metrics."""

from __future__ import annotations

import pytest
from launch import assert_imports_none

from foilkit.builders import BENCHMARKS, BUILDERS, builder_class, get_benchmark, list_benchmarks
from foilkit.builders.hub import hub_tasks, union_configs
from foilkit.builders.spec import PAIRWISE_STRICT, Benchmark
from foilkit.metrics import METRICS
from foilkit.registry import UnknownNameError


@pytest.mark.parametrize("name", BUILDERS.names())
def test_a_benchmark_with_a_builder_has_its_configs_and_title(name):
    spec, builder = get_benchmark(name), builder_class(name)
    assert spec.name == spec.builder == name
    assert spec.configs == tuple(config.name for config in builder.BUILDER_CONFIGS)
    assert spec.title == builder.PRETTY_NAME
    assert builder.DEFAULT_CONFIG_NAME in spec.configs
    assert builder.VIDEO_LAYOUT == spec.video_layout != ""


@pytest.mark.parametrize("name", BUILDERS.names())
def test_a_benchmarks_spec_parsers_and_layout_are_read_without_its_builder(name):
    """The spec lives in the folder's ``__init__.py`` and the ``datasets`` builder in its
    ``builder.py``: what the help lists (parsers, prompts, the video layout) imports neither
    ``datasets`` nor the builder; the title and configs are the builder's, read when asked."""
    code = (
        "from foilkit.builders import get_benchmark\n"
        f"spec = get_benchmark({name!r})\n"
        "assert spec.video_layout and spec.protocols is not None and spec.parsers is not None"
    )
    assert_imports_none(code, ("datasets", "torch", f"foilkit.builders.{name}.builder"))


@pytest.mark.parametrize("name", BENCHMARKS.names())
def test_every_config_has_metrics_foilkit_ships(name):
    spec = get_benchmark(name)
    assert spec.name == name and set(spec.all_configs) <= set(spec.configs)
    for config in spec.configs:
        metrics = spec.metrics(config)
        assert metrics and all(metric.metric in METRICS for metric in metrics), config
    unions = union_configs(name, spec.configs)  # ViLMA's average: "all", the five tests' files
    assert {task.config for task in hub_tasks(name)} <= set(spec.configs) | set(unions)


def test_the_registry_names_every_builder_and_the_synthetic_benchmark():
    assert list_benchmarks() == [*BUILDERS.names(), "synthetic"]
    assert get_benchmark("synthetic").builder is None
    with pytest.raises(
        UnknownNameError, match="unknown benchmark 'vitatec'; choose from: vitatecs"
    ):
        get_benchmark("vitatec")


def test_vilma_reports_change_of_state_as_its_subtests_mean():
    spec = get_benchmark("vilma")
    columns = {config: spec.metrics(config)[0].columns["P+T"] for config in spec.all_configs}
    assert columns.pop("change_of_state") == "macro_combined_accuracy"
    assert set(columns.values()) == {"combined_accuracy"}


def test_the_synthetic_spec_matches_what_the_demo_writes():
    from foilkit.builders import synthetic
    from foilkit.finetune.synthetic import train_items
    from foilkit.synthetic.items import demo_items

    assert tuple(dict.fromkeys(item["aspect"] for item in demo_items())) == synthetic.ASPECTS
    assert tuple(dict.fromkeys(item["aspect"] for item in train_items(1))) == synthetic.ASPECTS
    assert get_benchmark("synthetic").configs == (*synthetic.ASPECTS, "all")
    assert get_benchmark("synthetic").metrics("all") == (PAIRWISE_STRICT,)


def test_all_configs_must_be_configs():
    with pytest.raises(ValueError, match=r"all_configs \('every',\) must be a non-empty selection"):
        Benchmark("b", "B", None, ("a",), ("every",), lambda config: ())


def test_all_configs_of_a_builders_spec_are_checked_when_its_configs_are_read():
    spec = Benchmark.of_builder("vitatecs", all_configs=("every",), metrics=lambda config: ())
    with pytest.raises(ValueError, match=r"all_configs \('every',\) must be a non-empty"):
        spec.configs


def test_the_registries_import_no_builder_until_asked():
    code = (
        "from foilkit.builders import BENCHMARKS, BUILDERS, list_benchmarks\n"
        "assert list_benchmarks() and 'vilma' in BUILDERS"
    )
    assert_imports_none(code, ("datasets", "foilkit.builders.vilma"))
