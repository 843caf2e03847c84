"""tau2-bench as a domain: effects from tau2's tool types, order where it matters, tasks
with nothing to do, and the service adapter (tau2's tool code over a task's database,
checked against its gold database) on a stand-in domain with the same interface.

The fixture slices under tests/fixtures/tau2/{airline,retail,telecom} are tasks copied
from tau2-bench's data and its tools file (schemas and tool types, as
``python -m txcheck.adapters.tau2 tools DOMAIN`` writes it)."""

from __future__ import annotations

import copy
import json
import sys
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from txcheck import (
    DEFAULT_INVARIANTS,
    Deviation,
    Deviations,
    Execution,
    Target,
    builtin_policy,
    execute,
    parse_contract,
)
from txcheck.adapters import tau2 as adapter
from txcheck.adapters import tau2_worlds
from txcheck.cli import main
from txcheck.importers.common import chat_proposal
from txcheck.importers.tau2 import tau2_cases
from txcheck.importers.tau2_effects import annotate
from txcheck.models.plan.proposal_parser import parse_proposal
from txcheck.models.sim.fixture import parse_world
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.scorer import CaseResult, score_file

TAU2 = Path(__file__).resolve().parent / "fixtures" / "tau2"


def _score(cases: list[dict[str, Any]]) -> dict[str, CaseResult]:
    report = score_file(None, parse_cases("\n".join(json.dumps(c) for c in cases), source="t"))
    assert report.errors == ()
    return {r.id: r for r in report.cases}


def _codes(result: CaseResult) -> list[str]:
    return [v.code for v in [*result.strict.violations, *result.warnings]]


def _effects(case: dict[str, Any]) -> dict[str, Any]:
    return {t["function"]["name"]: t["x-txcheck"] for t in case["tools"]}


@pytest.mark.parametrize("domain", ["airline", "retail", "telecom"])
def test_every_ground_truth_passes_with_the_imported_annotations(domain: str) -> None:
    cases = list(tau2_cases(TAU2 / domain))
    results = _score(cases)
    assert all(r.strict.passed and not r.warnings for r in results.values()), {
        i: _codes(r) for i, r in results.items()
    }


def test_tool_types_become_effects_and_id_arguments_resources() -> None:
    [_, booking, _] = tau2_cases(TAU2 / "airline")
    effects = _effects(booking)
    assert effects["get_user_details"] == {"effect": "read"}
    assert effects["calculate"] == {"effect": "read"}  # generic: changes no database
    assert effects["transfer_to_human_agents"] == {"effect": "read"}
    assert effects["book_reservation"] == {"effect": "write", "resource": "user_id"}
    assert effects["cancel_reservation"] == {"effect": "write", "resource": "reservation_id"}
    [retail] = tau2_cases(TAU2 / "retail")
    assert _effects(retail)["exchange_delivered_order_items"] == {
        "effect": "write",
        "resource": ["order_id", "payment_method_id"],
    }


def test_bare_schemas_make_repeated_reads_a_duplicate_side_effect() -> None:
    """The positive control: without tau2's tool types every tool is a keyless write, and
    retail task 2 repeating get_product_details is a duplicate side effect."""
    [case] = tau2_cases(TAU2 / "retail")
    bare = copy.deepcopy(case)
    for tool in bare["tools"]:
        del tool["x-txcheck"]
    assert "duplicate_side_effect" in _codes(_score([bare])[bare["id"]])
    assert _score([case])[case["id"]].strict.passed


def test_a_task_with_no_agent_action_expects_nothing_written() -> None:
    nothing = next(iter(tau2_cases(TAU2 / "airline")))
    assert nothing["id"] == "airline:0"
    assert nothing["expect"]["calls"] == []
    assert "book_reservation" in nothing["expect"]["forbidden"]
    read = {"user_id": "mia_li_3668"}
    looked = {**nothing, "id": "looked", "proposal": chat_proposal([("get_user_details", read)])}
    booked = {
        **nothing,
        "id": "booked",
        "proposal": chat_proposal([("cancel_reservation", {"reservation_id": "X"})]),
    }
    results = _score([nothing, looked, booked])
    assert results["airline:0"].strict.passed
    assert _codes(results["looked"]) == ["unexpected_call"] and not results["looked"].strict.veto
    assert results["booked"].strict.vetoes == ("forbidden_tool",)


