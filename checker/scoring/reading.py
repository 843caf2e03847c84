"""Reading a JSON Lines file one line at a time, with bounded memory.

Lines are split on ``\\n`` only (JSON strings may hold U+2028 and other characters that
``str.splitlines`` breaks on) and decoded as UTF-8 one by one, so one bad byte spoils one
line, not the file. A line longer than ``MAX_LINE_BYTES`` is a bad line: it is skipped
without being held in memory. When even the skipping finds no end of line within
``MAX_SKIP_BYTES`` (``/dev/zero``), reading stops with a last bad line saying so; what
was read before is kept.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

import attrs

__all__ = ["MAX_LINE_BYTES", "MAX_SKIP_BYTES", "LineError", "iter_lines"]

MAX_LINE_BYTES = 16 * 1024 * 1024
"""The longest line read (16 MiB); a longer one is a bad line."""

MAX_SKIP_BYTES = 1024 * 1024 * 1024
"""How far past ``MAX_LINE_BYTES`` an over-long line is skipped before reading stops."""

_CHUNK = 1024 * 1024


@attrs.frozen(kw_only=True)
class LineError:
    """A line that could not be used, and why (one line of text)."""

    line: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, "message": self.message}


def _skip_rest(stream: IO[bytes]) -> bool:
    """Read up to the next newline; ``False`` when none came within ``MAX_SKIP_BYTES``."""
    skipped = 0
    while skipped < MAX_SKIP_BYTES:
        chunk = stream.readline(_CHUNK)
        if not chunk or chunk.endswith(b"\n"):
            return True
        skipped += len(chunk)
    return False


def iter_lines(
    stream: IO[bytes], *, max_line: int = MAX_LINE_BYTES
) -> Iterator[tuple[int, str | LineError]]:
    """``(line number, text)`` for each non-blank line, or ``(line number, LineError)``
    for a line that is too long or not UTF-8."""
    number = 0
    while True:
        raw = stream.readline(max_line + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line and not (len(raw) == max_line + 1 and raw.endswith(b"\n")):
            limit = f"{max_line // (1024 * 1024)} MiB" if max_line >= 1024 * 1024 else max_line
            if not _skip_rest(stream):
                yield (
                    number,
                    LineError(
                        line=number,
                        message=(
                            f"line is longer than {limit} (the limit) and has no end within "
                            f"{MAX_SKIP_BYTES // (1024 * 1024)} MiB; stopped reading here"
                        ),
                    ),
                )
                return
            yield (
                number,
                LineError(
                    line=number, message=f"line is longer than {limit} (the limit); not read"
                ),
            )
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            yield (
                number,
                LineError(
                    line=number,
                    message=f"not UTF-8 (byte {error.start + 1} of the line: {error.reason})",
                ),
            )
            continue
        if not text.isspace():  # (a line read is never empty)
            yield number, text
