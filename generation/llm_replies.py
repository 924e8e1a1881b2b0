"""What an LLM's reply says besides the answer asked for: refusals and chat around the answer.

Chat models decline ("I'm sorry, but I can't help with that.") and wrap their answers in
conversation ("Sure! Here is the modified description you asked for:"). Neither line is ever an
answer. Every pipeline that reads answers out of replies (VITATECS counterfactuals, RTime
rewrites) asks these two questions here, so the patterns are kept in one place.
"""

from __future__ import annotations

import re

# How chat models decline: "I'm sorry, but I can't ...", "I cannot help with that.", "As an AI".
_REFUSAL = re.compile(
    r"^\W*(?:(?:i'?m|i am)\s+(?:so\s+)?(?:sorry|afraid|unable|not able)|sorry\b|"
    r"i\s+(?:cannot|can'?t|can not|won'?t|will not|am not able|must decline|apologi[sz]e)|"
    r"as an ai\b|unfortunately,?\s+i\b)",
    re.IGNORECASE,
)
# How chat models open a reply before (or instead of) the answer: an interjection ("Sure!",
# "Certainly,"), an offer ("I'd be happy to help"), or a line presenting the answer ("Here is the
# modified description", "The modified sentence would be"). A description that merely starts
# with such a word ("Great white sharks swim", "Here is a man cooking") is not one.
_CHAT_OPENER = re.compile(
    r"^\W*(?:"
    r"(?:sure|certainly|of course|absolutely|okay|ok|great|no problem|got it|alright)\s*[!.,:]|"
    r"i(?:'d|\s+would)\s+be\s+(?:happy|glad)|(?:happy|glad)\s+to\s+help|let\s+me\b|"
    r"(?:here(?:'s|\s+is|\s+are)|below\s+(?:is|are)|the\s+modified)\b.*\b"
    r"(?:modified|description|counterfactual|answer|sentence|version|caption|rewrite))",
    re.IGNORECASE,
)


def _plain(text: str) -> str:
    return text.replace("\u2019", "'")


def is_refusal(text: str) -> bool:
    """Whether a reply line is the model declining rather than answering."""
    return bool(_REFUSAL.match(_plain(text)))


def is_chatter(text: str) -> bool:
    """Whether a reply line is conversation around an answer, not an answer: a lead-in that
    opens like a chat turn ("Sure! Here is ...", "Certainly."), a header line ending in ":",
    or a refusal."""
    line = _plain(text).strip()
    return line.endswith(":") or bool(_CHAT_OPENER.match(line)) or is_refusal(line)
