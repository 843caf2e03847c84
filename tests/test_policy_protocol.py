"""A user policy that breaks the request protocol or tries to leave the process is a
policy error (exit 2, one line, the trace up to that point), never a crash, an exit 0 or
a counterexample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from txcheck.cli import main
from txcheck.exploration.usercode.loading import load_policy
from txcheck.models.errors import InputError

POLICIES = """
from txcheck.models.sim.policies.base import Policy
from txcheck.models.sim.policies.guarded import Guarded
from txcheck.models.sim.requests import Invoke, JournalRead


class YieldsNone(Guarded):
    def orchestrate(self, ctx):
        yield None


class BadInvoke(Guarded):
    def orchestrate(self, ctx):
        yield Invoke(tool=None, arguments="x")


class BadInvokeWithId(Guarded):
    # well-formed enough to get past the constructor and reach the sandbox
    def orchestrate(self, ctx):
        yield Invoke(tool=None, arguments="x", call_id="call_1")


class BadArguments(Guarded):
    def orchestrate(self, ctx):
        yield Invoke(tool="create_order", arguments="x", call_id="call_1")


class NoOrchestrate:
    name = "no-orchestrate"


class PolicyWithoutOrchestrate(Policy):
    name = "without-orchestrate"


class NotAGenerator(Guarded):
    def orchestrate(self, ctx):
        return [JournalRead()]


class Exits(Guarded):
    def orchestrate(self, ctx):
        yield JournalRead()
        raise SystemExit(0)


class ExitsInInit(Guarded):
    def __init__(self):
        raise SystemExit(0)


class Interrupts(Guarded):
    def orchestrate(self, ctx):
        yield JournalRead()
        raise KeyboardInterrupt


class Custom(BaseException):
    pass


class RaisesCustom(Guarded):
    def orchestrate(self, ctx):
        yield JournalRead()
        raise Custom("boom")


class RaisesGeneratorExit(Guarded):
    def orchestrate(self, ctx):
        yield JournalRead()
        raise GeneratorExit


class ExitsStarting(Guarded):
    def orchestrate(self, ctx):  # not a generator function: it runs when called
        raise SystemExit(0)


class IgnoresClose(Guarded):
    # Guarded, but yields its request again when the checker closes it (a crash)
    def orchestrate(self, ctx):
        inner = super().orchestrate(ctx)
        response = None
        while True:
            try:
                request = inner.send(response)
            except StopIteration:
                return
            while True:
                try:
                    response = yield request
                    break
                except GeneratorExit:
                    continue


RUNS = [0]


class Stuck(Guarded):
    # Loops without yielding; writes one line each time it gets stuck, so a test can count
    # how often the watchdog had to stop it.
    def orchestrate(self, ctx):
        yield JournalRead()
        with open("stuck.log", "a", encoding="utf-8") as log:
            log.write("stuck\\n")
        while True:
            pass


class Changes(Guarded):
    # Keeps state between runs: every third run starts with an extra read.
    def orchestrate(self, ctx):
        RUNS[0] += 1
        if RUNS[0] % 3 == 0:
            yield JournalRead()
        yield from super().orchestrate(ctx)
