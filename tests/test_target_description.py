"""One target description (issue 23 item 4): a trace stores it, the command line builds it,
workers receive it, and ``trace_of``, the printed reproduction and ``txcheck_testcase``
take it. Each way round gives the same target: the same failures, the same trace bytes.

The target is the gift-card example (examples/custom_service): a contract and a world of
its own, the user's services and an invariant of theirs by import path, and the built-in
invariants narrowed by ``--skip-invariant``, so every part of a description is in play.
"""

from __future__ import annotations

import json
import pickle
import unittest
from pathlib import Path
from typing import Any

import attrs
import pytest

import txcheck
from examples.custom_service import gift_cards
from txcheck.cli import main
from txcheck.exploration.kernel.description import TargetDescription
from txcheck.exploration.kernel.schedule import Deviations
from txcheck.exploration.kernel.session import Execution, execute
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.spread.shipping import build_target, describe, rebuild
from txcheck.models.errors import InputError
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.fixture import default_fixture
from txcheck.testing import txcheck_testcase
from txcheck.traces.document import dumps_trace, load_trace, trace_of, write_trace
from txcheck.traces.replaying import replay
from txcheck.traces.repro import python_reproduction

MODULE = "examples.custom_service.gift_cards"
SKIPPED = "retries_reuse_key"
DESCRIPTION = TargetDescription(
    policy="naive",
    contract=gift_cards.contract(),
    fixture=gift_cards.fixture(),
    services=(f"{MODULE}:GIFT_CARDS",),
    invariants=(f"{MODULE}:one_gift_card_per_order",),
    skip_invariants=(SKIPPED,),
)
LOST = gift_cards.SCENARIOS["gift card response lost"]
PLANS = ((gift_cards.PLAN,),)


def _run(target: Target) -> Execution:
    return execute(target, [gift_cards.PLAN], chooser=Deviations(LOST))


def _bytes(execution: Execution, description: TargetDescription) -> str:
    document = trace_of(execution, target=description, plans=execution.plans)
    return dumps_trace(document)


@pytest.fixture(scope="module")
def original() -> tuple[Target, Execution]:
    target = build_target(DESCRIPTION, plans=PLANS, bounds=Bounds(max_faults=1))
    execution = _run(target)
    assert [f.name for f in execution.failures] == ["no_double_effect", "one_gift_card_per_order"]
    return target, execution


def test_the_target_built_from_a_description_is_the_one_it_names(
    original: tuple[Target, Execution],
) -> None:
    target, _ = original
    assert target.policy_name == "naive"
    assert [s.name for s in target.services] == ["checkout", "gift_cards"]
    names = [i.name for i in target.invariants]
    assert SKIPPED not in names and names[-1] == "one_gift_card_per_order"
    assert target.contract.tool("send_gift_card") is not None


def test_a_trace_stores_the_description_and_rebuilds_the_same_target(
    original: tuple[Target, Execution], tmp_path: Path
) -> None:
    _, execution = original
    text = _bytes(execution, DESCRIPTION)
    document = json.loads(text)
    # the trace names the target as traces always have: no new key, no renamed one
    assert document["services"] == [f"{MODULE}:GIFT_CARDS"]
    assert document["invariants"] == [f"{MODULE}:one_gift_card_per_order"]
    assert document["skip_invariants"] == [SKIPPED]
    assert "invariants_only" not in document and "stores" not in document
    path = tmp_path / "t.json"
    write_trace(document, path)
    trace = load_trace(path)
    assert trace.description == DESCRIPTION
    assert trace.description.contract.document == DESCRIPTION.contract.document
    rebuilt = build_target(trace.description)
    again = replay(trace, rebuilt)
    assert _bytes(again, trace.description) == text


def test_the_old_keywords_of_trace_of_write_the_same_bytes(
    original: tuple[Target, Execution],
) -> None:
    _, execution = original
    by_parts = trace_of(
        execution,
        policy="naive",
        contract=DESCRIPTION.contract,
        fixture=DESCRIPTION.fixture,
        plans=execution.plans,
        extra=DESCRIPTION.record(),
    )
    assert dumps_trace(by_parts) == _bytes(execution, DESCRIPTION)
    with pytest.raises(InputError, match="not both"):
        trace_of(execution, target=DESCRIPTION, policy="naive", plans=execution.plans)
    with pytest.raises(InputError, match="give the target's description"):
        trace_of(execution, policy="naive", plans=execution.plans)


def test_a_worker_receives_the_description_and_builds_the_same_target(
    original: tuple[Target, Execution],
) -> None:
    target, execution = original
    spec = describe(target)
    assert spec.description.policy == "naive" and not spec.description.defaults
    assert spec.plans == PLANS and spec.bounds == Bounds(max_faults=1)
    shipped = pickle.loads(pickle.dumps(spec))
    # the contract and world travel as documents and are parsed again
    assert shipped.description.contract is not target.contract
    assert shipped.description.contract.document == target.contract.document
    worker = rebuild(shipped)
    assert [i.name for i in worker.invariants] == [i.name for i in target.invariants]
    assert _bytes(_run(worker), DESCRIPTION) == _bytes(execution, DESCRIPTION)


