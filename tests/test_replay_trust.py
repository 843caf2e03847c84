"""A trace is data: replay imports nothing it names unless the user names it too, and a
trace that is not the run it records (edited, truncated, swapped) is an error, not a pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import main
from txcheck.traces.document import content_digest
from txcheck.traces.replaying import _first_change, _shown

EVIL = """\
from pathlib import Path
Path("imported.marker").write_text("ran")
from txcheck import Guarded

class P(Guarded):
    name = "evil"
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


ROOT = Path(__file__).resolve().parent.parent
VALID_PLAN = str(ROOT / "examples" / "proposals" / "valid_openai_chat.json")


def _naive_trace(capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """naive's counterexample on the valid checkout plan: a fault and what it costs."""
    argv = ["explore", "--policy", "naive", "--no-seeds", "--seed", "1", "--plan", VALID_PLAN]
    assert main([*argv, "--engine", "systematic", "--trace-out", "t.json", "--json"]) == 1
    capsys.readouterr()
    return dict(json.loads(Path("t.json").read_text("utf-8")))


def _write(document: dict[str, Any], *, digest: bool) -> str:
    if digest:
        document["digest"] = content_digest(document)
    Path("edited.json").write_text(json.dumps(document), "utf-8")
    return "edited.json"


def test_the_untouched_trace_reproduces(capsys: pytest.CaptureFixture[str]) -> None:
    _naive_trace(capsys)
    assert main(["replay", "t.json", "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["reproduced"] and result["difference"] is None


def test_a_policy_named_by_a_trace_is_not_imported_unless_named_by_the_user(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = _naive_trace(capsys)
    Path("evilmod.py").write_text(EVIL, "utf-8")
    document["policy"] = "evilmod:P"
    path = _write(document, digest=True)
    assert main(["replay", path]) == 2
    err = capsys.readouterr().err
    assert "is not built in" in err and "--policy evilmod:P" in err
    assert not Path("imported.marker").exists()
    main(["replay", path, "--trust-trace", "--json"])  # the user's explicit choice
    assert Path("imported.marker").exists()


def test_services_and_invariants_a_trace_names_need_the_same_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    document = _naive_trace(capsys)
    Path("evilmod.py").write_text(EVIL + "SERVICES = []\n", "utf-8")
    document["services"] = ["evilmod:SERVICES"]
    path = _write(document, digest=True)
    assert main(["replay", path]) == 2
    assert "--services evilmod:SERVICES" in capsys.readouterr().err
    assert not Path("imported.marker").exists()


def _outcome_explodes(document: dict[str, Any]) -> None:
    document["steps"][1]["outcome"] = "explode"


def _steps_emptied(document: dict[str, Any]) -> None:
    document["steps"] = []


def _truncated(document: dict[str, Any]) -> None:
    document["steps"] = document["steps"][:1]


def _plans_emptied(document: dict[str, Any]) -> None:
    document["plans"] = []


def _observed_changed(document: dict[str, Any]) -> None:
    document["steps"][0]["observed"] = {"admitted": False}


def _request_changed(document: dict[str, Any]) -> None:
    document["steps"][0]["request"]["arguments"]["currency"] = "EUR"


def _deviation_unmarked(document: dict[str, Any]) -> None:
    document["steps"][1]["deviation"] = False


def _contract_swapped(document: dict[str, Any]) -> None:
    for tool in document["contract"]["tools"]:
        if tool.get("function", {}).get("name") == "create_order":
            tool["x-txcheck"]["idempotency_key"] = "order_id"


def _contract_replaced(document: dict[str, Any]) -> None:
    hotel = ROOT / "examples" / "contracts" / "hotel.json"
    document["contract"] = json.loads(hotel.read_text("utf-8"))


def _violations_emptied(document: dict[str, Any]) -> None:
    document["violations"] = []


TAMPERING: dict[Callable[[dict[str, Any]], None], tuple[str, ...]] = {
    _outcome_explodes: ("step 1: recorded choice orchestrator-1 complete explode is not possible",),
    _steps_emptied: ("the trace records 0 steps, the replay takes", "from step 0 on they differ"),
    _truncated: ("the trace records 1 steps, the replay takes", "from step 1 on they differ"),
    _plans_emptied: ("step 0: recorded choice orchestrator-1 step ok is not possible",),
    _observed_changed: ("step 0: the trace records observed.admitted false",),
    _request_changed: (
        'step 0: the trace records request.arguments.currency "EUR", the replay gives "USD"',
    ),
    _deviation_unmarked: ("step 1: the trace records deviation false, the replay gives true",),
    _contract_swapped: ("step 2: the trace records request",),
    _contract_replaced: ("step 1: recorded choice",),
    _violations_emptied: (
        "the recorded violations (none) do not reproduce",
        "(the replay finds: retries_reuse_key at step 2, ",
    ),
}
"""Each edit, and where the replay under the recorded policy says it stops being the run."""


@pytest.mark.parametrize("tamper", TAMPERING, ids=lambda f: f.__name__.strip("_"))
def test_an_edited_trace_does_not_match_its_digest(
    tamper: Callable[[dict[str, Any]], None], capsys: pytest.CaptureFixture[str]
) -> None:
    document = _naive_trace(capsys)
    tamper(document)
    assert main(["replay", _write(document, digest=False)]) == 2
    assert "does not match its digest" in capsys.readouterr().err


@pytest.mark.parametrize("tamper", TAMPERING, ids=lambda f: f.__name__.strip("_"))
def test_an_edited_trace_with_a_forged_digest_is_not_the_recorded_run(
    tamper: Callable[[dict[str, Any]], None], capsys: pytest.CaptureFixture[str]
) -> None:
    """Under the recorded policy a trace that diverges, or whose recorded violation does
    not reproduce, is exit 2 naming the first difference; its faults are not replayed
    instead, and nothing on stdout reads as a pass or a reproduction."""
    document = _naive_trace(capsys)
    recorded = ", ".join(v["invariant"] for v in document["violations"])
    tamper(document)
    path = _write(document, digest=True)
    code = main(["replay", path])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.count("\n") == 1
    assert err.startswith(f"txcheck replay: error: {path}: the replay is not the recorded run: ")
    assert all(fragment in err for fragment in TAMPERING[tamper]), err
    assert "passes this trace" not in out and "Reproduced" not in out
    assert "Replayed the recorded faults instead" not in out
    assert " ".join(out.split()).endswith(
        "No verdict: this is not the recorded run (recorded: "
        f"{'none' if tamper is _violations_emptied else recorded})."
    )
    assert main(["replay", path, "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["translated"] is None
    assert all(fragment in result["difference"] for fragment in TAMPERING[tamper])


def test_a_trace_without_a_digest_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    document = _naive_trace(capsys)
    del document["digest"]
    assert main(["replay", _write(document, digest=False)]) == 2
    assert "has no 'digest'" in capsys.readouterr().err


def test_under_another_policy_the_faults_are_replayed_and_unplaced_ones_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _naive_trace(capsys)
    assert main(["replay", "t.json", "--policy", "guarded", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    translated = result["translated"]
    assert translated is not None and translated["violations"] == []
    assert translated["recorded_faults"] >= 1
    assert 0 <= translated["unplaced_faults"] <= translated["recorded_faults"]


def test_a_difference_is_named_by_its_path_with_both_values_shown_whole_or_marked_cut() -> None:
    old = {"arguments": {"items": [{"sku": "a"}, {"sku": "b"}], "note": "x" * 300}}
    new = {"arguments": {"items": [{"sku": "a"}, {"sku": "c"}], "note": "x" * 300}}
    assert _first_change("request", old, new) == ("request.arguments.items[1].sku", "b", "c")
    assert _first_change("request", {"a": 1}, {"a": 1, "b": 2})[0] == "request.b"
    where, was, now = _first_change("request", {"a": [1]}, {"a": [1, 2]})
    assert (where, was, now) == ("request.a", [1], [1, 2])  # lengths differ: the list whole
    assert _shown(_first_change("r", {}, {"b": 2})[1]) == "nothing"
    long = _shown("y" * 500)
    assert len(long) == 120 and long.endswith("...") and _shown("short") == '"short"'
