"""The console every report prints on: a terminal's width, else a fixed wide one."""

from __future__ import annotations

from rich.console import Console

__all__ = ["REPORT_WIDTH", "report_console"]

REPORT_WIDTH = 120
"""Width of reports written to a file or a pipe (a terminal keeps its own width)."""


def report_console() -> Console:
    """The stdout console for every report: a terminal's width, else ``REPORT_WIDTH``
    columns, so a report saved to a file or piped keeps its tables readable (rich would
    take 80 columns and print long ids a character a line)."""
    console = Console()
    return console if console.is_terminal else Console(width=REPORT_WIDTH)