"""


@pytest.fixture(autouse=True)
def _policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_policies.py").write_text(POLICIES, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))


def _explore(capsys: pytest.CaptureFixture[str], policy: str, *argv: str) -> tuple[int, str]:
    code = main(
        ["explore", "--policy", f"broken_policies:{policy}", "--seed", "0", *argv, "--json"]
    )
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err


@pytest.mark.parametrize(
    ("policy", "problem"),
    [
        ("YieldsNone", "yielded None, which is not a request"),
        ("BadInvoke", "raised in orchestrator-1 at step 0: TypeError"),
        ("BadInvokeWithId", "yielded Invoke with tool None and call_id 'call_1'"),
        ("BadArguments", "yielded Invoke of 'create_order' with arguments 'x' (must be a JSON"),
        ("NotAGenerator", "must be a generator"),
        ("PolicyWithoutOrchestrate", "raised starting orchestrator-1: NotImplementedError"),
        ("Exits", "raised SystemExit(0)"),
        ("Interrupts", "raised KeyboardInterrupt()"),
        ("RaisesCustom", "raised in orchestrate (orchestrator-1): Custom: boom"),
        ("RaisesGeneratorExit", "raised GeneratorExit() in orchestrate (orchestrator-1)"),
        ("ExitsStarting", "raised starting orchestrator-1: SystemExit: 0"),
        ("IgnoresClose", "did not end when closed (generator ignored GeneratorExit)"),
    ],
)
def test_a_protocol_break_is_a_policy_error_with_its_trace(
    capsys: pytest.CaptureFixture[str], policy: str, problem: str
) -> None:
    code, err = _explore(capsys, policy, "--trace-out", "broken.json")
    assert code == 2
    assert err.startswith("txcheck explore: policy error: ")
    assert f"'broken_policies:{policy}'" in err  # the policy the user named, not its base
    assert problem in err
    assert "(trace up to that point: broken.json)" in err
    trace = json.loads(Path("broken.json").read_text(encoding="utf-8"))
    assert trace["policy"] == f"broken_policies:{policy}"


def test_the_human_report_calls_a_policy_error_a_policy_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--seed", "0", "--trace-out", "broken.json"]
    assert main(["explore", "--policy", "broken_policies:BadInvokeWithId", *argv]) == 2
    out, err = capsys.readouterr()
    assert out.startswith("Policy error: policy broken_policies:BadInvokeWithId raised an error")
    assert "Policy error for policy broken_policies:BadInvokeWithId: policy_error" in out
    assert "Counterexample" not in out and "Traceback" not in err


def test_the_json_verdict_of_a_policy_error_is_an_error_not_a_counterexample(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--seed", "0", "--trace-out", "broken.json", "--json"]
    assert main(["explore", "--policy", "broken_policies:BadInvokeWithId", *argv]) == 2
    out, err = capsys.readouterr()
    verdict = json.loads(out)["verdict"]
    assert (verdict["outcome"], verdict["error_kind"]) == ("error", "policy")
    assert "policy error" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("policy", "problem"),
    [
        ("NoOrchestrate", "must be a Policy subclass or instance, or an asyncio orchestrator"),
        ("ExitsInInit", "creating policy 'broken_policies:ExitsInInit' raised SystemExit"),
    ],
)
def test_a_policy_that_cannot_be_made_is_a_policy_error(
    capsys: pytest.CaptureFixture[str], policy: str, problem: str
) -> None:
    code, err = _explore(capsys, policy)
    assert code == 2
    assert err.startswith("txcheck explore: policy error: ") and problem in err
    assert not Path("txcheck-counterexample.json").exists()


def test_a_policy_that_changes_between_runs_is_a_policy_error_under_auto(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = _explore(capsys, "Changes", "--time-budget", "60")
    assert code == 2
    assert "txcheck explore: policy error: " in err
    assert "behaved differently on the same choices" in err
    assert "must be deterministic" in err


@pytest.mark.parametrize("engine", ["systematic", "hypothesis", "random", "auto"])
def test_the_watchdog_stops_a_stuck_policy_once_not_again_in_a_rerun(
    capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """The run the watchdog stopped is the policy error: it is not executed again (to
    shrink or replay it), which would double the time a user waits for the error."""
    code, err = _explore(
        capsys, "Stuck", "--engine", engine, "--no-seeds", "--policy-timeout", "0.5"
    )
    assert code == 2
    assert "ran 0.5s in orchestrate (orchestrator-1) without yielding a request" in err
    # entered once: the stopped run was not executed again (the log has one line)
    assert Path("stuck.log").read_text(encoding="utf-8") == "stuck\n"


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf", "1e400"])
def test_a_policy_timeout_that_cannot_be_kept_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], timeout: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["explore", "--policy-timeout", timeout])
    assert stopped.value.code == 2
    assert "--policy-timeout" in capsys.readouterr().err


@pytest.mark.parametrize("seconds", [0.0, -1.0, float("nan"), float("inf"), 1e-6])
def test_load_policy_refuses_a_timeout_the_watchdog_cannot_keep(seconds: float) -> None:
    with pytest.raises(InputError, match="policy time limit"):
        load_policy("broken_policies:Exits", timeout=seconds)
