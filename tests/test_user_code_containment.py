"""A user's service or invariant can neither end, interrupt nor hang txcheck, nor slip it
a malformed result: whatever it raises (``SystemExit(0)``, its own ``KeyboardInterrupt``,
a ``BaseException`` of its own), whatever it returns or yields that breaks its protocol,
and however long it loops, every command that runs it (explore, replay, scenarios,
evaluate, ``validate --world``) exits 2 with one line naming it. Before, ``SystemExit(0)``
made them exit 0 with no output, a ``KeyboardInterrupt`` exit 130, a malformed receipt
end in a traceback, and a loop hang. A real Ctrl-C is still an interrupt (130).

The hostile parts are in ``tests/hostile_user_code.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_user_code import (
    INVARIANT_ESCAPES,
    INVARIANT_SHAPES,
    SERVICE_ESCAPES,
    SERVICE_SHAPES,
    SOURCE,
)

from txcheck.cli import main
from txcheck.exploration.usercode.loading import load_invariants, load_services
from txcheck.exploration.usercode.watchdog import Bounded, bounded_invariant, bounded_services
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.sim.checkout import CHECKOUT

ROOT = Path(__file__).resolve().parent.parent
GIFT_CONTRACT = str(ROOT / "examples" / "custom_service" / "contract.json")
CHECKOUT_CONTRACT = str(ROOT / "examples" / "checkout" / "contract.json")
CASES = str(ROOT / "examples" / "evaluate" / "cases.jsonl")
TRACE = str(ROOT / "examples" / "mutants" / "traces" / "mutant-key-per-attempt.json")
GIFT = {
    "order_id": "ord_1",
    "customer_id": "cus_1",
    "amount": 500,
    "currency": "USD",
    "idempotency_key": "key-gift-0001",
}
# one search, quickly: the first run of the first plan set meets the hostile code
EXPLORE = ("--policy", "guarded", "--engine", "systematic", "--max-faults", "0", "--no-seeds")


@pytest.fixture(autouse=True)
def _hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "hostile_code.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _validate_world(tmp_path: Path) -> list[str]:
    """``validate`` of one gift-card call with ``--world``: the business level runs it on
    the services named after it."""
    proposal = tmp_path / "gift.json"
    call = {"name": "send_gift_card", "arguments": json.dumps(GIFT)}
    proposal.write_text(
        json.dumps({"tool_calls": [{"id": "c1", "type": "function", "function": call}]}),
        encoding="utf-8",
    )
    world = str(ROOT / "examples" / "checkout" / "world.json")
    return ["validate", GIFT_CONTRACT, str(proposal), "--world", world]


def _one_line(err: str, command: str, kind: str) -> str:
    assert err.count("\n") == 1, err
    assert err.startswith(f"txcheck {command}: {kind} error: "), err
    return err


# -- SystemExit(0) through every command that runs user code ----------------------------------


def test_explore_reports_a_service_that_exits(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explore", "--contract", GIFT_CONTRACT, "--services", "hostile_code:EXITS", *EXPLORE]
    code, _, err = _run(capsys, *argv)
    assert code == 2
    line = _one_line(err, "explore", "service")
    assert "service 'gift_cards' raised handling send_gift_card (call_1): SystemExit: 0" in line


def test_explore_reports_an_invariant_that_exits(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "explore", "--invariants", "hostile_code:exits", *EXPLORE)
    assert code == 2
    assert "invariant 'exits' raised SystemExit: 0 (after step 0)" in _one_line(
        err, "explore", "invariant"
    )


def test_replay_reports_an_invariant_that_exits(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["replay", TRACE, "--policy", "guarded", "--invariants", "hostile_code:exits"]
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert "invariant 'exits' raised SystemExit: 0" in _one_line(err, "replay", "invariant")


def test_scenarios_writes_the_runs_done_and_says_it_stopped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["scenarios", "--out", "results", "--invariants", "hostile_code:exits", "--json"]
    code, out, err = _run(capsys, *argv)
    assert code == 2
    line = _one_line(err, "scenarios", "invariant")
    assert "invariant 'exits' raised SystemExit: 0" in line
    assert "stopped after 1 of 19 runs, those written to results" in line
    written = (tmp_path / "results" / "raw_results.jsonl").read_text("utf-8").splitlines()
    assert len(written) == 1 and "SystemExit" in json.loads(written[0])["error"]
    assert json.loads(out) == json.loads((tmp_path / "results" / "summary.json").read_text())


def test_scenarios_reports_a_service_that_exits_building_its_state(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["scenarios", "--out", "results", "--services", "hostile_code:STATE_EXITS"]
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert "raised building its state from the world fixture: SystemExit: 0" in err


def test_evaluate_prints_what_it_evaluated_and_says_it_stopped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["evaluate", CHECKOUT_CONTRACT, CASES, "--invariants", "hostile_code:exits", "--json"]
    code, out, err = _run(capsys, *argv)
    assert code == 2
    line = _one_line(err, "evaluate", "invariant")
    assert "invariant 'exits' raised SystemExit: 0" in line
    assert "(stopped after 0 case(s); the report covers them)" in line
    assert json.loads(out)["cases"] == []


def test_validate_world_reports_a_service_that_exits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _run(capsys, *_validate_world(tmp_path), "--services", "hostile_code:EXITS")
    assert code == 2
    assert "service 'gift_cards' raised handling send_gift_card (c1): SystemExit: 0" in err


# -- anything else that is not an Exception, and shapes ---------------------------------------


@pytest.mark.parametrize(("service", "problem"), SERVICE_ESCAPES + SERVICE_SHAPES)
def test_validate_world_names_the_service_and_what_it_did(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, service: str, problem: str
) -> None:
    code, _, err = _run(capsys, *_validate_world(tmp_path), "--services", f"hostile_code:{service}")
    assert code == 2
    line = _one_line(err, "validate", "service")
    assert "service 'gift_cards' " in line and problem.format(call="c1") in line


@pytest.mark.parametrize(("service", "problem"), SERVICE_ESCAPES + SERVICE_SHAPES)
def test_explore_names_the_service_and_what_it_did(
    capsys: pytest.CaptureFixture[str], service: str, problem: str
) -> None:
    argv = ["explore", "--contract", GIFT_CONTRACT, "--services", f"hostile_code:{service}"]
    code, _, err = _run(capsys, *argv, *EXPLORE)
    assert code == 2
    assert problem.format(call="call_1") in _one_line(err, "explore", "service")


@pytest.mark.parametrize(("invariant", "problem"), INVARIANT_ESCAPES + INVARIANT_SHAPES)
def test_explore_names_the_invariant_and_what_it_did(
    capsys: pytest.CaptureFixture[str], invariant: str, problem: str
) -> None:
    code, _, err = _run(capsys, "explore", "--invariants", f"hostile_code:{invariant}", *EXPLORE)
    assert code == 2
    assert problem in _one_line(err, "explore", "invariant")


def test_the_message_of_what_user_code_raised_is_shown_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = [*_validate_world(tmp_path), "--services", "hostile_code:EXITS_WITH_ESCAPES"]
    code, _, err = _run(capsys, *argv)
    assert code == 2
    assert "\x1b" not in err and "\x07" not in err
    assert "SystemExit: \\x1b[2J\\x1b]0;owned\\x07" in err


def test_a_real_ctrl_c_inside_a_service_is_still_an_interrupt(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The one ``KeyboardInterrupt`` that is not the service's: SIGINT from outside (here
    the service signals its own process, as a terminal would). Python's own SIGINT handler
    first, as in a fresh process: in some orders of the suite another handler was still
    installed here (the CLI then keeps it, and the signal did not interrupt)."""
    found = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        code = main([*_validate_world(tmp_path), "--services", "hostile_code:SENDS_SIGINT"])
        assert code == 130, f"SIGINT's handler before the test: {found!r}"
        assert capsys.readouterr().err == "txcheck validate: interrupted\n"
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, found)


