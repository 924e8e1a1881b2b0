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
    r"|\b(?:not something i can|against my (?:guidelines|policy|principles)|content policy)\b"
    # declining with an adverb or a modal ("I must respectfully decline", "I'm going to
    # politely decline"), or in other words ("not in a position to", "I'd prefer not to",
    # "I'll pass on this", "not a request I am able to ...", "this request cannot be completed")
    r"|\bi(?:'m|\s+am|\s+must|\s+will|'ll|\s+would|'d|\s+need\s+to|\s+have\s+to)?"
    r"(?:\s+going\s+to)?(?:\s+have\s+to)?\s+(?:\w+ly\s+)?decline\b"
    r"|\bi(?:'m|\s+am)\s+not\s+in\s+a\s+position\s+to\b|\bi(?:'d|\s+would)\s+prefer\s+not\s+to\b"
    r"|\bi(?:'ll|\s+will)\s+(?:have\s+to\s+)?pass\s+on\b"
    r"|\bnot\s+(?:a\s+request|a\s+task|something)\s+(?:that\s+)?i(?:'m|\s+am)?\s+"
    r"(?:able|can|will|willing)\b"
    r"|\b(?:this|the|your)\s+(?:request|task)\s+(?:cannot|can'?t|can\s+not|could\s+not|won'?t|"
    r"will\s+not)\s+be\s+(?:completed|fulfilled|done|processed|carried\s+out)\b"
    r"|\bunable\s+to\s+(?:generate|modify|rewrite|complete|provide|produce)\b"
    r"|\bcannot\s+be\s+(?:meaningfully\s+)?(?:modified|rewritten|changed|reversed)\b"
    # the same in the languages chat models most often fall back to: an apology or "I cannot"
    r"|\b(?:lo\s+siento|lo\s+lamento|d[ée]sol[ée]e?|es\s+tut\s+mir\s+leid|leider|mi\s+dispiace|"
    r"purtroppo|desculpe|sinto\s+muito|infelizmente|przepraszam|niestety|het\s+spijt\s+me|"
    r"helaas|maalesef|üzgünüm|извините|простите|к\s+сожалению)\b"
    r"|\b(?:no\s+puedo|je\s+ne\s+(?:peux|suis)\s+pas|ich\s+kann\s+(?:\w+\s+){0,3}nicht|"
    r"non\s+posso|não\s+posso|nie\s+mogę|не\s+могу|не\s+смогу)\b"
    r"|抱歉|对不起|對不起|很遗憾|无法|無法|不能|申し訳|すみません|できません|죄송|수\s*없",
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
# Chat that neither opens like a chat turn nor declines: a line addressed to the reader ("I hope
# this helps!", "Let me know if ...", "Thank you for the clear instructions.", "Feel free to
# ...", "Understood."), the model telling what it did or will do in the first person ("I have
# changed the verb ...", "I will now rewrite ..."; a first-person description, "I opened the
# washing machine", is not one), or a comment on the answer ("This modification swaps ...").
_ADDRESS = re.compile(
    r"^\W*(?:"
    r"i\s+hope\b|hope\s+(?:this|that|it)\b|(?:please\s+)?let\s+me\s+know\b|feel\s+free\b|"
    r"thanks?\b|thank\s+you\b|good\s+luck\b|you'?re\s+welcome\b|if\s+you\b|understood\b|noted\b|"
    r"(?:happy|glad)\s+to\b|with\s+pleasure\b|"
    r"i(?:'ve|\s+have|'ll|\s+will|\s+hope|\s+think|\s+believe|\s+understand|\s+changed|\s+modified|"
    r"\s+replaced|\s+swapped|\s+rewrote|\s+rephrased|\s+altered|\s+edited)\b|"
    r"(?:this|that|the\s+above|my)\s+(?:modification|change|counterfactual|version|rewrite|revision|"
    r"edit|answer|modified\s+(?:description|sentence|caption)|new\s+(?:description|sentence|caption))"
    r"\b|step\s+\d+\b|\(.*\)\W*$)"
    # what it is doing with the task, anywhere in the line ("To modify ..., I'll first identify
    # the main action")
    r"|\bi(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to|\s+need\s+to|'ve|\s+have)\s+"
    r"(?:\w+\s+)?(?:identify|modify|modified|rewrite|rewritten|rephrase|rephrased|change|changed|"
    r"reverse|reversed|swap|swapped|replace|replaced|keep|kept)\b",
    re.IGNORECASE,
)
# An API's error body returned as if it were the reply (status 200): "Error: Rate limit
# exceeded ...", "429 Too Many Requests", "Internal Server Error", an HTML error page.
_ERROR_BODY = re.compile(
    r"^\W*(?:error\b|rate\s+limit|\d{3}\s+(?:too\s+many|internal|service|bad|gateway|not\s+found|"
    r"unauthori[sz]ed|forbidden)|internal\s+server\s+error|service\s+unavailable|bad\s+gateway|"
    r"gateway\s+time-?out|too\s+many\s+requests|upstream\s+(?:connect|request)|"
    r"the\s+server\s+(?:had|encountered)\s+an\s+error|<(?:!doctype|html|head|body)\b)"
    r"|\brate\s+limit\s+(?:exceeded|reached)\b|\btry\s+again\s+in\s+\d",
    re.IGNORECASE,
)
# A model's special tokens, alone or run together with a chat role ("<|start_header_id|>
# assistant<|end_header_id|>", Llama 3's header; "<|im_start|>assistant"; "[INST]").
_SPECIAL_TOKEN = re.compile(r"<\|[\w.]*\|>|</?s>|\[/?INST\]|<</?SYS>>")
_ROLE = re.compile(r"^\W*(?:system|user|assistant)\b\W*", re.IGNORECASE)
# Function words that mark a line as written in another language than the English of the
# captions (Spanish, French, German, Italian, Portuguese, Dutch); none is an English word.
_FOREIGN_WORDS = frozenset(
    "que el los las del por para con una pero esta esa puedo siento je ne pas les des est "
    "mais vous suis cette ich nicht und ist aber kann eine diese sie dass il di che per sono "
    "questa della não uma com mas eu posso isso ik niet het een maar".split()
)
_ENGLISH_WORDS = frozenset(
    "a an the is are was were of in on at to with and by for from into his her their its it "
    "he she they this that".split()
)
_LETTER = re.compile(r"[^\W\d_]")
_LATIN = re.compile(r"[a-zA-Z\u00c0-\u024f]")


