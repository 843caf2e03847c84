"""Untrusted strings (ids, names, messages from a case or a contract) made safe to print.

Such a string is never rich markup and never reaches the terminal raw: control characters
(ESC, BEL, C1 codes, ...) are shown as ``\\x1b``-style escapes, lone surrogates as
``\\udcxx``, whitespace runs collapse to one space, and the result is cut to a length.
``plain`` wraps it in a rich ``Text``, which rich never parses for markup.
"""

from __future__ import annotations

import re

from rich.text import Text

__all__ = ["one_line", "plain"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def one_line(text: str, limit: int = 80) -> str:
    """``text`` as one printable line of at most ``limit`` characters."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    text = " ".join(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text).split())
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def plain(text: str, limit: int = 80, style: str = "") -> Text:
    """``one_line(text)`` as a rich ``Text`` (never read as markup)."""
    return Text(one_line(text, limit), style=style)
