"""The LLM reply checks' quality: real answers kept, refusals and junk never made candidates.

What is measured is the VITATECS answer parser (:func:`~foilkit.generation.vitatecs.generate.
parse_answer`, which reads a whole reply with the refusal and chat patterns of
:mod:`foilkit.generation.llm_replies`), and the refusal check RTime's rewrites use
(:func:`~foilkit.generation.llm_replies.is_refusal`, line by line):

* ``keep``: the published VITATECS counterfactuals of the split's captions, each as a reply in
  three shapes (``Modified Description: X``; the label, then X on the next line; a chat lead-in
  line, then X): the parser must return X as a candidate; and the published RTime GPT-4 rewrites
  of the split's videos, which no refusal check may flag;
* ``reject``: :data:`NEGATIVES_FILES`, hand-written replies of the kinds chat models give instead
  of an answer (refusals, chat lines without an answer, junk: empty, fences, a bare label, a
  note, an error object), written for this report and not from the patterns' own tests; none
  may become a candidate, and the RTime check must flag the refusals. The ``tuning`` set is the
  one the patterns were revised against; the ``heldout`` split holds two blind sets, each
  written before a revision of the patterns and reported apart: the first (issue 36; its
  misses, listed in the README, were then fixed, so it no longer measures anything blind) and
  the second (issue 46: refusals not in English or in formal words, chat that neither opens
  like chat nor refuses, API error bodies, special tokens run together), written before the
  patterns were changed for them.

Splits are those of the generators the answers come from: VITATECS captions as
:func:`~foilkit.generation.quality.actor_swap.vitatecs_captions` splits them, RTime videos as
:func:`~foilkit.generation.quality.rtime_rewrites.read_videos` does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from foilkit.generation.quality.report import KEEP, REJECT, QualityReport, sample

_DATA = Path(__file__).parent / "data"
#: Per split, the hand-written negative files and the name each set's kinds carry.
NEGATIVES_FILES = {
    "heldout": {
        "": _DATA / "llm_reply_negatives_heldout.jsonl",
        ", second blind set": _DATA / "llm_reply_negatives_heldout2.jsonl",
    },
    "tuning": {"": _DATA / "llm_reply_negatives_tuning.jsonl"},
}
SHAPES = {
    "answer after its label": "Modified Description: {answer}",
    "answer on the line after its label": "Modified Description:\n{answer}",
    "answer after a chat lead-in": (
        "Sure! Here is the modified description you asked for:\n{answer}"
    ),
}


def llm_reply_quality(
    data_dir: str | os.PathLike,
    *,
    split: str,
    size: int | None = None,
    seed: int = 0,
    negatives: str | os.PathLike | None = None,
) -> QualityReport:
    """Judge ``size`` (all without it) published answers of ``split`` drawn by ``seed``, in
    every reply shape, and every hand-written negative reply of ``split`` (or of the file
    ``negatives``)."""
    from foilkit.generation.llm_replies import is_refusal
    from foilkit.generation.quality.actor_swap import vitatecs_captions
    from foilkit.generation.quality.rtime_rewrites import read_videos
    from foilkit.generation.vitatecs.generate import CANDIDATE, parse_answer

    data_dir = Path(data_dir)
    captions = set(vitatecs_captions(data_dir / "vitatecs", split))
    pairs = {}
    for path in sorted((data_dir / "vitatecs").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if row["caption"] in captions and row.get("counterfactual"):
                    pairs[(row["caption"], row["counterfactual"])] = None
    chosen = sample(list(pairs), size, seed)
    records = sample(read_videos(data_dir / "rtime" / "test.json", split), size, seed)
    report = QualityReport(
        "LLM reply checks",
        split,
        {"counterfactuals": len(chosen), "rtime_videos": len(records), "seed": seed},
    )
    for caption, counterfactual in chosen:
        expected = counterfactual.strip().rstrip(".").rstrip()
        for shape, template in SHAPES.items():
            answer, status = parse_answer(template.format(answer=counterfactual), caption)
            accepted = status == CANDIDATE and answer.rstrip(".") == expected
            report.add(f"VITATECS counterfactual, {shape}", KEEP, accepted, counterfactual)
    for record in records:
        for side in ("forward", "reverse"):
            for rewrite in record[f"{side}_rewrites"]:
                report.add("RTime published rewrite (refusal check)", KEEP, not is_refusal(rewrite))
    files = {"": Path(negatives)} if negatives else NEGATIVES_FILES[split]
    for name, path in files.items():
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            reply, kind = row["reply"], row["kind"]
            _, status = parse_answer(reply, "a man opens the door")
            report.add(f"{kind} reply{name} (VITATECS parser)", REJECT, status == CANDIDATE, reply)
            if kind == "refusal":
                flagged = any(is_refusal(part) for part in reply.splitlines())
                report.add(f"refusal reply{name} (RTime refusal check)", REJECT, not flagged, reply)
    return report
