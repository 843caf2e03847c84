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
