"""User strings in foilkit's Markdown (reports, results cards, leaderboards), shown as typed.

Labels, model ids, folder names, aspect and group names come from users and from datasets:
written raw, ``<img src=x onerror=...>`` would reach the page as HTML and a ``|`` or a newline
would break the table row it sits in. Every writer of Markdown passes such a string through
:func:`markdown_text` (plain text) or :func:`markdown_code` (an inline code span), as the HTML
pages pass theirs through ``html.escape``.

>>> markdown_text("<img src=x onerror=alert(1)> | a\\nb")
'\\\\<img src=x onerror=alert(1)\\\\> \\\\| a b'
>>> markdown_code("openai/clip-vit-base-patch32"), markdown_code("a|b")
('`openai/clip-vit-base-patch32`', 'a\\\\|b')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

#: What Markdown or HTML could read as syntax: backslash, code, emphasis, links and images,
#: HTML tags and entities, table cells, strikethrough. ``_`` inside a word is no emphasis in
#: CommonMark, so ``action_counting`` stays as it is.
_SYNTAX = re.compile(r"[\\`*\[\]<>&|~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
#: Line breaks (a new line ends a table row or starts a new block).
_BREAKS = re.compile(r"[\r\n\v\f\x85\u2028\u2029]+")


def markdown_text(value: object) -> str:
    """``value`` as literal Markdown text on one line: line breaks become spaces, and every
    character Markdown or HTML could read as syntax is backslash-escaped (CommonMark and GitHub
    show ``\\<`` as ``<``, ``\\|`` as ``|``, also inside a table)."""
    return _SYNTAX.sub(lambda match: "\\" + match.group(0), _BREAKS.sub(" ", str(value)))


def markdown_code(value: object) -> str:
    """``value`` as an inline code span (HTML is shown, not run, inside one), or, when it holds
    a backtick or a ``|`` (which would end the span or the table cell), as
    :func:`markdown_text`."""
    text = _BREAKS.sub(" ", str(value))
    return markdown_text(text) if re.search(r"[`|]", text) else f"`{text}`"


def table_row(cells: Iterable[str]) -> str:
    """One row of a GitHub Markdown table, its cells as given (user strings escaped already)."""
    return "| " + " | ".join(cells) + " |"


def table_rule(right: Sequence[bool]) -> str:
    """The line under a table's header: a column left-aligned, or right-aligned where ``right``."""
    return "|" + "".join("---:|" if align else "---|" for align in right)


def p_value_text(p_value: float) -> str:
    """A p-value as a paper prints it: three decimals, ``< 0.001`` below that.

    >>> p_value_text(0.13151225170378977), p_value_text(0.00004), p_value_text(1.0)
    ('0.132', '< 0.001', '1.000')
    """
    return "< 0.001" if p_value < 0.001 else f"{p_value:.3f}"


def p_statement(p_value: float) -> str:
    """``p = 0.132`` or ``p < 0.001`` (:func:`p_value_text`), as a table cell states it."""
    text = p_value_text(p_value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"
