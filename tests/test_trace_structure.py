"""A trace's digest is unkeyed, so a hostile trace comes with a correct one: its structure
is checked whole before replay (exit 2 with the JSON path, never a traceback or exit 1,
which on replay reads "reproduced"), and a trace that records nothing is exit 3, never
"passes this trace". Part of the hostile corpus."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import checkout_calls
from txcheck.cli import main
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.invariants import DEFAULT_INVARIANTS
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.traces.document import TraceError, content_digest, dumps_trace, load_trace, trace_of
from txcheck.traces.trace_schema import check_structure

CONTRACT = default_contract()
FIXTURE = default_fixture()
PLAN = Plan.of(*checkout_calls("ord_1"))
TIMEOUT = Deviation(action="complete", outcome="timeout_before_commit", tool="charge_payment")


def _clean_trace() -> dict[str, Any]:
    """guarded through a timeout it recovers from: a trace that records no violation, so a
    replay of it that exits 1 can only be a false "reproduced"."""
    execution = execute(
        Target(
            policy=builtin_policy("guarded"),
            contract=CONTRACT,
            fixture=FIXTURE,
            invariants=DEFAULT_INVARIANTS,
        ),
        [PLAN],
        chooser=Deviations([TIMEOUT]),
    )
    document = trace_of(
        execution, policy="guarded", contract=CONTRACT, fixture=FIXTURE, plans=[PLAN]
    )
    assert document["violations"] == [] and any(s["deviation"] for s in document["steps"])
    return json.loads(dumps_trace(document))


CLEAN = _clean_trace()


def _resealed(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its digest computed again, as anyone can."""
    body = {k: v for k, v in document.items() if k != "digest"}
    return {**body, "digest": content_digest(body)}


def _replay(path: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["replay", str(path), *argv])
    return code, out.getvalue(), err.getvalue()


def test_the_clean_trace_passes_as_recorded(tmp_path: Path) -> None:
    """The positive control for everything below."""
    path = tmp_path / "t.json"
    path.write_text(dumps_trace(CLEAN))
    code, out, err = _replay(path)
    assert (code, err) == (0, "")
    assert "Policy guarded passes this trace (recorded: none)." in out


@pytest.mark.parametrize("argv", [[], ["--policy", "naive"], ["--json"]])
@pytest.mark.parametrize(
    "emptied",
    [
        {"plan": None, "plans": [], "steps": []},
        {"plans": [], "steps": []},
        {"plans": [{"calls": [], "format": "plan"}], "steps": []},
    ],
    ids=["nothing", "no-plans-no-steps", "no-calls-no-steps"],
)
def test_a_trace_that_records_nothing_is_inconclusive_not_a_pass(
    tmp_path: Path, emptied: dict[str, Any], argv: list[str]
) -> None:
    path = tmp_path / "empty.json"
    path.write_text(dumps_trace(_resealed({**CLEAN, **emptied, "violations": []})))
    code, out, err = _replay(path, *argv)
    assert code == 3, err
    assert out == "" and "passes" not in err
    assert err == (
        f"txcheck replay: {path}: inconclusive: the trace records no plan with a call and "
        "no step, so replaying it exercises nothing\n"
    )


def _at(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


MALFORMED = [
    (("steps", 0), [1, 2], "$.steps[0]", "is not of type 'object'"),
    (("steps", 3, "action"), 7, "$.steps[3].action", "is not one of"),
    (("steps", 2, "request"), "JournalAppend", "$.steps[2].request", "is not of type 'object'"),
    (("steps", 5, "deviation"), "yes", "$.steps[5].deviation", "is not of type 'boolean'"),
    (("plans", 0, "calls"), "call_1", "$.plans[0].calls", "is not of type 'array'"),
    (("plans", 0, "calls", 0, "id"), 1, "$.plans[0].calls[0].id", "is not of type 'string'"),
    (("violations",), ["retries_reuse_key"], "$.violations[0]", "is not of type 'object'"),
    (("policy",), ["guarded"], "$.policy", "is not of type 'string'"),
    (("services",), "mine:SERVICES", "$.services", "is not of type 'array'"),
]


@pytest.mark.parametrize(("where", "value", "path", "problem"), MALFORMED)
def test_a_malformed_trace_with_a_recomputed_digest_is_exit_2_naming_the_path(
    tmp_path: Path, where: tuple[Any, ...], value: Any, path: str, problem: str
) -> None:
    document = copy.deepcopy(CLEAN)
    _at(document, where[:-1])[where[-1]] = value
    trace = tmp_path / "bad.json"
    trace.write_text(dumps_trace(_resealed(document)))
    code, out, err = _replay(trace)
    assert (code, out) == (2, "")
    assert err.startswith(f"txcheck replay: error: {trace}: at {path} not a valid txcheck-trace/1")
    assert problem in err and err.count("\n") == 1


def test_a_missing_step_field_is_named(tmp_path: Path) -> None:
    document = copy.deepcopy(CLEAN)
    del document["steps"][4]["actor"]
    trace = tmp_path / "bad.json"
    trace.write_text(dumps_trace(_resealed(document)))
    with pytest.raises(TraceError, match=r"at \$\.steps\[4\] .*'actor' is a required property"):
        load_trace(trace)


def test_every_trace_the_repository_ships_has_the_structure() -> None:
    root = Path(__file__).resolve().parent.parent
    shipped = [
        p
        for p in [*root.glob("examples/**/*.json"), *root.glob("tests/regressions/*.json")]
        if '"format": "txcheck-trace/1"' in p.read_text(encoding="utf-8")
    ]
    assert shipped
    for path in shipped:
        check_structure(json.loads(path.read_text()), source=str(path), error=TraceError)


# -- generated: any one structural change, digest recomputed --------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(value, dict):
        for key in sorted(value):
            if prefix or key != "digest":
                yield from _paths(value[key], (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


PATHS = [p for p in _paths(CLEAN) if p]
SMALL_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    """The clean trace with one structural change somewhere (a value of another type, a
    field or item removed, a field added), then its digest recomputed."""
    document = copy.deepcopy(CLEAN)
    path = draw(st.sampled_from(PATHS))
    parent, last = _at(document, path[:-1]), path[-1]
    change = draw(st.sampled_from(["replace", "remove", "add"]))
    if change == "remove":
        del parent[last]
    elif change == "add" and isinstance(parent[last], dict):
        parent[last][draw(st.text(max_size=8))] = draw(SMALL_JSON)
    elif change == "add" and isinstance(parent[last], list):
        parent[last].insert(draw(st.integers(0, len(parent[last]))), draw(SMALL_JSON))
    else:
        parent[last] = draw(SMALL_JSON)
    return _resealed(document)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mutated")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(document=mutated())
def test_a_mutated_trace_never_gives_a_traceback_or_a_false_reproduction(
    scratch: Path, document: dict[str, Any]
) -> None:
    path = scratch / "mutated.json"
    path.write_text(json.dumps(document, sort_keys=True), encoding="utf-8")
    code, _, err = _replay(path)  # an exception here is the failure this test looks for
    assert code in (0, 2, 3), err  # 1 would claim a violation the clean trace never had
    assert "Traceback" not in err
    if code == 2:
        assert err.startswith("txcheck replay: ") and err.count("\n") == 1, err
    code, _, err = _replay(path, "--policy", "naive")  # the fault-translation road
    assert code in (0, 1, 2, 3) and "Traceback" not in err