def strip_special_tokens(text: str) -> str:
    """A reply line without a model's special tokens and the chat role they frame
    ("<|start_header_id|>assistant<|end_header_id|>A man ..." -> "A man ...")."""
    if not _SPECIAL_TOKEN.search(text):
        return text
    return _ROLE.sub("", _SPECIAL_TOKEN.sub(" ", text)).strip()


def is_foreign(text: str) -> bool:
    """Whether a line is not in English: most of its letters are not Latin ("抱歉，我无法
    ..."), or it has more function words of another language than English ones ("Lo siento,
    pero no puedo ...")."""
    letters = _LETTER.findall(text)
    if letters and len(_LATIN.findall(text)) * 2 < len(letters):
        return True
    words = re.findall(r"[^\W\d_]+", text.lower())
    foreign = sum(word in _FOREIGN_WORDS for word in words)
    return foreign >= 2 and foreign > sum(word in _ENGLISH_WORDS for word in words)


def is_not_answer(text: str) -> bool:
    """Whether a reply line can never be an answer, wherever it stands (even behind the
    answer label): no text once special tokens are dropped, an API's error body, or a line
    not in English."""
    line = _plain(text).strip()
    bare = strip_special_tokens(line)
    return bool(_NOT_TEXT.match(bare)) or bool(_ERROR_BODY.search(line)) or is_foreign(line)


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
    ("Note: ...", "This modification swaps ..."), a line addressed to the reader ("I hope this
    helps!", "Thank you for ..."), a header line ending in ":", a line that can never be an
    answer (:func:`is_not_answer`), or a refusal."""
    line = _plain(text).strip()
    return (
        line.endswith(":")
        or bool(_CHAT_OPENER.match(line) or _ADDRESS.search(line))
        or is_not_answer(line)
        or is_refusal(line)
    )
