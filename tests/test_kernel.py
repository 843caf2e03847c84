"""The exploration kernel: one Target every engine takes whole, one Session that checks
invariants, vocabularies as types, and the public API."""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import attrs
import pytest

import txcheck
from tests.checkout_runs import PLAN
from txcheck import (
    CHECKOUT,
    Action,
    Bounds,
    Budget,
    Choice,
    FaultKind,
    InputError,
    Kind,
    Outcome,
    Part,
    RunView,
    Session,
    Target,
    always,
    builtin_policy,
    eventually,
    explore,
)
from txcheck.exploration.engines.auto import ENGINES
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import EngineReport, Tally
from txcheck.exploration.kernel.target import Deadline

ROOT = Path(__file__).resolve().parent.parent


def _gift_cards() -> ModuleType:
    path = ROOT / "examples" / "custom_service" / "gift_cards.py"
    spec = importlib.util.spec_from_file_location("gift_cards_for_kernel", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GIFT = _gift_cards()


def _user_world_target(**budget: object) -> Target:
    naive = builtin_policy("naive")
    assert naive is not None
    return Target(
        policy=naive,
        contract=GIFT.contract(),
        fixture=GIFT.fixture(),
        services=(CHECKOUT, GIFT.GIFT_CARDS),
        invariants=(GIFT.one_gift_card_per_order,),
        plans=((GIFT.PLAN,),),
        bounds=Bounds(max_faults=2),
        budget=Budget(seed=0, database=None, **budget),  # type: ignore[arg-type]
    )


# -- a user's world reaches every engine ----------------------------------------------------


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_custom_world_reaches_every_engine_which_confirms_and_shrinks_under_it(
    engine: str,
) -> None:
    """Only the user's gift-card service can send a second gift card; its invariant reads
    that service's state. Each engine must find the bug, confirm it and shrink it to the
    one deviation it needs (the send's response lost, then naive retries under a new key),
    all in worlds that hold the user's service."""
    result = explore(_user_world_target(max_examples=300), engine=engine)
    found = result.counterexample
    assert found is not None, [r.to_json() for r in result.reports]
    assert found.invariant == "one_gift_card_per_order"
    assert found.deviations == 1
    cards = found.execution.run.world.state["gift_cards"]["cards"]
    assert len(cards) == 2


def test_without_the_users_service_the_gift_card_tools_get_generic_behaviour() -> None:
    """The control: without the user's service, the annotated gift-card tools are served
    by the generic services, which know no gift-card state."""
    target = attrs.evolve(_user_world_target(), services=(CHECKOUT,), invariants=())
    execution = Session(target, (GIFT.PLAN,)).finish()
    state = execution.run.world.state
    assert "gift_cards" not in state
    assert [e["tool"] for e in state["generic"]["effects"].values()] == ["send_gift_card"]


# -- one loop checks invariants -------------------------------------------------------------


def _counting(reads: tuple[Part, ...] | None) -> tuple[object, list[int]]:
    calls: list[int] = []

    def probe(view: RunView) -> Iterator[str]:
        """Counts its evaluations; never fails."""
        calls.append(len(view.world.operations))
        yield from ()

    return always(probe, name="probe", reads=reads), calls


def test_a_safety_invariant_that_declares_its_reads_is_skipped_while_they_do_not_change() -> None:
    declared, declared_calls = _counting((Part.SERVICES,))
    undeclared, undeclared_calls = _counting(None)
    guarded = builtin_policy("guarded")
    assert guarded is not None
    steps = {}
    for name, check in (("declared", declared), ("undeclared", undeclared)):
        session = Session(Target(policy=guarded, invariants=(check,)), (PLAN,))  # type: ignore[arg-type]
        execution = session.finish()
        assert execution.ok and execution.quiesced
        steps[name] = len(execution.steps)
    assert len(undeclared_calls) == steps["undeclared"]  # after every step
    # only after the first step and the four commits of the checkout (the reads)
    assert len(declared_calls) == 5 < len(undeclared_calls)


def test_a_liveness_invariant_is_evaluated_at_quiescence_even_when_it_declares_reads() -> None:
    @eventually(reads=(Part.CLAIMS,))
    def never_quiet(view: RunView) -> Iterator[str]:
        """Fails whenever a run quiesces."""
        yield "quiet"

    guarded = builtin_policy("guarded")
    assert guarded is not None
    execution = Session(Target(policy=guarded, invariants=(never_quiet,)), (GIFT.PLAN,)).finish()
    assert execution.quiesced and [f.name for f in execution.failures] == ["never_quiet"]
    assert execution.failures[0].kind is Kind.LIVENESS


def test_there_is_one_invariant_checking_loop() -> None:
    """Only the session calls an invariant on a view, in the package."""
    callers = []
    for path in sorted((ROOT / "checker").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == "view"
            ):
                callers.append(str(path.relative_to(ROOT)))
    assert callers == ["checker/exploration/kernel/session.py"]


# -- settings and vocabularies -------------------------------------------------------------


def test_a_target_refuses_what_is_not_an_invariant_or_a_usable_bound() -> None:
    guarded = builtin_policy("guarded")
    with pytest.raises(InputError, match="made with @always or @eventually"):
        Target(policy=guarded, invariants=(lambda view: [],))  # type: ignore[arg-type]
    with pytest.raises(InputError, match="'max_faults' must be an integer >= 0"):
        Bounds(max_faults=-1)
    for bad in (float("nan"), float("inf"), 0, -1.0):
        with pytest.raises(InputError, match="'time_budget' must be a finite number"):
            Budget(time_budget=bad)


def test_vocabularies_are_enums_that_hash_like_their_values() -> None:
    choice = Choice("orchestrator-1", "complete", "timeout_before_commit")
    assert choice.action is Action.COMPLETE and choice.outcome is Outcome.TIMEOUT_BEFORE_COMMIT
    assert choice == Choice("orchestrator-1", Action.COMPLETE, Outcome.TIMEOUT_BEFORE_COMMIT)
    assert {"ok": 1}[Outcome.OK] == 1 and Outcome.OK in {"ok"}
    assert json.dumps(choice.to_json()) == (
        '{"actor": "orchestrator-1", "action": "complete", "outcome": "timeout_before_commit"}'
    )
    delivery = Choice("consumer", "deliver", "d_7")
    assert delivery.outcome == "d_7" and not isinstance(delivery.outcome, Outcome)
    assert FaultKind.CRASH.is_fault and not FaultKind.INTERLEAVE.is_fault
    with pytest.raises(ValueError, match="explode"):
        Choice.from_json({"actor": "orchestrator-1", "action": "explode"})


def test_deadline_shares_split_the_time_left_and_an_interrupt_reaches_every_share() -> None:
    deadline = Deadline(100.0)
    share = deadline.share(4)
    left = share.left()
    assert left is not None and 20.0 < left <= 25.0
    assert not share.expired()
    deadline.interrupt()
    assert share.expired() and deadline.within(5.0).expired()


# -- the public API -------------------------------------------------------------------------


def test_every_public_name_resolves() -> None:
    """In a fresh interpreter: resolving every name imports Dask (``local_workers``), which
    must not start its machinery inside the test process."""
    script = (
        "import json, txcheck\n"
        "print(json.dumps([n for n in txcheck.__all__ if not hasattr(txcheck, n)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=240
    )
    assert json.loads(done.stdout) == []
    assert {"Policy", "always", "eventually", "ServiceSet", "Committed", "Rejected"} <= set(
        txcheck.__all__
    )
    assert {"execute", "explore", "load_contract", "validate", "score", "txcheck_testcase"} <= set(
        txcheck.__all__
    )


def test_importing_txcheck_loads_no_engine_library() -> None:
    script = (
        "import json, sys, txcheck, txcheck.models.sim.runner\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('hypothesis', 'rich', 'networkx'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == []


def test_examples_import_only_the_public_api() -> None:
    offending = []
    for path in sorted((ROOT / "examples").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            offending += [
                f"{path.relative_to(ROOT)}:{node.lineno}: {name}"
                for name in names
                if name.split(".")[0] in ("txcheck", "models", "checker", "invariants")
                and name not in ("txcheck", "txcheck.policy")
                and not name.startswith("txcheck.adapters.")  # public, one per framework
            ]
    assert offending == []


def test_the_api_page_example_runs() -> None:
    page = (ROOT / "docs" / "api.md").read_text("utf-8")
    example = page.split("## A complete example", 1)[1].split("```python\n", 1)[1].split("```")[0]
    namespace: dict[str, object] = {}
    exec(compile(example, "docs/api.md", "exec"), namespace)
    result = namespace["result"]
    assert result.counterexample is None  # type: ignore[attr-defined]
    assert result.reports[0].complete  # type: ignore[attr-defined]
    verdict = namespace["verdict"]
    assert verdict.outcome == "pass"  # type: ignore[attr-defined]
    assert verdict.bound == "exhaustive to 1 deviation on all 17 plan sets"  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_each_engine_reports_what_its_tally_counted(name: str) -> None:
    context = SearchContext()
    target = Target(
        policy=builtin_policy("guarded"),
        plans=((PLAN,),),
        bounds=Bounds(max_faults=1),
        budget=Budget(seed=0, database=None, max_examples=5),
    )
    report = ENGINES[name]().explore(target, context)
    assert report.engine == name and report.runs > 0
    assert (report.runs, report.steps, report.writes) == (
        context.tally.runs,
        context.tally.steps,
        context.tally.writes,
    )
    assert report.coverage == context.tally.coverage() and report.seconds > 0


def test_a_tallied_report_keeps_the_fields_only_some_engines_fill() -> None:
    tally = Tally(runs=3, steps=7, writes=2)
    tally.deviation("crash")
    report = EngineReport.tallied("x", tally, started=0.0, notes=["n"], states=5, bound=2)
    assert (report.runs, report.steps, report.writes, report.states, report.bound) == (
        3,
        7,
        2,
        5,
        2,
    )
    assert report.coverage == tally.coverage() and report.notes == ("n",)
    assert report.seconds > 0 and report.counterexample is None