def test_a_required_argument_tau2_does_not_compare_is_kept_not_made_optional() -> None:
    [case] = tau2_cases(TAU2 / "telecom")
    [call] = case["expect"]["calls"]
    assert call["name"] == "transfer_to_human_agents"
    assert not isinstance(call["arguments"]["summary"], dict)  # no $optional: no expect_invalid
    [retail] = tau2_cases(TAU2 / "retail")
    find = retail["expect"]["calls"][0]
    assert find["name"] == "find_user_id_by_name_zip"


def test_writes_on_one_identifier_keep_their_order_and_reads_do_not() -> None:
    cases = {c["id"]: c for c in tau2_cases(TAU2 / "airline")}
    ordered = cases["airline:23"]
    assert ordered["expect"]["ordered"] == "writes"
    assert "ordered" not in cases["airline:20"]["expect"]
    calls = ordered["proposal"]["tool_calls"]
    swapped = {**ordered, "id": "swapped", "proposal": {**ordered["proposal"]}}
    swapped["proposal"]["tool_calls"] = [calls[1], calls[0], *calls[2:]]
    results = _score([ordered, swapped])
    assert results["airline:23"].strict.passed
    assert "wrong_order" in _codes(results["swapped"])
    # reads may come anywhere: retail 2's reads reversed, its write last, still passes
    [retail] = tau2_cases(TAU2 / "retail")
    retail["expect"]["ordered"] = "writes"
    calls = retail["proposal"]["tool_calls"]
    retail["proposal"] = {**retail["proposal"], "tool_calls": [*calls[:-1][::-1], calls[-1]]}
    assert _score([retail])[retail["id"]].strict.passed


def test_ordered_writes_is_checked_when_read() -> None:
    [case] = tau2_cases(TAU2 / "telecom")
    bad = {**case, "expect": {**case["expect"], "ordered": "reads"}}
    report = score_file(None, parse_cases(json.dumps(bad), source="t"))
    assert [e.message for e in report.errors] == [
        "'expect.ordered' must be true, false or \"writes\" (got 'reads')"
    ]