# -- loops: the watchdog, in the command and on Dask workers ----------------------------------


def _looped_in(tmp_path: Path) -> list[int]:
    return [int(pid) for pid in (tmp_path / "looping.pids").read_text("utf-8").split()]


@pytest.mark.parametrize("engine", ["systematic", "random", "hypothesis"])
@pytest.mark.parametrize(
    "looping",
    [
        ("--services=hostile_code:LOOPS", "service", "handling send_gift_card ran 0.2s"),
        ("--invariants=hostile_code:loops", "invariant", "invariant 'loops' ran 0.2s"),
    ],
)
def test_a_looping_service_or_invariant_is_stopped_once(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, engine: str, looping: tuple[str, ...]
) -> None:
    """Stopped by the watchdog like a policy that never yields, and not run again (to
    confirm or shrink it, or in another plan set), which would hang again."""
    option, kind, problem = looping
    argv = ["explore", "--contract", GIFT_CONTRACT, option, "--policy", "guarded"]
    argv += ["--engine", engine, "--no-seeds", "--seed", "1", "--policy-timeout", "0.2"]
    code, _, err = _run(capsys, *argv)
    assert code == 2
    line = _one_line(err, "explore", kind)
    assert problem in line and "without returning (an endless loop?)" in line
    assert _looped_in(tmp_path) == [os.getpid()]


@pytest.mark.parametrize(
    ("option", "problem"),
    [
        ("--services=hostile_code:LOOPS", "service 'gift_cards' handling send_gift_card ran"),
        ("--invariants=hostile_code:loops", "invariant 'loops' ran 0.5s without returning"),
    ],
)
def test_a_looping_service_or_invariant_is_stopped_on_dask_workers(
    tmp_path: Path, option: str, problem: str
) -> None:
    """On a worker the code runs in a thread, where SIGALRM cannot reach: the watchdog's
    thread stops it there (without it, the command would wait for the worker forever)."""
    pytest.importorskip("distributed")
    argv = [sys.executable, "-m", "txcheck", "explore", "--contract", GIFT_CONTRACT, option]
    argv += ["--policy", "guarded", "--engine", "random", "--no-seeds", "--max-examples", "4"]
    argv += ["--seed", "1", "--policy-timeout", "0.5", "--workers", "2"]
    process = subprocess.Popen(
        argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _, err = process.communicate(timeout=300)  # a hang guard, not a measurement
    assert process.returncode == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert problem in err
    assert [pid for pid in _looped_in(tmp_path) if pid != process.pid], "no worker ran it"


def test_txchecks_own_services_and_invariants_run_unbounded() -> None:
    """The watchdog costs system calls at every call: only the user's code pays them."""
    assert bounded_services(CHECKOUT, 0.2) is CHECKOUT
    assert all(bounded_invariant(i, 0.2) is i for i in DEFAULT_INVARIANTS)
    (mine,) = load_services(["hostile_code:LOOPS"], timeout=0.2)
    assert all(isinstance(h, Bounded) for h in mine.handlers.values())
    (check,) = load_invariants(["hostile_code:loops"], timeout=0.2)
    assert isinstance(check.check, Bounded) and check.check.seconds == 0.2
