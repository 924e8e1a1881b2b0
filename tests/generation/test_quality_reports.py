"""Quality reports (issue 36): counts on fixed samples that can be checked by hand."""

from __future__ import annotations

import json
import math

import pytest

from foilkit.generation.quality.report import KEEP, REJECT, QualityReport, sample
from foilkit.generation.quality.rtime_rewrites import (
    OPPOSITE_CAPTION,
    PUBLISHED,
    PUBLISHED_WITH_OPPOSITE,
    SWAPPED,
    THEN_AFTER_THAT,
    THEN_REORDERED,
    moved_clause,
    rewrite_quality,
    rule_rewrites,
    spacy_tagger,
    swapped_markers,
)

DOOR = "A man opens the door and then walks into the room."
DOOR_REVERSED = "A man walks backwards out of the room and then closes the door."
RECORDS = [
    {
        "forward_captions": [DOOR],
        "reverse_captions": [DOOR_REVERSED],
        "forward_rewrites": [
            "A man opens the door, then he walks into the room.",
            "Bright red apples are stacked in a wooden crate at the market.",
        ],
        "reverse_rewrites": ["Walking backwards out of the room, a man then shuts the door."],
    }
]


def test_the_report_counts_and_rates() -> None:
    report = QualityReport("a filter", "heldout")
    for accepted in (True, True, True, False):
        report.add("foil", KEEP, accepted, "kept foil")
    for accepted in (False, False, True):
        report.add("synonym", REJECT, accepted, "a synonym")
    totals = report.totals()
    assert (totals["positives"], totals["positives_kept"]) == (4, 3)
    assert (totals["negatives"], totals["negatives_rejected"]) == (3, 2)
    assert totals["rejection_recall"] == pytest.approx(2 / 3)
    assert totals["rejection_precision"] == pytest.approx(2 / 3)  # 2 of the 3 rejected
    assert report.kinds["synonym"].examples == ["a synonym"]  # the one wrongly accepted
    assert "recall 66.7%" in report.table() and "heldout" in report.table()
    json.dumps(report.to_record())
    with pytest.raises(ValueError, match="kind 'foil' is labelled 'keep', not 'reject'"):
        report.add("foil", REJECT, True)
    assert math.isnan(QualityReport("empty", "heldout").totals()["rejection_recall"])


def test_samples_are_deterministic_by_seed() -> None:
    items = list(range(100))
    assert sample(items, 5, seed=3) == sample(items, 5, seed=3) != sample(items, 5, seed=4)
    assert sample(items, 5, seed=3) == sorted(sample(items, 5, seed=3))
    assert sample(items, None, seed=0) == items


def test_the_rules_make_labelled_rewrites(nlp) -> None:
    assert swapped_markers("He eats after a run.") == "He eats before a run."
    assert swapped_markers("After a run, he eats.") == "Before a run, he eats."
    assert swapped_markers("Cups slide one after another.") is None  # orders no events
    tag = spacy_tagger(nlp)
    assert moved_clause("He eats after a run.", tag(["He eats after a run."])[0]) == (
        "After a run, he eats."
    )
    made = {(m.kind, m.text) for m in rule_rewrites([DOOR, DOOR_REVERSED], tag)}
    assert made == {
        (THEN_AFTER_THAT, "A man opens the door, and after that walks into the room."),
        (THEN_REORDERED, "A man walks into the room and opens the door."),
        (THEN_AFTER_THAT, "A man walks backwards out of the room, and after that closes the door."),
        (THEN_REORDERED, "A man closes the door and walks backwards out of the room."),
    }


