"""The benchmarks foilkit knows, one line each: the registry every layer reaches them through.

:data:`BUILDERS` names each benchmark's builder class and :data:`BENCHMARKS` its
:class:`foilkit.builders.spec.Benchmark` (what ``foilkit evaluate`` computes, its paper protocols,
answer parsers, judge and Hub metadata), both declared in the benchmark's folder
``builders/<name>/`` and imported on first use. Adding a benchmark is a folder and a line here
(``docs/contributing/adding-a-benchmark.md``).

This is a base module: it imports nothing of foilkit beyond the registry mechanism, so the
scorer finds a benchmark's protocols and parsers by its name without importing the builders
package (``tests/test_import_contract.py``); ``foilkit.builders`` re-exports both registries.
"""

from __future__ import annotations

from typing import Any

from foilkit.registry import Registry

#: Benchmark name -> its builder class (``foilkit.builders.<name>.builder``, imported on first use).
BUILDERS: Registry[Any] = Registry("builder")
#: Benchmark name -> its :class:`~foilkit.builders.spec.Benchmark`, declared beside its builder
#: (``BENCHMARK`` of the builder's module) and imported on first use.
BENCHMARKS: Registry[Any] = Registry("benchmark")
for _name, _builder, _summary in (
    ("vitatecs", "Vitatecs", "VITATECS: caption vs one counterfactual, six temporal aspects"),
    ("vilma", "Vilma", "ViLMA: proficiency and main tests, five tests of eleven subtests"),
    ("rtime", "RTime", "RTime: retrieval among videos and their time reversals"),
    (
        "contrast_sets",
        "ContrastSets",
        "MSR-VTT contrast sets: five-way multiple choice with a verb or gender foil",
    ),
    (
        "tempcompass",
        "TempCompass",
        "TempCompass: multi-choice, yes/no and caption matching on five temporal aspects",
    ),
    (
        "tomato",
        "Tomato",
        "TOMATO: multiple-choice temporal reasoning questions, six reasoning types",
    ),
    (
        "vinoground",
        "Vinoground",
        "Vinoground: two videos, two temporally swapped captions; text, video and group scores",
    ),
    (
        "velociti",
        "Velociti",
        "VELOCITI: positive vs negative caption on VidSitu clips, eight tests (ClassicVLE, "
        "StrictVLE)",
    ),
    (
        "temporalbench",
        "TemporalBench",
        "TemporalBench: binary caption-vs-negative questions per video, eight categories",
    ),
):
    BUILDERS.add_lazy(_name, f"foilkit.builders.{_name}.builder:{_builder}", _summary)
    BENCHMARKS.add_lazy(_name, f"foilkit.builders.{_name}:BENCHMARK", _summary)
BENCHMARKS.add_lazy(
    "synthetic",
    "foilkit.builders.synthetic:BENCHMARK",
    "foilkit's synthetic temporal benchmark (the demo's; read from its exported folder)",
)
del _name, _builder, _summary
