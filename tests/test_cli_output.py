"""Output that cannot be written (a full disk, a closed pipe) is one line, exit 2, never a
traceback, also at the final flush."""

from __future__ import annotations

import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from txcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")
PROPOSAL = str(ROOT / "examples/proposals/cycle.json")


class _Failing(io.StringIO):
    def __init__(self, code: int) -> None:
        super().__init__()
        self.code = code

    def write(self, text: str) -> int:
        raise OSError(self.code, os.strerror(self.code))


@pytest.mark.parametrize(
    ("code", "err"),
    [
        (errno.ENOSPC, "txcheck validate: error: stdout: cannot write (No space left on device)\n"),
        (errno.EPIPE, ""),  # `| head` closed it on purpose: nothing to say
    ],
)
def test_stdout_that_cannot_be_written_is_exit_2(
    code: int, err: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdout", _Failing(code))
    assert main(["validate", CONTRACT, PROPOSAL, "--json"]) == 2
    assert capsys.readouterr().err == err
    if code == errno.ENOSPC:  # rich's own output too (rich handles a broken pipe itself)
        assert main(["validate", CONTRACT, PROPOSAL]) == 2
        assert capsys.readouterr().err == err


def test_other_os_errors_are_not_taken_for_output_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stdout", _Failing(errno.EACCES))
    with pytest.raises(PermissionError):
        main(["validate", CONTRACT, PROPOSAL])


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_disk_behind_stdout_is_one_line() -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "txcheck", "validate", CONTRACT, PROPOSAL],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
            timeout=60,
        )
    assert (done.returncode, done.stderr) == (
        2,
        "txcheck validate: error: stdout: cannot write (No space left on device)\n",
    )


# -- --help, --version, a closed stdout, a reader that left (hostile corpus) ---------------

CASES = str(ROOT / "examples/audit/cases.jsonl")
COMMANDS = {
    "version": ["--version"],
    "help": ["--help"],
    "command-help": ["score", "--help"],
    "validate": ["validate", CONTRACT, PROPOSAL],
    "validate-json": ["validate", CONTRACT, PROPOSAL, "--json"],
    "score": ["score", CONTRACT, CASES],
}


def _txcheck(argv: list[str], **streams: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "txcheck", *argv],
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=120,
        **streams,  # type: ignore[call-overload]
    )


def _named(argv: list[str]) -> str:
    return "txcheck" if argv[0].startswith("-") else f"txcheck {argv[0]}"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_version_and_reports_on_a_full_disk_are_one_line_exit_2(name: str) -> None:
    """--version gave a traceback and --help exited 0 with nothing written."""
    argv = COMMANDS[name]
    with open("/dev/full", "w") as full:
        done = _txcheck(argv, stdout=full)
    assert (done.returncode, done.stderr) == (
        2,
        f"{_named(argv)}: error: stdout: cannot write (No space left on device)\n",
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_closed_stdout_is_one_line_exit_2(name: str) -> None:
    """Started with stdout closed (``>&-``): an AttributeError traceback before."""
    argv = COMMANDS[name]
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "txcheck", *argv],
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (
        2,
        f"{_named(argv)}: error: stdout: cannot write (stdout is closed)\n",
    )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_reader_that_left_is_silent_exit_2_whichever_printer(name: str) -> None:
    """``| head -1`` closes the pipe on purpose: no traceback, no message, and the same
    exit code for rich's reports (rich exited 1, "a violation") as for JSON."""
    reading, writing = os.pipe()
    os.close(reading)  # the reader left before anything was written: EPIPE, every time
    try:
        done = _txcheck(COMMANDS[name], stdout=writing)
    finally:
        os.close(writing)
    assert (done.returncode, done.stderr) == (2, "")


def test_import_needs_no_stdout(tmp_path: Path) -> None:
    """A command that prints nothing on stdout runs with it closed."""
    out = tmp_path / "cases.jsonl"
    shop = ROOT / "tests" / "fixtures" / "tau2" / "shop"
    argv = ["import", "tau2", str(shop), "--out", str(out)]
    done = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "txcheck", *argv],
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text().count("\n") == 3  # tasks 0 (nothing to do), 1 and 2
