"""Cost of the HTML report: a counterexample of 200+ steps, rendered and compared with replay.

    python benchmarks/bench_report.py [--steps N] [--runs R]

Builds a run of ``control-no-dedupe`` on several checkout plans at once (distinct orders)
with one broker duplicate, so the consumer applies an event twice: the fewest plans whose
run takes at least N steps (default 200; 6 plans, 233 steps), written as a trace. Then,
in the same process, measures the median CPU time (``time.process_time``) over R runs of
a replay of that trace (the recorded choices re-run, as ``txcheck replay`` does) and of
the report (re-run, diffs, diagram and page, as ``txcheck report`` does, without writing
the file), and prints the report's CPU time as a ratio to the replay's and the page's
size in bytes. A measurement, not a test: nothing here has a threshold.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from txcheck.cli.render_trace import replay_command
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import Execution, execute
from txcheck.exploration.kernel.target import Target
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal import Plan, plan_from_json, plan_to_json
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.report.build import html_report
from txcheck.traces.document import dumps_trace, load_trace, target_of, trace_of
from txcheck.traces.replaying import replay

ROOT = Path(__file__).resolve().parent.parent
PLAN = ROOT / "examples" / "proposals" / "valid_openai_chat.json"
POLICY = "control-no-dedupe"


def _plans(count: int) -> list[Plan]:
    """The example plan on ``count`` distinct orders of one book each."""
    text = json.dumps(plan_to_json(load_proposal(PLAN)))
    text = text.replace('\\"quantity\\": 2', '\\"quantity\\": 1')
    text = text.replace('\\"amount\\": 2500', '\\"amount\\": 1250')
    return [
        plan_from_json(json.loads(text.replace("ord_1001", f"ord_{2001 + i}")))
        for i in range(count)
    ]


def build(steps: int) -> tuple[Target, Execution]:
    """A run of exactly ``steps`` steps (see the module docstring)."""
    target = Target(policy=builtin_policy(POLICY), policy_name=POLICY)
    duplicate = Deviation(action="step", outcome="duplicate", kind="BrokerSend")
    for count in range(1, 11):
        plans = _plans(count)
        full = execute(target, plans, chooser=Deviations([duplicate]), settle=True)
        if len(full.steps) >= steps:
            return target, full
    raise SystemExit(f"no run of {steps} steps with up to 10 plans")


def _median_cpu(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, help="also write the trace and the page here")
    args = parser.parse_args(argv)
    _, execution = build(args.steps)
    document = trace_of(
        execution,
        policy=POLICY,
        contract=default_contract(),
        fixture=default_fixture(),
        plans=execution.plans,
        extra={"engine": "fixed"},
    )
    folder = args.out or Path(".")
    trace_path = folder / "bench-report-trace.json"
    trace_path.write_text(dumps_trace(document), encoding="utf-8")
    trace = load_trace(trace_path)
    replay_target = target_of(trace, builtin_policy(POLICY), policy_name=POLICY)
    command = replay_command(str(trace_path), trace.description)

    def report() -> str:
        run = replay(trace, replay_target)
        return html_report(run, target=replay_target, document=trace.document, replay=command)

    page = report()
    if args.out is not None:
        (folder / "bench-report.html").write_text(page, encoding="utf-8")
    else:
        trace_path.unlink()
    replay_cpu = _median_cpu(lambda: replay(trace, replay_target), args.runs)
    report_cpu = _median_cpu(report, args.runs)
    failures = ", ".join(f.name for f in execution.failures) or "none"
    print(
        f"trace: {len(execution.steps)} steps, {len(execution.plans)} plans, failures: {failures}"
    )
    print(f"trace file: {len(dumps_trace(document).encode()):,} bytes")
    print(f"replay: {replay_cpu:.3f} s CPU (median of {args.runs})")
    ratio = report_cpu / replay_cpu
    print(f"report: {report_cpu:.3f} s CPU (median of {args.runs}), {ratio:.1f}x the replay")
    print(f"page: {len(page.encode()):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
