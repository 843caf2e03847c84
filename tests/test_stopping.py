"""Stopping a search from outside: SIGINT and SIGTERM keep what was found; a policy that
defeats the watchdog meets the hard deadline. Each runs ``txcheck explore`` in a child
process, since signals and ``os._exit`` are what is being tested."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

if not hasattr(signal, "setitimer"):  # pragma: no cover - POSIX only
    pytest.skip("needs POSIX signals", allow_module_level=True)

# User invariants that send the process a signal: the first time any built-in safety
# invariant fails (the search has a counterexample and Hypothesis starts shrinking it),
# or after a number of checks (the search is under way and has found nothing). The
# signal is read from the environment so one module serves every test.
INVARIANTS = """
import os
import signal

from txcheck.invariants import DEFAULT_INVARIANTS, always

SIGNAL = getattr(signal, os.environ["STOP_SIGNAL"])
AFTER = int(os.environ.get("STOP_AFTER", "0"))
SEEN = [0, False]


@always(name="signal_on_first_failure")
def on_first_failure(view):
    \"\"\"The built-in safety invariants; signals the process the first time one fails.\"\"\"
    problems = [p for check in DEFAULT_INVARIANTS if check.is_safety for p in check(view)]
    if problems and not SEEN[1]:
        SEEN[1] = True
        os.kill(os.getpid(), SIGNAL)
    return problems


@always(name="signal_after_some_checks")
def after_some_checks(view):
    \"\"\"Never fails; signals the process after STOP_AFTER checks.\"\"\"
    SEEN[0] += 1
    if SEEN[0] == AFTER:
        os.kill(os.getpid(), SIGNAL)
    return []
"""

POLICIES = """
import signal

from txcheck.invariants import always
from txcheck.models.sim.policies.guarded import Guarded
from txcheck.models.sim.requests import JournalRead


class SwallowsEverything(Guarded):
    def orchestrate(self, ctx):
        yield JournalRead()
        while True:
            try:
                while True:
                    pass
            except:  # noqa: E722 - on purpose: it swallows the watchdog's alarm
                pass


class IgnoresAlarm(Guarded):
    def orchestrate(self, ctx):
        yield JournalRead()
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while True:
            pass


@always
def swallows_everything(view):
    \"\"\"Never returns, and swallows the watchdog's alarm.\"\"\"
    while True:
        try:
            while True:
                pass
        except:  # noqa: E722 - on purpose: it swallows the watchdog's alarm
            pass
"""


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "stop_invariants.py").write_text(INVARIANTS, encoding="utf-8")
    (tmp_path / "stuck_policies.py").write_text(POLICIES, encoding="utf-8")
    return tmp_path


def _explore(
    workdir: Path, *argv: str, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "txcheck", "explore", *argv],
        cwd=workdir,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_while_shrinking_keeps_the_counterexample(
    workdir: Path, name: str, code: int
) -> None:
    done = _explore(
        workdir,
        *("--policy", "control-fresh-key", "--engine", "hypothesis", "--no-seeds"),
        *("--invariants", "stop_invariants:on_first_failure", "--json"),
        env={"STOP_SIGNAL": name},
    )
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    assert "txcheck explore: interrupted (the best counterexample so far is above)" in done.stderr
    result = json.loads(done.stdout)
    assert result["interrupted"] is True
    found = result["counterexample"]
    assert found is not None and found["trace"] == "txcheck-counterexample.json"
    assert "signal_on_first_failure" in {v["invariant"] for v in found["violations"]}
    trace = json.loads((workdir / "txcheck-counterexample.json").read_text(encoding="utf-8"))
    assert trace["policy"] == "control-fresh-key"
    assert trace["invariants"] == ["stop_invariants:on_first_failure"]
    # the example database kept the failure: the next run tries it first
    saved = [p for p in (workdir / ".txcheck" / "examples").rglob("*") if p.is_file()]
    assert saved
    assert not (workdir / ".hypothesis").exists()
    again = _explore(
        workdir,
        *("--policy", "control-fresh-key", "--engine", "hypothesis", "--no-seeds"),
        *("--invariants", "stop_invariants:on_first_failure", "--json"),
        env={"STOP_SIGNAL": "SIGCHLD"},  # ignored by default: this run is not interrupted
    )
    assert again.returncode == 1, again.stderr
    notes = json.loads(again.stdout)["engines"][0]["notes"]
    assert [n for n in notes if "first failure at example 1 " in f"{n} "], notes


def test_a_signal_before_anything_is_found_is_inconclusive_not_a_pass(workdir: Path) -> None:
    done = _explore(
        workdir,
        *("--policy", "guarded", "--seed", "0"),
        *("--invariants", "stop_invariants:after_some_checks", "--json"),
        env={"STOP_SIGNAL": "SIGINT", "STOP_AFTER": "3000"},
    )
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("txcheck explore: interrupted")
    result = json.loads(done.stdout)
    assert result["counterexample"] is None and result["interrupted"] is True
    verdict = result["verdict"]
    assert verdict["outcome"] == "inconclusive"
    assert "the search was interrupted" in verdict["unexercised"]
    assert not (workdir / "txcheck-counterexample.json").exists()


@pytest.mark.parametrize("policy", ["SwallowsEverything", "IgnoresAlarm"])
def test_a_policy_that_defeats_the_watchdog_meets_the_hard_deadline(
    workdir: Path, policy: str
) -> None:
    done = _explore(
        workdir,
        *("--policy", f"stuck_policies:{policy}", "--policy-timeout", "0.2", "--seed", "0"),
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert line.startswith(f"txcheck explore: policy error: policy 'stuck_policies:{policy}' ")
    assert "stopped by the hard deadline" in line


def test_an_invariant_that_defeats_the_watchdog_meets_the_hard_deadline(workdir: Path) -> None:
    """User invariants run under the same limit, watched by the same hard deadline, which
    names the invariant (before, nothing bounded them: the search hung)."""
    done = _explore(
        workdir,
        *("--policy", "guarded", "--invariants", "stuck_policies:swallows_everything"),
        *("--policy-timeout", "0.2", "--seed", "0"),
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    line = done.stderr.strip()
    assert line.startswith(
        "txcheck explore: invariant error: invariant 'swallows_everything' has run "
    )
    assert "stopped by the hard deadline" in line
