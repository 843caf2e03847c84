"""Writing traces: ``--trace-out`` is checked before the search, the trace is written whole
or not at all, a file that is not a trace is never overwritten without ``--force``, and a
write that fails after the search still prints the whole report."""

from __future__ import annotations

import errno
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import cmd_explore, main
from txcheck.models.errors import InputError
from txcheck.models.sim.fixture import default_fixture
from txcheck.traces import atomic
from txcheck.traces.document import (
    TRACE_FORMAT,
    TraceOutError,
    check_writable,
    is_trace_file,
    write_trace,
)

FAST = ["--policy", "naive", "--engine", "systematic", "--no-seeds", "--seed", "0"]
FAST += ["--max-faults", "1"]
TRACE: dict[str, Any] = {"format": TRACE_FORMAT, "policy": "naive", "steps": []}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder no file can be created in: permission bits for a normal user; for root,
    for whom they do not apply, sysfs (which refuses new files whatever the user)."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    folder = Path("/sys")
    try:
        fd, probe = tempfile.mkstemp(dir=folder)
    except OSError:
        return folder
    os.close(fd)
    os.unlink(probe)
    pytest.skip("no folder refuses new files to root here")


def _bad_paths(tmp_path: Path) -> list[tuple[str, str]]:
    (tmp_path / "a-folder").mkdir(exist_ok=True)
    return [
        ("", "empty"),
        ("a-folder", "is a folder"),
        ("new.json/", "names a folder"),
        ("missing/trace.json", "the folder missing does not exist"),
        ("/dev/full", "is a character device"),
    ]


def test_each_bad_path_is_one_line_naming_it_before_any_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    searched: list[object] = []
    monkeypatch.setattr(cmd_explore, "explore", lambda *a, **k: searched.append(a))
    cases = [*_bad_paths(tmp_path)]
    folder = _unwritable_folder(tmp_path)
    cases.append((str(folder / "trace.json"), f"cannot create a file in the folder {folder}"))
    for path, problem in cases:
        assert main(["explore", *FAST, "--trace-out", path]) == 2, path
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.count("\n") == 1, captured.err
        shown = path or "''"
        assert captured.err.startswith(f"txcheck explore: error: {shown}: "), captured.err
        assert problem in captured.err
    assert searched == []
    assert os.path.exists("/dev/full") and not Path("/dev/full").is_file()


def test_check_writable_accepts_new_files_and_existing_traces(tmp_path: Path) -> None:
    check_writable("new.json")
    check_writable(tmp_path / "new.json")
    Path("old.json").write_text(json.dumps(TRACE))
    check_writable("old.json")
    assert is_trace_file("old.json")
    assert os.listdir(".") == ["old.json"]  # the probe file is gone


@pytest.mark.parametrize(
    "content", ["my notes\n", "{}", json.dumps({"format": "txcheck-trace/2"}), "\xff\xfe"]
)
def test_a_file_that_is_not_a_trace_is_kept_unless_forced(
    content: str, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("notes.json").write_text(content, encoding="utf-8", errors="surrogateescape")
    before = Path("notes.json").read_bytes()
    with pytest.raises(TraceOutError, match=r"is not a txcheck-trace/1 file.*--force"):
        write_trace(TRACE, "notes.json")
    assert Path("notes.json").read_bytes() == before
    assert main(["explore", *FAST, "--trace-out", "notes.json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "notes.json" in err and "--force" in err
    assert Path("notes.json").read_bytes() == before
    write_trace(TRACE, "notes.json", force=True)
    assert json.loads(Path("notes.json").read_text()) == TRACE


def test_force_replaces_a_non_trace_file_with_the_counterexample(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Path("notes.json").write_text("my notes\n")
    assert main(["explore", *FAST, "--trace-out", "notes.json", "--force", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["counterexample"]["trace"] == "notes.json"
    assert json.loads(Path("notes.json").read_text())["format"] == TRACE_FORMAT


def test_a_symbolic_link_is_replaced_only_with_force_and_never_written_through(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(TRACE))
    Path("link.json").symlink_to(outside)
    with pytest.raises(TraceOutError, match="symbolic link"):
        check_writable("link.json")
    write_trace({**TRACE, "policy": "guarded"}, "link.json", force=True)
    assert not Path("link.json").is_symlink()
    assert json.loads(Path("link.json").read_text())["policy"] == "guarded"
    assert json.loads(outside.read_text()) == TRACE


def test_the_trace_is_written_whole_with_the_usual_permissions() -> None:
    write_trace(TRACE, "t.json")
    mask = os.umask(0o022)
    os.umask(mask)
    assert Path("t.json").stat().st_mode & 0o777 == 0o666 & ~mask
    assert json.loads(Path("t.json").read_text()) == TRACE
    assert os.listdir(".") == ["t.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_trace(TRACE, "t.json")
    before = Path("t.json").read_bytes()

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        write_trace({**TRACE, "policy": "guarded"}, "t.json")
    assert Path("t.json").read_bytes() == before
    assert os.listdir(".") == ["t.json"]


@pytest.mark.parametrize("as_json", [False, True])
def test_a_write_that_fails_after_the_search_still_prints_the_report(
    as_json: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(document: object, path: str, *, force: bool = False) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cmd_explore, "write_trace", full)
    assert main(["explore", *FAST, "--trace-out", "t.json", *(["--json"] * as_json)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "txcheck explore: error: t.json: cannot write the trace: No space left on device\n"
    )
    if as_json:
        result = json.loads(captured.out)
        assert result["found"] and result["counterexample"]["trace"] is None
    else:
        assert captured.out.startswith("Counterexample: policy naive violates")
        assert "Steps (* = deviation)" in captured.out and "Engines" in captured.out
        assert "Trace written to" not in captured.out
    assert not Path("t.json").exists()


def test_a_reproduction_whose_trace_was_not_written_names_no_trace_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On another world the reproduction would read it back from the trace: when the
    trace could not be written, it inlines the world instead of naming the missing file."""
    world = json.loads(json.dumps(default_fixture().document))
    world["catalog"]["sku_book"]["stock"] = 7
    Path("world.json").write_text(json.dumps(world))

    def full(document: object, path: str, *, force: bool = False) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cmd_explore, "write_trace", full)
    assert main(["explore", *FAST, "--world", "world.json", "--trace-out", "t.json"]) == 2
    out = capsys.readouterr().out
    assert "Reproduce in Python:" in out
    assert "load_trace" not in out and "fixture = parse_world(" in out


def test_a_trace_refused_at_write_time_is_reported_after_the_report(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that appears during the search is not overwritten either."""
    real = cmd_explore.write_trace

    def appears(document: object, path: str, *, force: bool = False) -> None:
        Path(path).write_text("appeared during the search\n")
        real(document, path, force=force)  # type: ignore[arg-type]

    monkeypatch.setattr(cmd_explore, "write_trace", appears)
    assert main(["explore", *FAST, "--trace-out", "t.json"]) == 2
    captured = capsys.readouterr()
    assert "Counterexample: policy naive" in captured.out
    assert "is not a txcheck-trace/1 file" in captured.err and captured.err.count("\n") == 1
    assert Path("t.json").read_text() == "appeared during the search\n"


def test_check_writable_errors_are_input_errors() -> None:
    with pytest.raises(InputError):
        check_writable("")