def test_the_rtime_report_on_a_fixed_video(sentence_embedder, nlp) -> None:
    """By hand: of the three published rewrites the apples fail the similarity; both rule
    rewrites that keep the order pass; the two 'B and A' reversals and the two opposite
    captions (open <-> close) are rejected. Positives 4/5 kept, negatives 4/4 rejected, and
    1 of the 5 rejections is a positive."""
    from foilkit.generation.rtime.event_order import spacy_event_parser
    from foilkit.generation.rtime.rewrites import RewriteFilter
    from foilkit.generation.rtime.temporal_words import TemporalLexicon, spacy_tokenizer

    rewrite_filter = RewriteFilter(
        sentence_embedder,
        lexicon=TemporalLexicon.load(),
        tokenize=spacy_tokenizer(nlp),
        order_parser=spacy_event_parser(nlp),
    )
    report = rewrite_quality(
        RECORDS, rewrite_filter, spacy_tagger(nlp), split="heldout", hand_written=[]
    )
    counts = {kind: (c.accepted, c.offered) for kind, c in report.kinds.items()}
    assert counts == {
        PUBLISHED: (2, 3),
        OPPOSITE_CAPTION: (0, 2),
        THEN_AFTER_THAT: (2, 2),
        THEN_REORDERED: (0, 2),
    }
    totals = report.totals()
    assert (totals["positives_kept"], totals["positives"]) == (4, 5)
    assert (totals["negatives_rejected"], totals["negatives"]) == (4, 4)
    assert totals["rejection_precision"] == pytest.approx(0.8)
    assert report.description[PUBLISHED_WITH_OPPOSITE] == {"offered": 3, "accepted": 2}
    assert SWAPPED not in counts  # no caption has "before"/"after"
    assert report.description["hand-written order reversals rejected"] == {}  # no file
    assert report.description["order-reversing rewrites rejected"] == {
        "offered": 2,
        "rejected": 2,
        "of": "rule-made reversals [heldout]",
    }


@pytest.mark.parametrize(
    ("split", "videos", "files"),
    [
        (
            "heldout",
            range(300, 1000),
            [
                "heldout (seen: tuned on in pass 3)",
                "heldout (seen: tuned on in pass 4)",
                "heldout (blind)",
            ],
        ),
        ("tuning", range(300), ["tuning"]),
    ],
)
def test_the_hand_written_rewrites_are_of_their_splits_captions(shared_data, split, videos, files):
    """Each hand-written rewrite is of a real caption of its split's videos, and its kind names
    the split of its file (the first held-out file: 67 order reversals in 10 constructions and
    12 rewrites keeping the order; it was tuned on in the third pass, the second in the
    fourth; the third, blind, also rewrites reversed videos' captions)."""
    from foilkit.generation.quality.rtime_rewrites import (
        HAND_KEPT,
        HAND_WRITTEN_FILES,
        split_hand_written,
    )

    records = list(json.loads((shared_data / "rtime" / "test.json").read_text()).values())
    captions = {
        records[i][f"{side}_captions"][0].strip() for i in videos for side in ("forward", "reverse")
    }
    made = split_hand_written(split)
    assert {m.caption.strip() for m in made} <= captions
    assert [file.name for file in HAND_WRITTEN_FILES[split]] == files
    assert list(dict.fromkeys(m.source for m in made)) == files
    assert all(m.kind.endswith(f"[{m.source}]") for m in made)
    assert {m.kind for m in made if m.label == KEEP} == {f"{HAND_KEPT} [{f}]" for f in files}
    if split == "heldout":
        first = [m for m in made if m.source == files[0]]
        assert sum(m.label == REJECT for m in first) == 67 and len(first) == 79
        assert all(m.seen is (m.source != "heldout (blind)") for m in made)