def test_a_tools_file_without_types_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "c.jsonl"
    assert main(["import", "tau2", str(TAU2 / "shop"), "--out", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        "txcheck import tau2: warning: tool 'exchange_items' has no tau2 tool type: it is "
        "taken for a keyless write (give 'tool_types' in the tools file) (1 case(s))"
    )
    bad = tmp_path / "tools.json"
    bad.write_text(json.dumps({"tools": [], "tool_types": {}}))
    args = ["import", "tau2", str(TAU2 / "shop"), "--tools", str(bad), "--out", str(out)]
    assert main(args) == 2
    typed = tmp_path / "typed.json"
    tools = json.loads((TAU2 / "shop" / "tools.json").read_text())
    typed.write_text(json.dumps({"tools": tools, "tool_types": {"find_user": "peek"}}))
    args = ["import", "tau2", str(TAU2 / "shop"), "--tools", str(typed), "--out", str(out)]
    assert main(args) == 2
    assert "tool_types.find_user: tool type must be one of read, write" in capsys.readouterr().err


def test_annotate_keeps_an_existing_description() -> None:
    tool = {"type": "function", "function": {"name": "t"}, "x-txcheck": {"effect": "read"}}
    assert annotate(tool, "write") == tool


# -- the service adapter, on a stand-in domain with tau2's interface ------------------------


class _DB:
    """A database with pydantic's two methods, as tau2's ``DB`` classes have them."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = copy.deepcopy(dict(data))

    @classmethod
    def model_validate(cls, data: Mapping[str, Any]) -> _DB:
        return cls(data)

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        return copy.deepcopy(self.data)


class _Kit:
    """A tool kit: seats on flights, booked by reservation (new ids in order, as tau2's
    airline does), an error for a full flight."""

    def __init__(self, db: _DB | None) -> None:
        self.db = db
        self.tools = {"book": self.book, "seats": self.seats}

    def use_tool(self, name: str, **kwargs: Any) -> Any:
        return self.tools[name](**kwargs)

    def seats(self, flight: str) -> int:
        assert self.db is not None
        return int(self.db.data["flights"][flight]["seats"])

    def book(self, user_id: str, flight: str) -> dict[str, Any]:
        assert self.db is not None
        if self.db.data["flights"][flight]["seats"] < 1:
            raise ValueError("no seat left")
        reservation = next(r for r in ("R1", "R2", "R3") if r not in self.db.data["reservations"])
        self.db.data["flights"][flight]["seats"] -= 1
        self.db.data["reservations"][reservation] = {"user_id": user_id, "flight": flight}
        return {"reservation_id": reservation}


@pytest.fixture
def stand_in(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    package = "txcheck_test_stand_in"
    for part, attrs in (
        ("environment", {}),
        ("data_model", {"DB": _DB}),
        ("tools", {"Kit": _Kit}),
    ):
        module = types.ModuleType(f"{package}.{part}")
        for name, value in attrs.items():
            setattr(module, name, value)
        monkeypatch.setitem(sys.modules, f"{package}.{part}", module)
    monkeypatch.setitem(adapter.DOMAINS, "flights", (package, "DB", "Kit"))
    yield


CONTRACT = parse_contract(
    {
        "tools": [
            annotate(
                {
                    "type": "function",
                    "function": {
                        "name": "book",
                        "parameters": {
                            "type": "object",
                            "properties": {
                                "user_id": {"type": "string"},
                                "flight": {"type": "string"},
                            },
                            "required": ["user_id", "flight"],
                        },
                    },
                },
                "write",
            )
        ]
    },
    source="stand-in",
)
START = {"flights": {"F1": {"seats": 2}}, "reservations": {}}
GOLD = {"flights": {"F1": {"seats": 1}}, "reservations": {"R1": {"user_id": "u1", "flight": "F1"}}}
PLAN = parse_proposal(chat_proposal([("book", {"user_id": "u1", "flight": "F1"})]))


def _world(gold: Mapping[str, Any] = GOLD) -> Any:
    section = {"domain": "flights", "task": "t", "db": START, "gold": gold}
    return parse_world({"format": "txcheck-world/1", "services": {"tau2": section}})


def _run(policy: str, invariants: tuple[Any, ...], *faults: Deviation) -> Execution:
    found = builtin_policy(policy)
    assert found is not None
    target = Target(
        policy=found,
        contract=CONTRACT,
        fixture=_world(),
        services=(adapter.SERVICES,),
        invariants=(*DEFAULT_INVARIANTS, *invariants),
    )
    return execute(target, [PLAN], chooser=Deviations(faults), stop_at_first=False)


def _failed(run: Execution) -> dict[str, tuple[str, ...]]:
    return {f.name: f.messages for f in run.failures}


@pytest.mark.usefixtures("stand_in")
def test_the_services_run_the_domain_code_and_reach_the_gold_database() -> None:
    run = _run("guarded", adapter.INVARIANTS)
    assert _failed(run) == {}
    assert run.run.world.state["tau2"]["db"] == GOLD


@pytest.mark.usefixtures("stand_in")
def test_a_second_booking_under_a_lost_response_is_caught() -> None:
    lost = Deviation(action="complete", outcome="lost_response_after_commit", tool="book")
    naive = _failed(_run("naive", adapter.INVARIANTS, lost))
    assert "tau2_gold_database" in naive and "no_double_effect" in naive
    [message] = naive["tau2_gold_database"]
    assert "flights.F1 differs" in message and "reservations.R2 extra" in message
    assert _failed(_run("guarded", adapter.INVARIANTS, lost)) == {}


@pytest.mark.usefixtures("stand_in")
def test_a_permanent_error_is_exempt_only_from_the_lenient_invariant() -> None:
    refused = Deviation(action="complete", outcome="permanent_error", tool="book")
    assert list(_failed(_run("guarded", adapter.INVARIANTS, refused))) == ["tau2_gold_database"]
    assert _failed(_run("guarded", adapter.UNLESS_REJECTED, refused)) == {}


@pytest.mark.usefixtures("stand_in")
def test_an_error_answer_changes_nothing_and_the_plan_goes_on() -> None:
    full = {"flights": {"F1": {"seats": 0}}, "reservations": {}}
    state = adapter.SERVICES.initial_state(
        {"services": {"tau2": {"domain": "flights", "db": full, "gold": None}}}
    )
    answer = adapter.SERVICES.handlers["book"](state, {"user_id": "u1", "flight": "F1"})
    assert answer.receipt == {"error": "ValueError: no seat left"}  # type: ignore[union-attr]
    assert state["db"] == full


def test_random_bill_ids_are_renumbered_in_order() -> None:
    before = {"bills": [{"bill_id": "Bdeadbeef"}]}
    after = {"bills": [{"bill_id": "Bdeadbeef"}, {"bill_id": "B0123abcd"}, {"id": "Bffffffff"}]}
    assert tau2_worlds.renumbered(after, before) == {
        "bills": [{"bill_id": "Bdeadbeef"}, {"bill_id": "B_NEW_1"}, {"id": "B_NEW_2"}]
    }


def test_a_slice_keeps_what_the_task_reaches() -> None:
    db = {
        "users": {"u1": {"reservations": ["R1"]}, "u2": {"reservations": ["R2"]}},
        "reservations": {"R1": {"flight": "F1"}, "R2": {"flight": "F2"}},
        "flights": {"F1": {}, "F2": {}, "F3": {}},
        "meta": [1, 2],
    }
    keys = tau2_worlds._reached(db, {"u1", "F3"})
    assert tau2_worlds._slice(db, keys) == {
        "users": {"u1": {"reservations": ["R1"]}},
        "reservations": {"R1": {"flight": "F1"}},
        "flights": {"F1": {}, "F3": {}},
        "meta": [1, 2],
    }


def test_an_unknown_domain_or_a_missing_tau2_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(Exception, match="tau2 domain must be one of airline, retail, telecom"):
        adapter.domain_tools("shop")
    monkeypatch.setitem(adapter.DOMAINS, "ghost", ("txcheck_no_such_package", "DB", "Kit"))
    with pytest.raises(Exception, match=r"the tau2 package is needed for this \(pip install"):
        adapter.domain_tools("ghost")


def test_imported_tools_have_behaviour_so_evaluate_runs_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bare schemas left every tool without behaviour (evaluate refused them, exit 2); the
    imported effects give generic behaviour, so the gold booking runs under faults."""
    booking = [c for c in tau2_cases(TAU2 / "airline") if c["id"] == "airline:20"]
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps(booking[0]) + "\n")
    contract = tmp_path / "contract.json"
    contract.write_text(json.dumps({"tools": booking[0]["tools"]}))
    code = main(["evaluate", str(contract), str(cases), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and report["errors"] == []
    assert report["cases"][0]["stage2"]["guarded"]["state_consistency"]["outcome"] == "completed"


def test_import_services_names_the_folder_when_it_is_no_tau2_domain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shop = tmp_path / "shop"
    shop.mkdir()
    out = tmp_path / "c.jsonl"
    assert main(["import", "tau2", str(shop), "--services", "--out", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"txcheck import: error: {shop}: tau2 domain must be one of airline, retail, "
        "telecom (got 'shop')\n"
    )
    assert not out.exists()