def test_the_same_search_over_each_target_gives_the_same_verdict(
    original: tuple[Target, Execution], tmp_path: Path
) -> None:
    target, execution = original
    path = tmp_path / "t.json"
    write_trace(trace_of(execution, target=DESCRIPTION, plans=execution.plans), path)
    targets = {
        "built": target,
        "worker": rebuild(pickle.loads(pickle.dumps(describe(target)))),
        "trace": build_target(load_trace(path).description, plans=PLANS),
    }
    verdicts = {}
    for way, each in targets.items():
        bounded = attrs.evolve(
            each, bounds=Bounds(max_faults=1), budget=Budget(seed=0, database=None)
        )
        result = txcheck.explore(bounded, engine="systematic", seeds=False)
        found = result.counterexample
        assert found is not None, way
        verdict = txcheck.verdict_of(result, bounded)
        verdicts[way] = (verdict.outcome, verdict.bound, _bytes(found.execution, DESCRIPTION))
    assert verdicts["worker"] == verdicts["built"] == verdicts["trace"]


def test_the_command_line_builds_the_same_description(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "contract.json").write_text(json.dumps(DESCRIPTION.contract.document), "utf-8")
    (tmp_path / "world.json").write_text(json.dumps(DESCRIPTION.fixture.document), "utf-8")
    root = Path(__file__).resolve().parent.parent
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.chdir(tmp_path)
    code = main(
        [
            "explore",
            *("--policy", "naive", "--contract", "contract.json", "--world", "world.json"),
            *("--services", f"{MODULE}:GIFT_CARDS"),
            *("--invariants", f"{MODULE}:one_gift_card_per_order"),
            *("--skip-invariant", SKIPPED),
            *("--engine", "systematic", "--max-faults", "1", "--no-seeds", "--seed", "0"),
            *("--trace-out", "cli.json", "--json"),
        ]
    )
    assert code == 1
    trace = load_trace(tmp_path / "cli.json")
    assert trace.description == DESCRIPTION
    # the command's trace, rebuilt from its description, replays to the same bytes
    rerun = replay(trace, build_target(trace.description))
    again = json.loads(_bytes(rerun, trace.description))
    recorded = dict(trace.document)
    assert recorded.pop("engine") == "systematic"
    recorded.pop("digest"), again.pop("digest")
    assert again == recorded
    assert [f.name for f in rerun.failures] == [v["invariant"] for v in trace.violations]


def test_the_printed_reproduction_reruns_the_counterexample(
    original: tuple[Target, Execution], tmp_path: Path
) -> None:
    target, execution = original
    path = tmp_path / "t.json"
    write_trace(trace_of(execution, target=DESCRIPTION, plans=execution.plans), path)
    checked = tuple(i.name for i in target.invariants)
    code = python_reproduction(DESCRIPTION, execution, trace_path=str(path), checked=checked)
    assert f"from {MODULE} import GIFT_CARDS\n" in code
    assert f"from {MODULE} import one_gift_card_per_order\n" in code
    assert "assert execution.failed('no_double_effect')" in code
    namespace: dict[str, Any] = {}
    exec(compile(code, "reproduction", "exec"), namespace)  # its assertion holds
    assert [f.name for f in namespace["execution"].failures] == [f.name for f in execution.failures]
    # a positive control: under the policy that does not fail, the same code's assert fails
    guarded = attrs.evolve(DESCRIPTION, policy="guarded")
    broken = python_reproduction(guarded, execution, trace_path=str(path), checked=checked)
    with pytest.raises(AssertionError):
        exec(compile(broken, "reproduction", "exec"), {})


def test_a_testcase_built_from_a_trace_description_finds_the_counterexample(
    tmp_path: Path,
) -> None:
    case = txcheck_testcase(
        DESCRIPTION,
        plans=PLANS,
        max_faults=1,
        max_examples=60,
        trace_dir=str(tmp_path),
        database=None,
        derandomize=True,
    )
    outcome = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromTestCase(case).run(outcome)
    assert len(outcome.failures) == 1
    report = outcome.failures[0][1]
    assert "txcheck replay" in report and f"--services {MODULE}:GIFT_CARDS" in report
    written = load_trace(tmp_path / f"{case.__name__}.json")
    assert written.description == DESCRIPTION
    assert written.document["engine"] == "hypothesis"
    rerun = replay(written, build_target(written.description))
    assert rerun.failures and rerun.divergence is None


def test_a_testcase_under_a_description_takes_no_parts_beside_it() -> None:
    with pytest.raises(InputError, match="contract=, services="):
        txcheck_testcase(DESCRIPTION, contract=default_contract(), services=())


def test_a_description_pickles_as_documents_and_the_bundled_ones_as_themselves() -> None:
    plain = TargetDescription(policy="guarded")
    again = pickle.loads(pickle.dumps(plain))
    assert again == plain
    assert again.contract is default_contract() and again.fixture is default_fixture()
    assert plain.record() == {}
    with pytest.raises(InputError, match="defaults=False"):
        attrs.evolve(plain, defaults=False).record()
    with pytest.raises(InputError, match="list of strings"):
        TargetDescription(policy="guarded", services="mod:NAME")  # type: ignore[arg-type]


def test_txcheck_exports_the_description() -> None:
    assert txcheck.TargetDescription is TargetDescription
    assert "TargetDescription" in txcheck.__all__
