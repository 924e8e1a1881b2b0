"""What an LLM's reply says besides the answer asked for: refusals and chat around the answer.

Chat models decline ("I'm sorry, but I can't help with that.") and wrap their answers in
conversation ("Sure! Here is the modified description you asked for:"). Neither line is ever an
answer. Every pipeline that reads answers out of replies (VITATECS counterfactuals, RTime
rewrites) asks these two questions here, so the patterns are kept in one place.
"""

from __future__ import annotations

import re

# A label a reply may put before its text ("Modified Description: I'm sorry, ..."), so a refusal
# behind the prompt's own label is still read as one.
_LABEL = r"(?:[a-z][a-z ]{0,30}:\s*)?"
# How chat models decline: an apology opening the reply ("I'm sorry", "My apologies"), "As an
# AI", or a statement in the first person that it cannot or will not answer, anywhere in the line
# ("Unfortunately, the description cannot be modified, so I cannot provide an answer."); or a
# policy it invokes ("goes against my guidelines", "content policy"). Descriptions of a video are
# told in the third person, so "I can't" never starts a real one.
_REFUSAL = re.compile(
    r"^\W*" + _LABEL + r"(?:(?:i'?m|i am)\s+(?:so\s+)?(?:sorry|afraid|unable|not able)|"
    r"sorry\b|(?:my\s+)?apolog(?:ies|i[sz]e)\b|as an? (?:ai|language model)\b|"
    r"unfortunately,?\s+i\b)"
    r"|\bi(?:'m|\s+am)?\s+(?:cannot|can'?t|can not|won'?t|will not|am not able|unable|not able|"
    r"must decline|have to decline|going to have to decline|apologi[sz]e|"
    r"(?:would|'d) rather not|(?:do not|don'?t) feel comfortable|(?:am |'m )?not comfortable)\b"
    r"|\b(?:not something i can|against my (?:guidelines|policy|principles)|content policy)\b",
    re.IGNORECASE,
)
# How chat models open a reply before (or instead of) the answer: an interjection ("Sure!",
# "Certainly,", "Sure thing!"), an offer ("I'd be happy to help", "Let's see"), a line presenting
# the answer ("Here is the modified description", "Here you go", "The modified sentence would
# be"), or a comment on it ("Explanation: ...", "Note: ...", "Note that ..."). A description
# that merely starts with such a word ("Great white sharks swim", "Here is a man cooking") is
# not one.
_CHAT_OPENER = re.compile(
    r"^\W*(?:"
    r"(?:sure(?: thing)?|certainly|of course|absolutely|okay|ok|great|no problem|got it|alright|"
    r"good idea|great question|good question|you got it)\s*[!.,:]|"
    r"i(?:'d|\s+would)\s+be\s+(?:happy|glad)|(?:happy|glad)\s+to\s+help|let(?:'s|\s+me)\b|"
    r"here\s+(?:you\s+go|it\s+is)\b|"
    r"(?:explanation|note|reasoning|rationale|justification|changes?(?: made)?)\s*:|note\s+that\b|"
    r"(?:here(?:'s|\s+is|\s+are)|below\s+(?:is|are)|the\s+modified)\b.*\b"
    r"(?:modified|description|counterfactual|answer|sentence|version|caption|rewrite|came up))",
    re.IGNORECASE,
)
# What is never text: a code fence ("```", "```text"), a model's special token ("<|im_end|>",
# "</s>"), a JSON object (an API's error), a reply of punctuation or a bare number ("...", "1.").
_NOT_TEXT = re.compile(r"^(?:```\w*|<\|?/?[\w.]*\|?>|\{.*\}|[\W\d_]*)$")


def _plain(text: str) -> str:
    return text.replace("\u2019", "'")


def is_refusal(text: str) -> bool:
    """Whether a reply line is the model declining rather than answering."""
    return bool(_REFUSAL.search(_plain(text)))


def is_chatter(text: str) -> bool:
    """Whether a reply line is conversation around an answer, not an answer: a lead-in that
    opens like a chat turn ("Sure! Here is ...", "Certainly."), a comment on the answer
    ("Note: ..."), a header line ending in ":", a line that is not text (a code fence, a special
    token, punctuation), or a refusal."""
    line = _plain(text).strip()
    return (
        line.endswith(":")
        or bool(_CHAT_OPENER.match(line) or _NOT_TEXT.match(line))
        or is_refusal(line)
    )
