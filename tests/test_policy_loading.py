"""Loading user policies safely: each way it can fail is reported as such."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.strategies import checkout_calls
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.usercode.loading import load_policy
from txcheck.exploration.usercode.watchdog import WatchedPolicy, watchdog_available
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.errors import InputError, PolicyError
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import Guarded, builtin_policy

PLAN = Plan.of(*checkout_calls("ord_1"))

MODULE = """
from txcheck.models.sim.policies.guarded import Guarded
from txcheck.models.sim.requests import JournalRead


class Mine(Guarded):
    name = "mine"


INSTANCE = Mine()
NOT_A_POLICY = 42


class Broken(Guarded):
    def __init__(self):
        raise RuntimeError("no config")


class Raises(Guarded):
    name = "raises"

    def orchestrate(self, ctx):
        yield JournalRead()
        raise KeyError("lost")


class Loops(Guarded):
    name = "loops"

    def orchestrate(self, ctx):
        yield JournalRead()
        while True:
            pass
"""


@pytest.fixture(autouse=True)
def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "user_policies.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "explodes_on_import.py").write_text("raise OSError('disk')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))


def _execute(policy: object) -> object:
    return execute(
        Target(
            policy=policy,
            contract=default_contract(),
            fixture=default_fixture(),
            invariants=DEFAULT_INVARIANTS,
        ),
        [PLAN],
    )


def test_builtin_names_load_the_builtin_policy() -> None:
    loaded = load_policy("guarded")
    assert loaded.builtin and loaded.spec == "guarded" and type(loaded.policy) is Guarded


@pytest.mark.parametrize("spec", ["user_policies:Mine", "user_policies:INSTANCE"])
def test_import_paths_load_a_class_or_an_instance(spec: str) -> None:
    loaded = load_policy(spec)
    assert not loaded.builtin and loaded.spec == spec
    assert isinstance(loaded.policy, WatchedPolicy) and loaded.policy.name == spec
    assert load_policy(spec, timeout=None).policy.name == "mine"


def test_a_policy_object_is_taken_as_is() -> None:
    loaded = load_policy(Guarded(), timeout=None)
    assert loaded.spec == "guarded" and isinstance(loaded.policy, Guarded)


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("not a spec", InputError, "must be a built-in name"),
        ("nosuchmodule_txcheck:Policy", PolicyError, "cannot import policy module"),
        ("explodes_on_import:Policy", PolicyError, "raised OSError: disk"),
        ("user_policies:Missing", PolicyError, "has no attribute 'Missing'"),
        ("user_policies:NOT_A_POLICY", PolicyError, "must be a Policy subclass or instance"),
        ("user_policies:Broken", PolicyError, "raised RuntimeError: no config"),
    ],
)
def test_each_loading_failure_is_one_line(spec: str, error: type, message: str) -> None:
    with pytest.raises(error) as caught:
        load_policy(spec)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_policy_that_raises_ends_the_execution_with_an_error() -> None:
    execution = _execute(load_policy("user_policies:Raises").policy)
    assert "policy 'user_policies:Raises' raised in orchestrator-1" in execution.error  # type: ignore[attr-defined]
    assert "KeyError" in execution.error  # type: ignore[attr-defined]


def test_a_policy_that_never_yields_is_stopped_outside_the_main_thread_too() -> None:
    """A Dask worker runs its items in a thread, where SIGALRM cannot reach."""
    results: list[Any] = []
    policy = load_policy("user_policies:Loops", timeout=0.2).policy
    worker = threading.Thread(target=lambda: results.append(_execute(policy)))
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive()
    (execution,) = results
    assert execution.hung and "ran 0.2s in orchestrate (orchestrator-1) without" in execution.error
    # ...and a well-behaved policy then runs with no alarm left over.
    calm = threading.Thread(
        target=lambda: results.append(_execute(load_policy("user_policies:Mine").policy))
    )
    calm.start()
    calm.join(timeout=60)
    assert results[1].error is None


@pytest.mark.skipif(not watchdog_available(), reason="needs SIGALRM in the main thread")
def test_a_policy_that_never_yields_is_stopped_by_the_watchdog() -> None:
    execution = _execute(load_policy("user_policies:Loops", timeout=0.2).policy)
    error = execution.error  # type: ignore[attr-defined]
    assert error is not None and "without yielding a request" in error
    assert "orchestrate (orchestrator-1)" in error


def test_the_watchdog_changes_nothing_for_a_well_behaved_policy() -> None:
    watched = _execute(WatchedPolicy(builtin_policy("guarded"), seconds=5))  # type: ignore[arg-type]
    plain = _execute(builtin_policy("guarded"))
    assert [s.to_json() for s in watched.steps] == [s.to_json() for s in plain.steps]  # type: ignore[attr-defined]
    assert watched.ok  # type: ignore[attr-defined]
