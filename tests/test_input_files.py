"""Every command-line argument that names a file to read refuses a named pipe, a device and
a file over its size limit: one line on stderr naming the file, exit 2, nothing read.

Part of the hostile corpus: each slot is given a FIFO (which would block a command that
opens it for reading until something writes to it), ``/dev/zero`` (which never ends) and
a sparse file one byte over the limit (``truncate``: nothing is written to the disk). The
FIFO is watched by a thread that would open its writing end if the command ever opened it
for reading; the test then fails instead of hanging.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from txcheck.cli import main
from txcheck.models.errors import InputError
from txcheck.models.input_files import (
    MAX_DOCUMENT_BYTES,
    MAX_TRACE_BYTES,
    describe_size,
    open_regular,
    read_regular,
)
from txcheck.scoring.reading import MAX_LINE_BYTES

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")
PROPOSAL = str(ROOT / "examples/proposals/valid_openai_chat.json")
WORLD = str(ROOT / "examples/checkout/world.json")
CASES = str(ROOT / "examples/audit/cases.jsonl")
FIXTURES = Path(__file__).resolve().parent / "fixtures"

Argv = Callable[[Path, Path], list[str]]
"""(the hostile path, a scratch folder) -> the command line. A slot that names a folder
links a file in it to the hostile path: the error then names that link."""

NAMED: dict[str, str] = {
    "import bfcl DATA_DIR": "bfcl/BFCL_v4_simple_python.json",
    "import tau2 tasks.json": "shop/tasks.json",
}


def _bfcl_data(bad: Path, scratch: Path) -> list[str]:
    data = scratch / "bfcl"
    shutil.copytree(FIXTURES / "bfcl", data)
    target = data / "BFCL_v4_simple_python.json"
    target.unlink()
    target.symlink_to(bad)
    out = str(scratch / "out.jsonl")
    return ["import", "bfcl", str(data), "--category", "simple_python", "--out", out]


def _tau2_tasks(bad: Path, scratch: Path) -> list[str]:
    domain = scratch / "shop"
    shutil.copytree(FIXTURES / "tau2" / "shop", domain)
    (domain / "tasks.json").unlink()
    (domain / "tasks.json").symlink_to(bad)
    return ["import", "tau2", str(domain), "--out", str(scratch / "out.jsonl")]


DOCUMENTS: dict[str, Argv] = {
    "validate CONTRACT": lambda p, s: ["validate", str(p), PROPOSAL],
    "validate PROPOSAL": lambda p, s: ["validate", CONTRACT, str(p)],
    "validate PROPOSAL...": lambda p, s: ["validate", CONTRACT, PROPOSAL, str(p)],
    "validate --world": lambda p, s: ["validate", CONTRACT, PROPOSAL, "--world", str(p)],
    "score CONTRACT": lambda p, s: ["score", str(p), CASES],
    "evaluate CONTRACT": lambda p, s: ["evaluate", str(p), CASES],
    "explore --contract": lambda p, s: ["explore", "--contract", str(p), "--seed", "1"],
    "explore --world": lambda p, s: ["explore", "--world", str(p), "--seed", "1"],
    "explore --plan": lambda p, s: ["explore", "--plan", str(p), "--seed", "1"],
    "import tau2 tasks.json": _tau2_tasks,
    "import tau2 --tools": lambda p, s: [
        "import",
        "tau2",
        str(FIXTURES / "tau2" / "shop"),
        "--tools",
        str(p),
        "--out",
        str(s / "out.jsonl"),
    ],
}
"""Slots read whole: a JSON document, at most ``MAX_DOCUMENT_BYTES``."""

TRACES: dict[str, Argv] = {"replay TRACE": lambda p, s: ["replay", str(p)]}

STREAMS: dict[str, Argv] = {
    "score CASES": lambda p, s: ["score", CONTRACT, str(p)],
    "score CASES (no contract)": lambda p, s: ["score", str(p)],
    "evaluate CASES": lambda p, s: ["evaluate", CONTRACT, str(p)],
    "validate --jsonl": lambda p, s: ["validate", CONTRACT, "--jsonl", str(p)],
    "import bfcl DATA_DIR": _bfcl_data,
    "import bfcl --results": lambda p, s: [
        *_bfcl_data(FIXTURES / "bfcl" / "BFCL_v4_simple_python.json", s),
        "--results",
        str(p),
    ],
}
"""Slots read a line at a time: each line at most ``MAX_LINE_BYTES``."""

SLOTS = {**DOCUMENTS, **TRACES, **STREAMS}


@contextmanager
def _watched_fifo(path: Path) -> Iterator[list[bool]]:
    """A FIFO at ``path``; the list holds True if anything opened it for reading (its
    writing end is then opened and closed at once, so the reader sees an empty file
    rather than waiting for ever)."""
    os.mkfifo(path)
    opened = [False]
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.005):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: no reader
                continue
            opened[0] = True
            os.close(fd)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield opened
    finally:
        done.set()
        watcher.join()


def _one_line_naming(err: str, path: Path, slot: str = "") -> str:
    """The error line that names ``path`` (or the link a folder slot put in its place)."""
    assert "Traceback" not in err, err
    named = str(path.parent / NAMED[slot]) if slot in NAMED else str(path)
    lines = [line for line in err.splitlines() if named in line]
    assert lines, err
    return lines[0]


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # explore's files (.txcheck/) stay in the test's folder
    return tmp_path


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_a_named_pipe_is_refused_unopened(
    slot: str, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = scratch / "input.fifo"
    with _watched_fifo(fifo) as opened:
        code = main(SLOTS[slot](fifo, scratch))
    err = capsys.readouterr().err
    assert not opened[0], f"{slot}: the command opened the named pipe for reading"
    assert code == 2, err
    assert "is a named pipe (FIFO), not a regular file" in _one_line_naming(err, fifo, slot)


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_a_device_is_refused_unread(
    slot: str, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    zero = Path("/dev/zero")
    if not zero.exists():
        pytest.skip("needs /dev/zero")
    link = scratch / "zero.json"  # the same device under an innocent name
    link.symlink_to(zero)
    code = main(SLOTS[slot](link, scratch))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "is a character device, not a regular file" in _one_line_naming(err, link, slot)


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


@pytest.mark.parametrize("slot", sorted(DOCUMENTS))
def test_a_document_over_the_limit_is_refused_unread(
    slot: str, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = _sparse(scratch / "big.json", MAX_DOCUMENT_BYTES + 1)
    code = main(DOCUMENTS[slot](big, scratch))
    err = capsys.readouterr().err
    assert code == 2, err
    line = _one_line_naming(err, big, slot)
    assert "larger than the 64 MiB limit for this file; not read" in line


def test_a_trace_over_the_limit_is_refused_unread(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = _sparse(scratch / "big-trace.json", MAX_TRACE_BYTES + 1)
    assert main(["replay", str(big)]) == 2
    line = _one_line_naming(capsys.readouterr().err, big)
    assert "larger than the 256 MiB limit for this file; not read" in line


@pytest.mark.parametrize("slot", sorted(STREAMS))
def test_a_line_over_the_limit_is_refused(
    slot: str, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = _sparse(scratch / "big.jsonl", MAX_LINE_BYTES + 1)  # one line, no end
    code = main(STREAMS[slot](big, scratch))
    err = capsys.readouterr().err
    assert code == 2, err
    assert "line is longer than 16 MiB (the limit)" in _one_line_naming(err, big, slot)


def test_read_regular_stops_at_the_limit_when_the_file_grows(tmp_path: Path) -> None:
    path = tmp_path / "grows.json"
    path.write_bytes(b"[1, 2, 3]")
    assert read_regular(path, limit=9) == b"[1, 2, 3]"
    with pytest.raises(InputError, match="larger than the 8 bytes limit"):
        read_regular(path, limit=8)


def test_a_folder_and_a_missing_file_keep_their_own_errors(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        open_regular(tmp_path)
    with pytest.raises(FileNotFoundError):
        open_regular(tmp_path / "missing.json")


def test_sizes_are_described_in_readable_units() -> None:
    assert [describe_size(n) for n in (8, 2048, 64 << 20, 3 << 29)] == [
        "8 bytes",
        "2 KiB",
        "64 MiB",
        "1.5 GiB",
    ]
