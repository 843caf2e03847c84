"""Untrusted text never reaches the terminal as rich markup or raw escape sequences.

Case ids, tool names, call ids, forbidden names, messages, policy names, paths and trace
contents are put into every renderer and through every command. The output may hold the
SGR colour codes rich writes itself and nothing else: no clear screen, no window title,
no OSC 8 hyperlink, no BEL, no C1 control, no bidirectional override; and the hostile
text still shows, literally.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from rich.console import Console

from txcheck.cli import cmd_scenarios, main
from txcheck.cli.cmd_replay import ReplayReport
from txcheck.cli.render_evaluation import EvaluationView
from txcheck.cli.render_explore import ExploreSummary
from txcheck.cli.render_scenarios import ScenariosReport
from txcheck.cli.render_score import ScoreView
from txcheck.cli.render_trace import counterexample_report
from txcheck.cli.render_verdict import VerdictReport
from txcheck.cli.safe_text import block, one_line
from txcheck.evaluate.evaluation import evaluate_file
from txcheck.exploration.kernel.report import Counterexample, EngineReport, ExploreResult
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import Execution, execute
from txcheck.exploration.kernel.target import Target
from txcheck.exploration.kernel.verdict import ExploreVerdict
from txcheck.models.canonical import printable_json
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal_parser import parse_proposal
from txcheck.models.plan.validation import validate
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.scenarios.results import summarize
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.scorer import score_file
from txcheck.traces.document import content_digest

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = default_contract()
FIXTURE = default_fixture()

HOSTILE = {
    "markup": "[bold red]R[/bold red][link=file:///etc/passwd]L[/link]",
    "controls": "\x1b[2J\x1b]0;t\x07\x1b]8;;http://x\x1b\\o\x1b]8;;\x1b\\\x07\x9b31m\x9d\u202e!",
    "zero-width": "pay\u200bpal\u200c\u200d\u2060\ufeff\u200e\u200f\u061c\u2028\u00ad!",
}
"""Each at most 64 characters, so it fits an order id of the checkout contract."""

SHOWN = {
    "markup": ["[bold red]R", "[link=file:///etc/passwd]"],
    "controls": ["\\x1b[2J", "\\x1b]0;t"],
    "zero-width": ["pay\\u200bpal"],
}
"""What must appear literally in the output for each hostile string."""

KINDS = sorted(HOSTILE)


def _name(h: str) -> str:
    """The hostile string as a file name (no slash)."""
    return h.replace("/", "_")


_SGR = re.compile(r"\x1b\[[0-9;]*m")
_FORBIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
    "\u200b-\u200f\u2060\ufeff\u061c\u2028\u2029\u00ad]"
)


def assert_safe(output: str, kind: str, *, shown: bool = True, named: bool = False) -> None:
    """No escape sequence but rich's own SGR codes, no other control, and (``shown``) the
    hostile text visible as text (``named``: as ``_name`` makes it a file name)."""
    rest = _SGR.sub("", output)
    assert "\x1b" not in rest, ascii(output)
    assert not _FORBIDDEN.search(output), ascii(output)
    if shown:
        for token in SHOWN[kind]:
            visible = _name(token) if named else token
            assert visible in rest, (visible, rest)


# -- the safe-text helpers ------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_one_line_escapes_before_it_cuts(kind: str) -> None:
    text = HOSTILE[kind]
    for limit in range(4, 90):
        cut = one_line(text, limit)
        assert len(cut) <= limit and not _FORBIDDEN.search(cut) and "\x1b" not in cut
    assert block(f"a{text}\nb") == f"a{one_line(text, None)}\nb"


def test_whitespace_controls_become_escapes_not_spaces() -> None:
    assert one_line("a\x1cb\x85c\rd") == "a\\x1cb\\x85c\\x0dd"
    assert one_line("a \t\n b") == "a b"


# -- every renderer -------------------------------------------------------------------------


def _chat(calls: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for call_id, name, arguments in calls
        ],
    }


def _checkout(h: str, order: str = "") -> list[tuple[str, str, dict[str, Any]]]:
    order = order or h
    keys = [f"key-{i}-{h}" for i in range(4)]
    return [
        (
            f"c1{h}",
            "create_order",
            {
                "order_id": order,
                "customer_id": "cus_1",
                "items": [{"sku": "sku_book", "quantity": 2}],
                "currency": "USD",
                "idempotency_key": keys[0],
            },
        ),
        (f"c2{h}", "reserve_inventory", {"order_id": order, "idempotency_key": keys[1]}),
        (
            f"c3{h}",
            "charge_payment",
            {"order_id": order, "amount": 2500, "currency": "USD", "idempotency_key": keys[2]},
        ),
        (f"c4{h}", "confirm_order", {"order_id": order, "idempotency_key": keys[3]}),
    ]


def _naive_double_charge(h: str) -> tuple[Target, Execution]:
    plan = parse_proposal(_chat(_checkout(h)), source="hostile")
    lost = Deviation(action="complete", outcome="lost_response_after_commit", tool="charge_payment")
    target = Target(policy=builtin_policy("naive"), policy_name=h)
    execution = execute(target, [plan], chooser=Deviations([lost]))
    assert execution.failures
    return target, execution


def _verdict(h: str) -> Any:
    calls = [*_checkout(h), (f"c5{h}", f"tool{h}", {"x": h})]
    plan = parse_proposal(_chat(calls), source="hostile")
    return VerdictReport(contract=CONTRACT, plan=plan, verdict=validate(CONTRACT, plan))


def _case_lines(h: str) -> str:
    expected = [{"name": n, "arguments": a} for _, n, a in _checkout(h, "ord_1")]
    return "\n".join(
        [
            json.dumps({"id": h, "proposal": _chat(_checkout(h)), "expect": {"calls": expected}}),
            json.dumps(
                {
                    "id": f"skipped{h}",
                    "proposal": _chat([(f"id{h}", f"tool{h}", {})]),
                    "expect": {"calls": [], "forbidden": [f"tool{h}"]},
                }
            ),
            json.dumps(
                {
                    "id": "bad",
                    "proposal": {},
                    "expect": {"calls": [{"name": h}], "forbidden": [h]},
                }
            ),
        ]
    )


def _score(h: str) -> Any:
    return ScoreView(score_file(CONTRACT, parse_cases(_case_lines(h), source=f"cases{h}")))


_EVALUATIONS: dict[str, Any] = {}


def _evaluation(h: str) -> Any:
    if h not in _EVALUATIONS:  # stage 2 runs the fault schedule: once per string
        _EVALUATIONS[h] = evaluate_file(CONTRACT, parse_cases(_case_lines(h), source=h))
    return EvaluationView(_EVALUATIONS[h])


def _scenarios(h: str) -> Any:
    summary = summarize([], raw_sha256="0" * 64, contract=CONTRACT, fixture=FIXTURE)
    return ScenariosReport(runs=[], summary=summary, where=h)


def _explore(h: str) -> Any:
    _target, execution = _naive_double_charge(h)
    found = Counterexample(found_by=h, plans=execution.plans, execution=execution)
    report = EngineReport(
        engine=h,
        runs=1,
        steps=len(execution.steps),
        notes=(h,),
        coverage={"invariants": {h: 1}, "outcomes": {h: 1}, "deviations": {h: 1}},
    )
    return ExploreSummary(policy=h, result=ExploreResult(reports=(report,), counterexample=found))


def _explore_verdict(h: str, outcome: str) -> Any:
    # a plan set is named after the contract's workflows and tools: the bound names it
    verdict = ExploreVerdict(
        outcome=outcome,
        unexercised=(h,) if outcome == "inconclusive" else (),
        bound=f"exhaustive to 1 of 3 deviations (lower: {h} 1)",
        exhaustive_to=1,
        asked=3,
        complete=False,
        runs=1,
        writes=1,
        faults=1,
    )
    report = EngineReport(engine="systematic", runs=1, steps=1, notes=())
    return ExploreSummary(
        policy="guarded", result=ExploreResult(reports=(report,)), verdict=verdict
    )


def _counterexample(h: str) -> Any:
    target, execution = _naive_double_charge(h)
    return counterexample_report(
        execution, target=target, trace_path=h, reproduction=f"x = {h}\ny = {h}\n", found_by=h
    )


def _replay(h: str) -> Any:
    target, execution = _naive_double_charge(h)
    return ReplayReport(
        path=h,
        policy=h,
        recorded_policy=h,
        recorded=(h,),
        target=target,
        execution=execution,
    )


RENDERERS: dict[str, Callable[[str], Any]] = {
    "verdict": _verdict,
    "score": _score,
    "evaluation": _evaluation,
    "scenarios": _scenarios,
    "explore": _explore,
    "explore pass": lambda h: _explore_verdict(h, "pass"),
    "explore inconclusive": lambda h: _explore_verdict(h, "inconclusive"),
    "counterexample": _counterexample,
    "replay": _replay,
}


def _render(renderable: Any, color: bool) -> str:
    if color:
        console = Console(
            file=io.StringIO(), force_terminal=True, color_system="truecolor", width=100
        )
    else:
        console = Console(file=io.StringIO(), color_system=None, width=100)
    console.print(renderable)
    output = console.file
    assert isinstance(output, io.StringIO)
    return output.getvalue()


@pytest.mark.parametrize("color", [True, False], ids=["truecolor", "no-color"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("renderer", sorted(RENDERERS))
def test_every_renderer_shows_hostile_text_as_text(renderer: str, kind: str, color: bool) -> None:
    output = _render(RENDERERS[renderer](HOSTILE[kind]), color)
    assert_safe(output, kind)
    if not color:
        assert "\x1b" not in output
    else:
        assert "\x1b]8;" not in output and "\x1b[" in output  # styled, yet no hyperlink


# -- every command, end to end --------------------------------------------------------------


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Commands print as on a colour terminal 100 columns wide."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLORTERM", "truecolor")
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.chdir(tmp_path)


def _outputs(
    capsys: pytest.CaptureFixture[str], kind: str, *, err_shown: bool = True, named: bool = False
) -> str:
    captured = capsys.readouterr()
    assert_safe(captured.err, kind, shown=err_shown, named=named)
    return captured.out


@pytest.mark.usefixtures("terminal")
@pytest.mark.parametrize("kind", KINDS)
def test_validate(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    h = HOSTILE[kind]
    Path("p.json").write_text(json.dumps(_chat([*_checkout(h), (f"c5{h}", f"t{h}", {})])))
    contract = str(ROOT / "examples/checkout/contract.json")
    assert main(["validate", contract, "p.json"]) == 1
    assert_safe(_outputs(capsys, kind, err_shown=False), kind)
    assert main(["validate", contract, "p.json", "p.json"]) == 1
    assert_safe(_outputs(capsys, kind, err_shown=False), kind)
    lines = [json.dumps({"id": h, "proposal": _chat(_checkout(h))}), json.dumps({"id": 1, h: 2})]
    Path(_name(h)).write_text("\n".join(lines))
    assert main(["validate", contract, "--jsonl", _name(h)]) == 2
    assert_safe(_outputs(capsys, kind, err_shown=False), kind)
    assert main(["validate", contract, f"missing{_name(h)}.json"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.usefixtures("terminal")
@pytest.mark.parametrize("kind", KINDS)
def test_usage_and_input_errors(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    h = HOSTILE[kind]
    with pytest.raises(SystemExit):
        main(["explore", "--engine", h])
    assert _outputs(capsys, kind) == ""
    with pytest.raises(SystemExit):
        main(["validate", f"--bogus{h.replace(' ', '')}"])  # a space would make it positional
    assert _outputs(capsys, kind, err_shown=False) == ""
    assert main(["validate", "--jsonl", f"missing{_name(h)}"]) == 2
    assert _outputs(capsys, kind, err_shown=False) == ""
    assert main(["replay", f"missing{_name(h)}"]) == 2
    assert _outputs(capsys, kind, err_shown=False) == ""


@pytest.mark.usefixtures("terminal")
@pytest.mark.parametrize("kind", KINDS)
def test_score_and_evaluate(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    h = HOSTILE[kind]
    Path(_name(h)).write_text(_case_lines(h))
    contract = str(ROOT / "examples/checkout/contract.json")
    assert main(["score", contract, _name(h)]) == 2
    assert_safe(_outputs(capsys, kind), kind)
    assert main(["evaluate", contract, _name(h)]) == 2
    assert_safe(_outputs(capsys, kind), kind)


@pytest.mark.usefixtures("terminal")
@pytest.mark.parametrize("kind", KINDS)
def test_explore_and_replay(kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    h = HOSTILE[kind]
    Path("plan.json").write_text(json.dumps(_chat(_checkout(h))))
    trace = f"{_name(h)}.json"
    argv = ["--policy", "naive", "--engine", "systematic", "--seed", "0", "--max-faults", "1"]
    assert main(["explore", *argv, "--plan", "plan.json", "--trace-out", trace]) == 1
    captured = capsys.readouterr()
    assert_safe(captured.out, kind)
    assert "\x1b[2J" not in captured.err and "\x1b]" not in captured.err  # only rich's Live
    assert main(["replay", trace]) == 1
    assert_safe(_outputs(capsys, kind, err_shown=False), kind)
    document = json.loads(Path(trace).read_text())
    document["violations"] = [{"invariant": h}]
    document["digest"] = content_digest(document)  # the hostile text, signed
    Path(trace).write_text(json.dumps(document))
    assert main(["replay", trace, "--policy", "guarded"]) == 0
    assert_safe(_outputs(capsys, kind, err_shown=False), kind)


@pytest.mark.usefixtures("terminal")
@pytest.mark.parametrize("kind", KINDS)
def test_scenarios_and_import(
    kind: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    h = HOSTILE[kind]
    monkeypatch.setattr(cmd_scenarios, "run_all", lambda **_: [])
    assert main(["scenarios", "--out", _name(h)]) == 0
    assert_safe(_outputs(capsys, kind, err_shown=False), kind, named=True)
    shop = str(ROOT / "tests/fixtures/tau2/shop")
    assert main(["import", "tau2", shop, "--out", _name(h)]) == 2  # a folder now
    assert _outputs(capsys, kind, named=True) == ""
    assert main(["import", "tau2", shop, "--out", f"{_name(h)}.jsonl"]) == 0
    assert _outputs(capsys, kind, named=True) == ""


# -- JSON written from untrusted text --------------------------------------------------------

_RAW = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
"""Characters a JSON text must hold only as escapes (tabs and newlines between tokens
aside): json escapes C0 itself; DEL, C1, bidi and the other invisible ones are ours."""


def assert_printable_json(text: str) -> None:
    for line in text.splitlines():
        assert not _RAW.search(line), ascii(line)


def strings(value: Any) -> list[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


@given(st.recursive(st.text(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
@example("\u2065")  # unassigned and default-ignorable: found by this test once
def test_printable_json_escapes_every_invisible_character_and_keeps_the_value(value: Any) -> None:
    raw = json.dumps(value, ensure_ascii=False)
    text = printable_json(raw)
    assert json.loads(text) == value
    assert not _RAW.search(text), ascii(text)
    letters = [c for c in raw if c.isalpha() and ord(c) > 0x7E]
    assert [c for c in text if c.isalpha() and ord(c) > 0x7E] == letters  # any script, as is


def test_json_outputs_and_files_hold_hostile_text_as_escapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """validate --json, replay --json and the trace file: C1 controls and bidi overrides
    from a case id or a model's call ids are written as \\u escapes (json.dumps with
    ensure_ascii=False wrote them raw), and decode to the same text."""
    monkeypatch.chdir(tmp_path)
    h = HOSTILE["controls"]
    contract = str(ROOT / "examples/checkout/contract.json")
    Path("cases.jsonl").write_text(json.dumps({"id": h, "proposal": _chat(_checkout(h))}))
    assert main(["validate", contract, "--jsonl", "cases.jsonl", "--json"]) == 0
    out = capsys.readouterr().out
    assert_printable_json(out)
    assert json.loads(out.splitlines()[0])["id"] == h
    Path("plan.json").write_text(json.dumps(_chat(_checkout(h))))
    argv = ["--policy", "naive", "--engine", "systematic", "--seed", "0", "--max-faults", "1"]
    assert main(["explore", *argv, "--plan", "plan.json", "--trace-out", "t.json"]) == 1
    capsys.readouterr()
    written = Path("t.json").read_text(encoding="utf-8")
    assert_printable_json(written)
    assert any(h in text for text in strings(json.loads(written)))
    assert main(["replay", "t.json", "--json"]) == 1
    replayed = capsys.readouterr().out
    assert_printable_json(replayed)
    assert any(h in text for text in strings(json.loads(replayed)))
