"""The HTML reports in a real browser: headless Chromium opens each one from disk, logs no
console message (a blocked style, script or fetch under the page's Content-Security-Policy
is one) and draws it, saved as a screenshot in the test's temporary folder.

Skipped, with the reason, only where no Chromium is installed; ``.ci/run`` installs
Debian's ``chromium``. A page that breaks its own policy is the positive control: the
check must see its console messages.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from report_traces import KINDS, PLAN_FILE, write

from txcheck.cli import main

CHROMIUM = next(
    (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no headless Chromium here (.ci/run installs Debian's chromium)"
)
PNG = b"\x89PNG\r\n\x1a\n"


def _open(page: Path, shot: Path) -> list[str]:
    """Open ``page`` in headless Chromium, save its screenshot as ``shot``; the console
    messages it logged."""
    assert CHROMIUM is not None
    profile = shot.parent / f"{shot.stem}-profile"
    argv = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu"]
    argv += ["--disable-dev-shm-usage", "--no-first-run", f"--user-data-dir={profile}"]
    argv += ["--enable-logging=stderr", "--v=0", "--window-size=1280,1600"]
    argv += [f"--screenshot={shot}", page.resolve().as_uri()]
    env = {**os.environ, "HOME": str(shot.parent)}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


def _assert_drawn(shot: Path) -> None:
    data = shot.read_bytes()
    assert data.startswith(PNG) and len(data) > 10_000  # a page, not a blank


def test_a_page_that_breaks_its_own_policy_shows_in_the_console(tmp_path: Path) -> None:
    """The positive control: an inline script and an image under ``default-src 'none'``."""
    page = tmp_path / "bad.html"
    page.write_text(
        '<!doctype html><html><head><meta http-equiv="Content-Security-Policy" '
        "content=\"default-src 'none'\"></head><body><p>x</p>"
        '<script>console.error("boom")</script><img src="http://127.0.0.1:9/x.png">'
        "</body></html>",
        encoding="utf-8",
    )
    console = _open(page, tmp_path / "bad.png")
    assert any("Content Security Policy" in line for line in console), console


@pytest.mark.parametrize("kind", KINDS)
def test_each_counterexample_report_opens_clean(tmp_path: Path, kind: str) -> None:
    trace = write(kind, tmp_path)
    page = tmp_path / f"{kind}.html"
    assert main(["report", str(trace), "--html", str(page)]) == 0
    shot = tmp_path / f"{kind}.png"
    assert _open(page, shot) == []
    _assert_drawn(shot)


def test_the_coverage_page_of_a_pass_opens_clean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "pass.html"
    argv = ["explore", "--policy", "guarded", "--plan", str(PLAN_FILE), "--seed", "1"]
    argv += ["--engine", "systematic", "--max-faults", "1", "--html-out", str(page)]
    assert main([*argv, "--trace-out", str(tmp_path / "trace.json")]) == 0
    capsys.readouterr()
    shot = tmp_path / "pass.png"
    assert _open(page, shot) == []
    _assert_drawn(shot)
