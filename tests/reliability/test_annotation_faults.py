"""Malformed annotation files stop the build with the file, row and field named (issue 15, item 6).

Each case writes one valid record and then the faulty one, in the benchmark's upstream format,
so the message must name the faulty row, not the first.
"""

from __future__ import annotations

import json
import re

import pytest
from upstream_formats import FILES, RTIME, TSV_HEADER, VILMA, VITATECS

from foilkit.builders.annotations import AnnotationError


def _jsonl(*records: dict) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def _keyed(**records: dict) -> str:
    return json.dumps(records, indent=1, ensure_ascii=False)


def _vilma(**changes) -> dict:
    record = json.loads(json.dumps(VILMA))
    for name, value in changes.items():
        *parents, last = name.split(".")
        parent = record
        for part in parents:
            parent = parent[part]
        parent[last] = value
    return record


GOOD_TSV = "video0\ta\tb\tc\td\te\t1\n"

# (benchmark, file content, the message after "<file>, row <row>: " or "<file>: ")
CASES = {
    # an empty file: no rows, not "Instruction 'test' corresponds to no data!"
    "vitatecs-empty": ("vitatecs", "", None, "the file is empty: it holds no JSON line"),
    "vilma-empty": ("vilma", "", None, "the file is empty: expected a JSON object"),
    "vilma-empty-object": ("vilma", "{}", None, "the JSON object is empty: it holds no example"),
    "rtime-empty": ("rtime", "\n", None, "the file is empty: expected a JSON object"),
    "contrast-empty": ("contrast_sets", "", None, "the file is empty: expected a header with"),
    "contrast-header-only": (
        "contrast_sets",
        TSV_HEADER,
        None,
        "the file holds a header but no rows",
    ),
    # invalid UTF-8: the line, not a generic DatasetGenerationError
    "vitatecs-latin1": (
        "vitatecs",
        (_jsonl(VITATECS) + _jsonl({**VITATECS, "caption": "a café"})).encode("latin-1"),
        2,
        "invalid UTF-8 (byte 0xe9); save the file as UTF-8",
    ),
    "vilma-latin1": (
        "vilma",
        _keyed(a=VILMA, b=_vilma(caption="a café")).encode("latin-1"),
        "line 37",
        "invalid UTF-8 (byte 0xe9)",
    ),
    "rtime-latin1": (
        "rtime",
        _keyed(a=RTIME, b={**RTIME, "url": "https://example.org/é"}).encode("latin-1"),
        "line 34",
        "invalid UTF-8 (byte 0xe9)",
    ),
    "contrast-latin1": (
        "contrast_sets",
        (TSV_HEADER + GOOD_TSV + "video1\tcafé\tb\tc\td\te\t0\n").encode("latin-1"),
        3,
        "invalid UTF-8 (byte 0xe9)",
    ),
    # integer foils are an error in the file, not strings
    "vitatecs-integer-counterfactual": (
        "vitatecs",
        _jsonl(VITATECS, {**VITATECS, "counterfactual": 3}),
        2,
        "field 'counterfactual' has the wrong type: 3",
    ),
    "vilma-integer-foil": (
        "vilma",
        _keyed(a=VILMA, b=_vilma(foils=["a man skips rope twice.", 9])),
        "b",
        "field 'foils[1]' is not a text: 9",
    ),
    "vilma-integer-proficiency-foil": (
        "vilma",
        _keyed(a=VILMA, b=_vilma(**{"proficiency.foils": [7]})),
        "b",
        "field 'proficiency.foils[0]' is not a text: 7",
    ),
    "rtime-integer-caption": (
        "rtime",
        _keyed(a=RTIME, b={**RTIME, "reverse_captions": [5]}),
        "b",
        "field 'reverse_captions[0]' is not a text: 5",
    ),
    "rtime-integer-rewrite": (
        "rtime",
        _keyed(a=RTIME, b={**RTIME, "forward_rewrites": ["fine", 2]}),
        "b",
        "field 'forward_rewrites[1]' is not a text: 2",
    ),
    # windows: a negative start, a start after the end, an empty window
    "vilma-negative-start": (
        "vilma",
        _keyed(a=VILMA, b=_vilma(start_time=-30)),
        "b",
        "field 'start_time' is -30; a window bound is >= 0",
    ),
    "vilma-start-after-end": (
        "vilma",
        _keyed(a=VILMA, b=_vilma(start_time=90, end_time=30)),
        "b",
        "field 'end_time' (30) is not after field 'start_time' (90): the window is empty",
    ),
    "vilma-empty-window": (
        "vilma",
        _keyed(a=VILMA, b=_vilma(start_time=45, end_time=45)),
        "b",
        "field 'end_time' (45) is not after field 'start_time' (45): the window is empty",
    ),
    # empty captions and foils
    "vitatecs-empty-caption": (
        "vitatecs",
        _jsonl(VITATECS, {**VITATECS, "caption": ""}),
        2,
        "field 'caption' is empty",
    ),
    "vitatecs-blank-counterfactual": (
        "vitatecs",
        _jsonl(VITATECS, {**VITATECS, "counterfactual": "  "}),
        2,
        "field 'counterfactual' is empty",
    ),
    "vilma-empty-caption": (
        "vilma",
        _keyed(a=VILMA, b=_vilma(caption="")),
        "b",
        "field 'caption' is empty",
    ),
    "vilma-empty-proficiency-caption": (
        "vilma",
        _keyed(a=VILMA, b=_vilma(**{"proficiency.caption": " "})),
        "b",
        "field 'proficiency.caption' is empty",
    ),
    "rtime-empty-caption": (
        "rtime",
        _keyed(a=RTIME, b={**RTIME, "forward_captions": [""]}),
        "b",
        "field 'forward_captions[0]' is empty",
    ),
    "contrast-blank-ending": (
        "contrast_sets",
        TSV_HEADER + GOOD_TSV + "video1\ta\t \tc\td\te\t0\n",
        3,
        "field 'ending1' is empty",
    ),
}


@pytest.mark.parametrize(("benchmark", "content", "row", "message"), CASES.values(), ids=CASES)
def test_malformed_annotation_is_refused_naming_file_row_and_field(
    annotations, benchmark, content, row, message
):
    folder = annotations.write(benchmark, content)
    path = folder / FILES[benchmark][1]
    where = f"{path}" if row is None else f"{path}, row {row}"
    with pytest.raises(
        AnnotationError, match=rf"^{re.escape(where)}: {re.escape(message)}"
    ) as error:
        annotations.build(benchmark, folder)
    assert (error.value.file, error.value.row) == (str(path), row)


@pytest.mark.parametrize("benchmark", ["vitatecs", "vilma", "rtime"])
def test_the_valid_record_alone_builds(annotations, benchmark):
    """The records the cases above break are themselves valid: each case fails on its fault."""
    record = annotations.records[benchmark]
    content = _jsonl(record) if benchmark == "vitatecs" else _keyed(a=record)
    dataset = annotations.build(benchmark, annotations.write(benchmark, content))
    assert dataset["test"].num_rows == (2 if benchmark == "rtime" else 1)


def test_the_valid_tsv_alone_builds(annotations):
    folder = annotations.write("contrast_sets", TSV_HEADER + GOOD_TSV)
    assert annotations.build("contrast_sets", folder)["test"]["caption"] == ["b"]
