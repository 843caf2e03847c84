"""Untrusted strings (ids, names, messages, paths from a case, a contract, a trace or a
model's output) made safe to print.

Such a string is never rich markup and never reaches the terminal raw: control characters
(ESC, BEL, CR, DEL, the C1 codes U+0080-U+009F), the bidirectional controls that can make
a line read differently from what it holds (U+202A-U+202E, U+2066-U+2069, the marks
U+200E, U+200F, U+061C), the invisible zero-width characters that make two names look
alike (U+200B-U+200D, U+2060, U+FEFF) and every other Unicode format character (category
Cf) or line separator are shown as ``\\x1b``/``\\u202e``-style escapes, and lone
surrogates as ``\\udcxx``. Escaping comes before any cut, so a cut string can never end
inside an escape sequence (an unterminated OSC would swallow what follows). ``plain`` and
``plain_block`` wrap the result in a rich ``Text``, which rich never parses for markup
(``[bold]``, ``[link=...]`` print literally).

The module imports rich only for ``plain``/``plain_block``, so the CLI's error path can use
``one_line`` without loading it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

__all__ = ["block", "escape_controls", "one_line", "plain", "plain_block"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|[^\x00-\x7f]")
"""The C0 controls but tab and newline, DEL and C1, and any non-ASCII character (which
``_escaped`` keeps unless it is invisible: see ``_HIDDEN``)."""
_HIDDEN = frozenset({"Cc", "Cf", "Cn", "Zl", "Zp"})
"""Controls, format characters (zero-width, bidirectional, BOM), line separators and
unassigned code points (some, such as U+2065, are default-ignorable: hidden when shown)."""


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code >= 0xA0 and unicodedata.category(char) not in _HIDDEN:
        return char
    if code < 0x100:
        return f"\\x{code:02x}"
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    return f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    """``text`` with every control character but tab and newline escaped."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _CONTROL.sub(_escaped, text)


def one_line(text: str, limit: int | None = 80) -> str:
    """``text`` as one printable line (whitespace runs become one space) of at most
    ``limit`` characters (``None``: no limit), cut with ``...``."""
    text = " ".join(escape_controls(text).split())
    if limit is None or len(text) <= limit:
        return text
    return f"{text[: limit - 3]}..."


def block(text: str) -> str:
    """``text`` with its lines kept and every other control character escaped."""
    return escape_controls(text)


def plain(text: str, limit: int | None = 80, style: str = "") -> Text:
    """``one_line(text)`` as a rich ``Text`` (never read as markup)."""
    from rich.text import Text  # noqa: PLC0415  (the error path stays free of rich)

    return Text(one_line(text, limit), style=style)


def plain_block(text: str, style: str = "") -> Text:
    """``block(text)`` as a rich ``Text`` (never read as markup)."""
    from rich.text import Text  # noqa: PLC0415  (the error path stays free of rich)

    return Text(block(text), style=style)