def test_the_report_names_the_split_of_each_hand_written_file(sentence_embedder, nlp, tmp_path):
    """Two hand-written files of one split, one tuned on and one blind: each rewrite's kind names
    its file's split; the reversals rejected are counted per file, and in all over the
    rule-made reversals and the blind file's only (by hand: both 'B and A' rule reversals and
    both hand-written ones are rejected; the seen file's order-keeping rewrite is kept)."""
    from foilkit.generation.quality.rtime_rewrites import (
        HAND_KEPT,
        HAND_REJECTED,
        HAND_REVERSAL,
        UNSEEN_REJECTED,
        read_hand_written,
    )
    from foilkit.generation.rtime.event_order import spacy_event_parser
    from foilkit.generation.rtime.rewrites import RewriteFilter

    rows = {
        "seen": [
            (DOOR, "A man walks into the room and then opens the door.", "then", REJECT),
            (DOOR, "After opening the door, a man walks into the room.", "after", KEEP),
        ],
        "blind": [(DOOR, "A man walks into the room before he opens the door.", "before", REJECT)],
    }
    made = []
    for name, lines in rows.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(
            "\n".join(
                json.dumps({"caption": c, "rewrite": r, "construction": k, "label": label})
                for c, r, k, label in lines
            )
        )
        made += read_hand_written(path, name=f"heldout ({name})", seen=name == "seen")
    rewrite_filter = RewriteFilter(sentence_embedder, order_parser=spacy_event_parser(nlp))
    report = rewrite_quality(
        RECORDS, rewrite_filter, spacy_tagger(nlp), split="heldout", hand_written=made
    )
    counts = {kind: (c.accepted, c.offered) for kind, c in report.kinds.items()}
    assert counts[f"{HAND_REVERSAL.format('then')} [heldout (seen)]"] == (0, 1)
    assert counts[f"{HAND_KEPT} [heldout (seen)]"] == (1, 1)
    assert counts[f"{HAND_REVERSAL.format('before')} [heldout (blind)]"] == (0, 1)
    assert report.description[HAND_REJECTED] == {
        "heldout (seen)": {"offered": 1, "rejected": 1},
        "heldout (blind)": {"offered": 1, "rejected": 1},
    }
    assert report.description[UNSEEN_REJECTED] == {
        "offered": 3,  # two rule-made 'B and A' and the blind file's
        "rejected": 3,
        "of": "rule-made reversals [heldout] and hand-written [heldout (blind)]",
    }
    table = report.table()
    assert "hand-written order reversals rejected [heldout (blind)]: 1/1 (100.0%)" in table
    assert "[heldout (seen)]" in table


@pytest.mark.parametrize(
    "caption",
    [
        # the failures on held-out VITATECS captions: the viewer swapped in, and a
        # reciprocal verb whose swap says the same thing
        "a woman shows you how to fry food",
        "a boy shows how you can use a pen to tap out the rhythm of a song",
        "a woman is fighting with a man",
        "a team of athletic players shake hands with another team",
    ],
)
def test_the_actor_swap_makes_no_same_meaning_or_viewer_foil(nlp, caption) -> None:
    from foilkit.generation.vilma.actor_swap import actor_swap

    assert actor_swap(caption, nlp=nlp) == []


def test_the_actor_swap_report_on_the_held_out_captions(nlp, shared_data) -> None:
    """The 45 hand-labelled swaps (33 valid, 11 ungrammatical, 1 same meaning) all regenerate
    as labelled; of 5 viewer and 5 reciprocal captions drawn by seed 0, none gives a foil that
    moves "you", one swaps a reciprocal pair (the parser attaches its "with" elsewhere)."""
    from foilkit.generation.quality.actor_swap import (
        CHANGED,
        LABEL_KINDS,
        RECIPROCAL,
        VIEWER,
        actor_swap_quality,
    )

    report = actor_swap_quality(shared_data / "vitatecs", nlp, split="heldout", size=5, seed=0)
    counts = {kind: (c.accepted, c.offered) for kind, c in report.kinds.items()}
    assert counts == {
        LABEL_KINDS["valid"][0]: (33, 33),
        LABEL_KINDS["ungrammatical"][0]: (11, 11),
        LABEL_KINDS["same_meaning"][0]: (1, 1),
        VIEWER: (0, 5),
        RECIPROCAL: (1, 5),
    }
    print(report.kinds[RECIPROCAL].examples)
    assert CHANGED not in report.description
    totals = report.totals()
    assert totals["rejection_recall"] == pytest.approx(9 / 22)  # the 12 labelled bad ones pass
    assert totals["rejection_precision"] == 1.0


