"""``txcheck report TRACE --html OUT``: what the page shows, and where it may be written.

The DOM tests parse the page with the standard library (``tests/report_dom.py``) for
three counterexamples (``tests/report_traces.py``): a lifeline per actor, the breaking
step highlighted in the diagram and the table, the deviations marked, and world-diff rows
that match a fresh re-run of the trace.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from report_dom import Node, parse
from report_traces import KINDS, PLAN_FILE, write

from txcheck.cli import main
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.runner import Step
from txcheck.report import steps as steps_module
from txcheck.report.diagram import sequence_svg
from txcheck.report.steps import step_views
from txcheck.traces.document import content_digest, load_trace, target_of
from txcheck.traces.json_diff import json_diff
from txcheck.traces.replaying import replay


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("traces")
    return {kind: write(kind, folder) for kind in KINDS}


@pytest.fixture(scope="module")
def pages(traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("pages")
    out = {}
    for kind, trace in traces.items():
        page = folder / f"{kind}.html"
        assert main(["report", str(trace), "--html", str(page)]) == 0
        out[kind] = page.read_text(encoding="utf-8")
    return out


def _steps(kind: str, traces: dict[str, Path]) -> list[dict[str, object]]:
    return list(load_trace(traces[kind]).document["steps"])


# -- the DOM --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_lifeline_per_actor_and_per_tool_called(
    kind: str, traces: dict[str, Path], pages: dict[str, str]
) -> None:
    steps = _steps(kind, traces)
    lanes = [g.attrs["data-lane"] for g in parse(pages[kind]).find_all("g", "lifeline")]
    assert len(lanes) == len(set(lanes))
    actors = {str(s["actor"]) for s in steps}
    tools = {str(s["request"]["tool"]) for s in steps if "tool" in s["request"]}  # type: ignore[index, operator]
    assert actors | tools <= set(lanes)


@pytest.mark.parametrize("kind", KINDS)
def test_every_step_is_a_row_in_the_diagram_and_the_table_linked_both_ways(
    kind: str, traces: dict[str, Path], pages: dict[str, str]
) -> None:
    dom = parse(pages[kind])
    for step in _steps(kind, traces):
        index = step["i"]
        row = dom.by_id(f"d-{index}")
        line = dom.by_id(f"step-{index}")
        assert [a.attrs["href"] for a in row.find_all("a")] == [f"#step-{index}"]
        assert f"#d-{index}" in [a.attrs["href"] for a in line.find_all("a")]
        assert ("dev" in row.classes) is step["deviation"] is ("dev" in line.classes)


@pytest.mark.parametrize("kind", KINDS)
def test_the_breaking_step_is_highlighted_once_in_each_view(
    kind: str, traces: dict[str, Path], pages: dict[str, str]
) -> None:
    dom = parse(pages[kind])
    document = load_trace(traces[kind]).document
    shown = [li.attrs["data-invariant"] for li in dom.find_all("li", "violation")]
    assert sorted(shown) == sorted(v["invariant"] for v in document["violations"])
    diagram = dom.find_all("g", "break")
    table = dom.find_all("tr", "break")
    assert len(diagram) == len(table) == 1
    assert diagram[0].attrs["id"].removeprefix("d-") == table[0].attrs["id"].removeprefix("step-")


def test_a_failure_after_a_step_highlights_that_step(
    traces: dict[str, Path], pages: dict[str, str]
) -> None:
    """The crash run breaks consumer_effect_at_most_once at the second apply."""
    document = load_trace(traces["crash"]).document
    (violation,) = [v for v in document["violations"] if v["step"] is not None]
    dom = parse(pages["crash"])
    assert dom.by_id(f"d-{violation['step']}").classes >= {"step", "break"}
    assert violation["invariant"] in dom.by_id(f"step-{violation['step']}").text()


def test_a_failure_at_quiescence_highlights_the_end_of_the_run(pages: dict[str, str]) -> None:
    dom = parse(pages["naive"])
    assert "break" in dom.by_id("d-end").classes
    assert "break" in dom.by_id("step-end").classes


def _diagram_rows(dom: Node, cls: str) -> list[Node]:
    return [g for g in dom.find_all("g", cls) if "step" in g.classes]


def test_crash_restart_and_redelivery_are_marked(
    traces: dict[str, Path], pages: dict[str, str]
) -> None:
    steps = _steps("crash", traces)
    dom = parse(pages["crash"])
    (crash,) = [s["i"] for s in steps if s["action"] == "crash"]
    (row,) = _diagram_rows(dom, "crash")
    assert row.attrs["id"] == f"d-{crash}"
    assert row.find_all("path", "x")  # drawn as an X on the consumer's lifeline
    (restart,) = _diagram_rows(dom, "restart")
    later = [s["i"] for s in steps if s["actor"] == "consumer" and s["i"] > crash]  # type: ignore[operator]
    assert restart.attrs["id"] == f"d-{later[0]}"
    assert restart.find_all("rect", "activation")
    (redelivery,) = _diagram_rows(dom, "redelivery")
    assert "redelivery" in redelivery.text()


@pytest.mark.parametrize("kind", ["naive", "double-click"])
def test_a_lost_response_is_a_dashed_answer(
    kind: str, traces: dict[str, Path], pages: dict[str, str]
) -> None:
    lost = [s["i"] for s in _steps(kind, traces) if s["outcome"] == "lost_response_after_commit"]
    dom = parse(pages[kind])
    unknown = _diagram_rows(dom, "unknown")
    assert [g.attrs["id"] for g in unknown] == [f"d-{i}" for i in lost]
    for row in unknown:
        assert row.find_all("line", "dashed")
        assert "response lost" in row.text()


def test_two_plans_have_two_orchestrator_lifelines(pages: dict[str, str]) -> None:
    lanes = [g.attrs["data-lane"] for g in parse(pages["double-click"]).find_all("g", "actor")]
    assert lanes[:2] == ["orchestrator-1", "orchestrator-2"]
    assert {"relay", "consumer", "clock"} <= set(lanes)


def test_the_diff_rows_are_the_world_changes_of_a_fresh_run(pages: dict[str, str]) -> None:
    """Step 0 of the naive run admits create_order: the idempotency record and the
    operation appear; step 1 commits it (the order, despite the lost response)."""
    dom = parse(pages["naive"])
    paths = {
        index: [
            td.text()
            for tr in dom.by_id(f"step-{index}").find_all("tr", "diff-row")
            for td in tr.find_all("td", "path")
        ]
        for index in (0, 1)
    }
    changed = paths[0] + paths[1]
    assert "/services/checkout/orders/ord_1001" in changed
    assert any(p.startswith("/idempotency/") for p in changed)
    for tr in dom.find_all("tr", "diff-row"):
        assert tr.classes & {"op-add", "op-remove", "op-change"}
        path = tr.find_all("td", "path")[0].text()
        assert path.startswith("/")


def test_the_header_names_the_run_and_its_replay_command(
    traces: dict[str, Path], pages: dict[str, str]
) -> None:
    dom = parse(pages["double-click"])
    assert dom.by_id("policy").text() == "control-fresh-key"
    assert shlex.split(dom.by_id("replay").text()) == [
        "txcheck",
        "replay",
        str(traces["double-click"]),
    ]
    assert "systematic" in dom.text()


def test_the_page_holds_the_trace_it_was_made_from(
    traces: dict[str, Path], pages: dict[str, str]
) -> None:
    (data,) = parse(pages["naive"]).find_all("script")
    assert data.attrs["type"] == "application/json"
    assert json.loads(data.text()) == load_trace(traces["naive"]).document


# -- the command ----------------------------------------------------------------------------


def test_report_refuses_a_file_that_is_not_a_report_unless_forced(
    traces: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "notes.html"
    out.write_text("my notes\n")
    assert main(["report", str(traces["naive"]), "--html", str(out)]) == 2
    assert "is not a txcheck HTML report" in capsys.readouterr().err
    assert out.read_text() == "my notes\n"
    assert main(["report", str(traces["naive"]), "--html", str(out), "--force"]) == 0
    page = out.read_text()
    assert main(["report", str(traces["naive"]), "--html", str(out)]) == 0  # a report: replaced
    assert out.read_text() == page


@pytest.mark.parametrize("special", ["fifo", "folder", "link"])
def test_report_refuses_special_files(
    special: str, traces: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.html"
    if special == "fifo":
        os.mkfifo(out)
    elif special == "folder":
        out.mkdir()
    else:
        out.symlink_to(tmp_path / "elsewhere.html")
    assert main(["report", str(traces["naive"]), "--html", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and str(out) in err
    assert not (tmp_path / "elsewhere.html").exists()


def test_a_bad_trace_is_one_line_exit_2_and_writes_nothing(
    traces: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edited = json.loads(traces["naive"].read_text())
    edited["steps"][1]["outcome"] = "ok"
    bad = tmp_path / "edited.json"
    bad.write_text(json.dumps(edited))
    out = tmp_path / "out.html"
    assert main(["report", str(bad), "--html", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and "digest" in err
    edited["digest"] = content_digest(edited)  # signed, but not the run it records
    bad.write_text(json.dumps(edited))
    assert main(["report", str(bad), "--html", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not the recorded run" in err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["edited.json"]  # no temporary file left


# -- --html-out on explore and replay -------------------------------------------------------


def _explore(tmp_path: Path, policy: str, *extra: str) -> tuple[int, Path]:
    page = tmp_path / f"{policy}.html"
    argv = ["explore", "--policy", policy, "--plan", str(PLAN_FILE), "--seed", "1"]
    argv += ["--engine", "systematic", "--max-faults", "1", "--html-out", str(page)]
    code = main([*argv, "--trace-out", str(tmp_path / "trace.json"), *extra])
    return code, page


def test_explore_html_out_reports_the_counterexample_with_its_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, page = _explore(tmp_path, "naive")
    assert code == 1
    dom = parse(page.read_text(encoding="utf-8"))
    header = {dt.text(): dd.text() for dt, dd in _pairs(dom)}
    assert header["Seed"] == "1"
    assert header["Bound"].startswith("exhaustive to")
    assert header["Engine"] == "systematic"
    assert dom.find_all("g", "break") and dom.find_all("tr", "diff-row")
    trace = json.loads((tmp_path / "trace.json").read_text())
    (data,) = dom.find_all("script")
    assert json.loads(data.text()) == trace  # the page holds the trace explore wrote


def _pairs(dom: Node) -> list[tuple[Node, Node]]:
    (header,) = dom.find_all("dl", "header")
    terms = [n for n in header.children if n.tag in ("dt", "dd")]
    return list(zip(terms[::2], terms[1::2], strict=True))


def test_explore_html_out_on_a_pass_is_the_coverage(tmp_path: Path) -> None:
    code, page = _explore(tmp_path, "guarded")
    assert code == 0
    dom = parse(page.read_text(encoding="utf-8"))
    rows = dom.find_all("tr", "plan-set")
    bars = dom.find_all("g", "bar")
    assert [r.attrs["data-plans"] for r in rows] == [b.attrs["data-plans"] for b in bars]
    assert len(rows) == 2  # the plan, and the plan submitted twice
    for row in rows:
        cells = [td.text() for td in row.find_all("td")]
        assert cells[1] == "1 of 1" and int(cells[2].replace(",", "")) > 0
        assert "timeout_before_commit" in cells[5]
        checks = [int(n.replace(",", "")) for n in cells[6].split() if n[0].isdigit()]
        assert len(checks) == 2 and checks[0] > checks[1] > 0  # per plan set, not totals
    invariants = {tr.attrs.get("data-invariant") for tr in dom.find_all("tr")}
    assert {"no_double_charge", "consumer_effect_exactly_once"} <= invariants
    assert "exhaustive to 1 deviation" in dom.by_id("bound").text()


def test_explore_checks_html_out_before_the_search(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "guarded.html").write_text("keep me\n")
    code, page = _explore(tmp_path, "guarded")
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--html-out" in err
    assert page.read_text() == "keep me\n"
    assert not (tmp_path / "trace.json").exists()


def test_replay_html_out_reports_the_run_under_another_policy(
    traces: dict[str, Path], tmp_path: Path
) -> None:
    page = tmp_path / "guarded.html"
    argv = ["replay", str(traces["naive"]), "--policy", "guarded", "--html-out", str(page)]
    assert main(argv) == 0
    dom = parse(page.read_text(encoding="utf-8"))
    assert dom.find_all("h1")[0].text() == "Policy guarded passes this trace"
    assert shlex.split(dom.by_id("replay").text())[-2:] == ["--policy", "guarded"]
    assert not dom.find_all("g", "break")


# -- --policy OTHER -------------------------------------------------------------------------


def _ids(dom: Node) -> list[str]:
    return [str(n.attrs["id"]) for n in dom.walk() if "id" in n.attrs]


@pytest.mark.parametrize("kind", KINDS)
def test_ids_are_unique_and_every_fragment_link_lands(kind: str, pages: dict[str, str]) -> None:
    dom = parse(pages[kind])
    ids = _ids(dom)
    assert len(ids) == len(set(ids))
    for link in dom.find_all("a"):
        assert str(link.attrs["href"]).removeprefix("#") in ids


def test_report_policy_other_shows_both_runs_and_where_they_part(
    traces: dict[str, Path], tmp_path: Path
) -> None:
    page = tmp_path / "compare.html"
    argv = ["report", str(traces["naive"]), "--html", str(page), "--policy", "guarded"]
    assert main(argv) == 0
    dom = parse(page.read_text(encoding="utf-8"))
    ids = _ids(dom)
    assert len(ids) == len(set(ids))
    for link in dom.find_all("a"):
        assert str(link.attrs["href"]).removeprefix("#") in ids
    section = dom.by_id("comparison")
    assert section.text() == "Comparison: policy guarded"
    (table,) = dom.find_all("table", "comparison")
    (part,) = table.find_all("tr", "part")
    assert part.attrs["id"] == "cmp-0"  # guarded reads its journal first: they part at once
    rows = table.find_all("tr", "step")
    assert all("parted" in r.classes for r in rows[:-1])
    guarded_rows = [g for g in dom.find_all("g", "step") if g.attrs["id"].startswith("cmp-d-")]
    assert len(guarded_rows) > len(load_trace(traces["naive"]).document["steps"])
    assert "no invariant failed" in dom.text()
    # the page's own run is still the recorded one
    assert dom.by_id("policy").text() == "naive"
    assert dom.find_all("g", "break")[0].attrs["id"] == "d-end"


def test_report_policy_same_shows_runs_that_never_part(
    traces: dict[str, Path], tmp_path: Path
) -> None:
    page = tmp_path / "same.html"
    argv = ["report", str(traces["crash"]), "--html", str(page), "--policy", "naive"]
    assert main(argv) == 0
    dom = parse(page.read_text(encoding="utf-8"))
    (table,) = dom.find_all("table", "comparison")
    assert not table.find_all("tr", "parted")
    assert "The runs are the same step for step." in dom.text()


# -- what each deviation draws --------------------------------------------------------------


def test_every_kind_of_deviation_has_its_mark() -> None:
    """Rows for a timeout before commit, a transient error, a clock jump and a crash of an
    orchestrator followed by its restart (a unit test of the diagram: the three traces
    above hold no jump and no timeout)."""
    call = {"kind": "Invoke", "tool": "charge_payment", "call": "call_3"}
    steps = [
        Step(index=0, choice=Choice("orchestrator-1", "step"), request=call),
        Step(
            index=1,
            choice=Choice("orchestrator-1", "complete", "timeout_before_commit"),
            deviation=True,
            request=call,
            observed={"status": "timeout", "code": "timeout"},
        ),
        Step(index=2, choice=Choice("clock", "jump"), deviation=True, observed={"clock": 41}),
        Step(index=3, choice=Choice("orchestrator-1", "step"), request=call),
        Step(
            index=4,
            choice=Choice("orchestrator-1", "complete", "transient_error"),
            deviation=True,
            request=call,
            observed={"status": "error", "code": "unavailable"},
        ),
        Step(index=5, choice=Choice("orchestrator-1", "crash"), deviation=True),
        Step(index=6, choice=Choice("orchestrator-1", "step"), request={"kind": "JournalRead"}),
    ]
    dom = parse(sequence_svg(steps, instances=("orchestrator-1",), breaking=4))
    rows = {g.attrs["id"]: g for g in dom.find_all("g", "step")}
    assert rows["d-1"].classes >= {"dev", "answer", "unknown"}
    assert (
        rows["d-1"].find_all("line", "dashed") and "timeout (not committed)" in rows["d-1"].text()
    )
    assert rows["d-2"].classes >= {"dev", "jump"} and rows["d-2"].find_all("circle", "jump-mark")
    assert "clock jump to 41" in rows["d-2"].text()
    assert rows["d-4"].classes >= {"dev", "error", "break"}
    assert not rows["d-4"].find_all("line", "dashed")  # an error is an answer the actor got
    assert rows["d-5"].classes >= {"crash"} and rows["d-5"].find_all("path", "x")
    assert rows["d-6"].classes >= {"restart"} and rows["d-6"].find_all("rect", "activation")
    lanes = [g.attrs["data-lane"] for g in dom.find_all("g", "lifeline")]
    assert lanes == ["orchestrator-1", "journal", "charge_payment", "clock"]


def test_a_trace_naming_a_policy_that_is_not_built_in_is_refused_unless_trusted(
    traces: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(traces["naive"].read_text())
    document["policy"] = "evil_module_27:Policy"
    document["digest"] = content_digest(document)
    trace = tmp_path / "foreign.json"
    trace.write_text(json.dumps(document))
    out = tmp_path / "out.html"
    assert main(["report", str(trace), "--html", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--trust-trace" in err
    assert not out.exists()


def test_a_trace_with_nothing_to_show_is_inconclusive(
    traces: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(traces["naive"].read_text())
    document.update(plan=None, plans=[], steps=[], violations=[])
    document["digest"] = content_digest(document)
    trace = tmp_path / "empty.json"
    trace.write_text(json.dumps(document))
    assert main(["report", str(trace), "--html", str(tmp_path / "out.html")]) == 3
    assert "inconclusive" in capsys.readouterr().err
    assert not (tmp_path / "out.html").exists()


# -- the diffs ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_each_step_diff_is_the_json_diff_of_whole_snapshots(
    kind: str, traces: dict[str, Path]
) -> None:
    """The report diffs only the parts whose JSON changed: it must still be exactly
    ``json_diff`` of the whole world before and after each step."""
    trace = load_trace(traces[kind])
    target = target_of(trace, builtin_policy(trace.policy), policy_name=trace.policy)
    execution = replay(trace, target)
    views = step_views(execution, target)
    run = target.run(execution.plans)
    before = run.world.snapshot()
    for step, view in zip(execution.steps, views, strict=True):
        run.apply(step.choice, deviation=step.deviation, kind=step.kind)
        after = run.world.snapshot()
        assert list(view.diff) == json_diff(before, after), step.index
        before = after


def test_a_change_python_calls_equal_is_still_a_change() -> None:
    """``1 == True`` in Python, not in JSON: such a change deep in a part is shown."""
    before = {"outbox": [{"published": 1}], "clock": 0}
    after = {"outbox": [{"published": True}], "clock": 0}
    texts = [steps_module._texts(side) for side in (before, after)]
    assert steps_module._diff(before, after, *texts) == json_diff(before, after) != []
