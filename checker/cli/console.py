"""The rich console every command prints its report to stdout with.

On a terminal it takes the terminal's width; written to a file or a pipe, ``REPORT_WIDTH``
columns (rich would take 80 and print long ids a character a line).

rich handles a ``BrokenPipeError`` on its own: it points stdout at the null device and
raises ``SystemExit(1)``, which for txcheck means "a violation was found". This console
raises the ``BrokenPipeError`` instead, so a reader that left (``| head -1``) ends the
command as every other output failure does (``txcheck.cli.main``: no traceback, no
message, exit 2), whichever way the report was printed.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from rich.console import Console

__all__ = ["REPORT_WIDTH", "report_console", "stdout_console"]

REPORT_WIDTH = 120
"""Width of reports written to a file or a pipe (a terminal keeps its own width)."""


class _Console(Console):
    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))


def stdout_console(**options: Any) -> Console:
    """A ``rich.console.Console`` on stdout (``options`` as rich takes them)."""
    return _Console(**options)


def report_console() -> Console:
    """The stdout console for every report: a terminal's width, else ``REPORT_WIDTH``
    columns, so a report saved to a file or piped keeps its tables readable."""
    console = stdout_console()
    return console if console.is_terminal else stdout_console(width=REPORT_WIDTH)