def test_the_verb_filter_report_on_the_held_out_half(nlp, sentence_embedder, shared_data) -> None:
    """8 held-out clips drawn by seed 0: all 8 Verb-LM foils kept, 5 of 7 Verb-Human foils
    (rejected: "talking" -> "listening", "explain" -> "explores"), both near-synonym swaps
    rejected; the 18 WordNet synonym swaps (circular) all rejected, outside the totals."""
    from foilkit.generation.contrast.verb_calibration import is_heldout_clip
    from foilkit.generation.quality.contrast_verbs import (
        CIRCULAR,
        KINDS,
        split_clips,
        verb_filter_quality,
    )

    folder = shared_data / "contrast_sets"
    heldout = split_clips(folder, "heldout")
    assert heldout and all(is_heldout_clip(clip) for clip in heldout)
    assert not set(heldout) & set(split_clips(folder, "tuning"))
    report = verb_filter_quality(folder, nlp, sentence_embedder, split="heldout", size=8, seed=0)
    again = verb_filter_quality(folder, nlp, sentence_embedder, split="heldout", size=8, seed=0)
    assert report.to_record() == again.to_record()  # the sample is the seed's
    counts = {kind: (c.accepted, c.offered) for kind, c in report.kinds.items()}
    assert counts == {
        KINDS["lm"][0]: (8, 8),
        KINDS["human"][0]: (5, 7),
        KINDS["near_synonym"][0]: (0, 2),
    }
    assert report.description[CIRCULAR] == {"offered": 18, "accepted": 0}
    assert report.totals()["rejection_precision"] == pytest.approx(2 / 4)


def test_the_llm_reply_report(shared_data) -> None:
    """3 held-out counterfactuals (in 3 reply shapes each) and the rewrites of 3 RTime videos
    are kept; no negative reply of either blind held-out set becomes a candidate, and the
    RTime check flags every refusal. The first set (45 replies) let 10 through before issue
    46 fixed its listed gaps; the second (45, written for issue 46 before the patterns were
    changed: refusals in 10 languages or formal words, chat without a chat opener, API error
    bodies, special tokens run together) let 43 through before the change. On the tuning set
    every negative is rejected."""
    from foilkit.generation.quality.llm_replies import SHAPES, llm_reply_quality

    report = llm_reply_quality(shared_data, split="heldout", size=3, seed=0)
    counts = {kind: (c.accepted, c.offered) for kind, c in report.kinds.items()}
    negatives = {
        f"{kind} reply{name} ({check})": (0, offered)
        for name in ("", ", second blind set")
        for kind, check, offered in (
            ("refusal", "VITATECS parser", 20),
            ("refusal", "RTime refusal check", 20),
            ("chatter", "VITATECS parser", 12),
            ("junk", "VITATECS parser", 13),
        )
    }
    assert counts == {
        **{f"VITATECS counterfactual, {shape}": (3, 3) for shape in SHAPES},
        "RTime published rewrite (refusal check)": (54, 54),
        **negatives,
    }
    tuning = llm_reply_quality(shared_data, split="tuning", size=3, seed=0)
    assert tuning.totals()["negatives_rejected"] == tuning.totals()["negatives"] == 100


def test_the_quality_command_writes_the_report_and_its_record(shared_data, tmp_path, capsys):
    from foilkit.cli import main
    from foilkit.generation.provenance import RunRecord, record_path

    out = tmp_path / "llm.json"
    argv = ["generate", "quality", "llm-replies", "--data", str(shared_data), "--sample", "2"]
    assert main([*argv, "--seed", "1", "-o", str(out)]) == 0
    assert "LLM reply checks on the heldout split" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert report["split"] == "heldout" and report["seed"] == 1
    assert report["kinds"]["VITATECS counterfactual, answer after its label"]["offered"] == 2
    record = RunRecord.read(record_path(out))
    assert (record.pipeline, record.stage, record.seed) == ("quality", "llm-replies", 1)
    assert record.results["report"] == report
    with pytest.raises(SystemExit, match=r"--data DIR.*rtime/test\.json"):
        main(["generate", "quality", "rtime-rewrites", "--data", str(tmp_path)])


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (None, r"--hand-written .*missing\.jsonl not found"),
        ('{"caption": "a", "rewrite": "b", "label": "reject"}', r"bad\.jsonl:1: no 'construction'"),
        (
            '{"caption": "a", "rewrite": "b", "construction": "and", "label": "x"}',
            r"bad\.jsonl:1: label",
        ),
    ],
)
def test_a_bad_hand_written_file_is_one_line_naming_it(shared_data, tmp_path, line, error):
    from foilkit.cli import main

    path = tmp_path / ("missing.jsonl" if line is None else "bad.jsonl")
    if line is not None:
        path.write_text(line + "\n")
    argv = ["generate", "quality", "rtime-rewrites", "--data", str(shared_data)]
    with pytest.raises(SystemExit, match=error):
        main([*argv, "--hand-written", f"{path}=heldout (outside)"])
