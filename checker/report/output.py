"""Writing the report file: checked before any work, written whole or not at all.

A report path is refused as a trace path is (``txcheck.traces.destination``): a folder,
a device, a named pipe or a socket never, a symbolic link or an existing file that is not
a txcheck report only with ``--force``. The file is written by the same atomic writer as
traces (a temporary file renamed over the name).
"""

from __future__ import annotations

from pathlib import Path

from txcheck.report.page import GENERATOR
from txcheck.traces.atomic import write_atomically
from txcheck.traces.destination import Output, OutputPathError, check_destination

__all__ = ["ReportOutError", "check_report_path", "is_report_file", "report_output", "write_report"]

_HEAD = 4096
"""How much of an existing file is read to tell a previous report apart."""


class ReportOutError(OutputPathError):
    """A path a report cannot or must not be written to."""


def is_report_file(path: str | Path) -> bool:
    """Whether ``path`` starts like a txcheck report (only its first bytes are read)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD)
    except OSError:
        return False
    return head.startswith(b"<!DOCTYPE html>") and GENERATOR.encode("ascii") in head


def report_output(option: str) -> Output:
    """The report as an output of the command option ``option`` (``--html``)."""
    return Output(what="the report", kind="txcheck HTML report", option=option, ours=is_report_file)


def check_report_path(path: str | Path, *, force: bool = False, option: str = "--html") -> None:
    """Raise ``ReportOutError`` (one line naming ``path``) unless a report can be written
    there."""
    check_destination(path, report_output(option), force=force, error=ReportOutError)


def write_report(
    page: str, path: str | Path, *, force: bool = False, option: str = "--html"
) -> None:
    """Check ``path`` again, then replace it with ``page`` whole (UTF-8)."""
    check_report_path(path, force=force, option=option)
    write_atomically(path, page.encode("utf-8"))
