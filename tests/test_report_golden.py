"""The same trace gives the same report bytes, as recorded in tests/golden/report_html.sha256.

Two traces from examples/ (``tests/report_traces.py``): the README's naive counterexample
and the crash-and-restart one. Each is reported twice in this process and once in a
process with another ``PYTHONHASHSEED`` (no set or dict order may leak into the page), and
the page's SHA-256 must equal the recorded one, so any change to what the report shows or
how shows up here. When a change is intended, regenerate the digests: the failure message
gives the command.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from report_traces import write

from txcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "report_html.sha256"
NAMES = ("crash", "naive")


def _golden() -> dict[str, str]:
    pairs = (line.split() for line in GOLDEN.read_text(encoding="utf-8").splitlines())
    return {name: digest for digest, name in pairs}


def _report(kind: str) -> bytes:
    """The report of ``kind``'s trace, written in the current directory under relative
    names (the replay command on the page names the trace as it was given)."""
    trace = write(kind, Path("."))
    out = Path(f"{kind}.html")
    assert main(["report", trace.name, "--html", str(out)]) == 0
    return out.read_bytes()


@pytest.mark.parametrize("kind", NAMES)
def test_the_report_is_byte_identical_and_unchanged(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first, second = _report(kind), _report(kind)
    assert first == second
    digest = hashlib.sha256(first).hexdigest()
    assert digest == _golden().get(kind), (
        f"the report of the {kind} trace changed (sha256 {digest}); if that is intended, "
        "regenerate tests/golden/report_html.sha256 (sha256 of the page, then the name, one "
        "per line): python tests/test_report_golden.py"
    )


def test_another_hash_seed_gives_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    here = _report("naive")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    code = "import sys, test_report_golden as g; sys.stdout.buffer.write(g._report('naive'))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, check=True
    )
    assert done.stdout.endswith(here)  # after the command's one line on stdout


def _regenerate() -> None:
    """Rewrite the golden digests from this checkout's reports."""
    import tempfile  # noqa: PLC0415

    lines = []
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        for kind in NAMES:
            lines.append(f"{hashlib.sha256(_report(kind)).hexdigest()}  {kind}\n")
    GOLDEN.write_text("".join(lines), encoding="utf-8")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))
    _regenerate()
