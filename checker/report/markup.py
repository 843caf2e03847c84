"""Untrusted text made safe for HTML and SVG.

Every string from a trace, a contract or a plan goes through ``text``: control,
bidirectional and zero-width characters are shown as escapes first (as on the terminal,
``txcheck.cli.safe_text``), then ``&``, ``<``, ``>`` and both quotes become character
references, so the result is safe both between tags and inside a quoted attribute. JSON
embedded in a ``<script type="application/json">`` element goes through ``script_json``,
which leaves no ``<`` in it, so it cannot close its element or open a comment.
"""

from __future__ import annotations

import html
import json
from typing import Any

from txcheck.cli.safe_text import escape_controls, one_line

__all__ = ["compact", "script_json", "text"]


def text(value: object, limit: int | None = None) -> str:
    """``value`` as HTML text (or a quoted attribute's value): one line, controls escaped,
    markup characters as references; cut to ``limit`` characters before escaping."""
    shown = one_line(str(value), limit) if limit is not None else escape_controls(str(value))
    return html.escape(shown, quote=True)


def compact(value: Any, limit: int | None = None) -> str:
    """A JSON value on one line (sorted keys), as HTML text."""
    return text(json.dumps(value, sort_keys=True, ensure_ascii=False), limit)


def script_json(value: Any) -> str:
    """``value`` as JSON safe inside a ``<script type="application/json">`` element:
    ``<``, ``>``, ``&`` and the line separators as ``\\u`` escapes (the JSON still
    parses to the same value), everything else ASCII."""
    dumped = json.dumps(value, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    for char in "<>&":
        dumped = dumped.replace(char, f"\\u{ord(char):04x}")
    return dumped
