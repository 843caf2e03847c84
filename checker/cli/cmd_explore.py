"""``txcheck explore``: search a policy for a counterexample, shrink it, write its trace.

Exit 0 when the search exercised the policy and found nothing (the verdict says which
bound was proved), 1 when it found a counterexample (its trace is written to
``--trace-out``), 2 on bad input, 3 when the search was inconclusive (no run, no write
or no fault was ever exercised; with ``--require-exhaustive``, the bound was not
reached), 130/143 when interrupted by SIGINT/SIGTERM (the best counterexample found so
far is still printed and written). A user policy that raises or never yields is reported
as a policy error (exit 2) with the trace up to that point. Progress goes to stderr, and
only on a terminal; ``--json`` prints one JSON object on stdout. ``--trace-out`` is
checked before the search (``check_writable``); a write that still fails after it is
reported after the whole report (exit 2), so the counterexample is never lost unseen.
Hypothesis keeps its files under ``.txcheck/`` (``txcheck.cli.HYPOTHESIS_HOME``), never
in a ``.hypothesis/`` of the current directory, and never through a symbolic link planted
there (the example database is then not used, with a warning: ``txcheck.exploration.
example_db``).
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from rich.console import Console

from txcheck.cli import EXIT_FOUND, EXIT_INCONCLUSIVE, EXIT_OK, hypothesis_home
from txcheck.cli.arguments import natural, positive_int, positive_seconds
from txcheck.cli.contract_warnings import warn_about, warn_unread
from txcheck.cli.progress import ExploreProgress
from txcheck.cli.render_explore import ExploreSummary
from txcheck.cli.render_trace import counterexample_report, report_console
from txcheck.cli.safe_text import one_line
from txcheck.cli.stopping import Stopping
from txcheck.cli.store_options import add_store_option, load_stores
from txcheck.cli.user_code import POLICY_TIMEOUT_HELP, UserCode, add_user_code_options, user_code
from txcheck.exploration.engines.auto import ENGINES
from txcheck.exploration.kernel.description import TargetDescription
from txcheck.exploration.kernel.report import Counterexample, ExploreResult
from txcheck.exploration.kernel.target import DEFAULT_DATABASE, Bounds, Budget, Deadline, Target
from txcheck.exploration.kernel.verdict import ErrorKind, ExploreOutcome, ExploreVerdict, verdict_of
from txcheck.exploration.kernel.workers import Workers
from txcheck.exploration.search import explore
from txcheck.exploration.usercode.loading import (
    AGENT_FRAMEWORKS,
    LoadedPolicy,
    agent_spec,
    load_policy,
)
from txcheck.exploration.usercode.watchdog import DEFAULT_POLICY_TIMEOUT
from txcheck.models.errors import InputError, user_code_error
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import default_contract, load_contract
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.sim.fixture import WorldFixture, default_fixture, load_world
from txcheck.report.output import check_report_path
from txcheck.traces.document import check_writable, trace_of, write_trace
from txcheck.traces.replaying import rerun_difference
from txcheck.traces.repro import python_reproduction

__all__ = ["DEFAULT_TRACE", "register", "run"]

DEFAULT_TRACE = "txcheck-counterexample.json"
_EXITS = {
    ExploreOutcome.PASS: EXIT_OK,
    ExploreOutcome.COUNTEREXAMPLE: EXIT_FOUND,
    ExploreOutcome.INCONCLUSIVE: EXIT_INCONCLUSIVE,
}
"""Exit codes by verdict; an ``error`` verdict raises the user's error instead (exit 2)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "explore",
        help="search a policy for a counterexample and shrink it",
        description=(
            "Model-check an orchestration policy: generate plans and fault schedules, "
            "check every invariant, shrink the first failure and write its trace. "
            "Exit 0 nothing found (the bound proved is stated), 1 counterexample, "
            "2 bad input or a policy error, 3 inconclusive, 130/143 interrupted."
        ),
    )
    parser.add_argument(
        "--policy",
        default="guarded",
        help="built-in name, package.module:Name, or FRAMEWORK:package.module:make_agent",
    )
    parser.add_argument(
        "--agent",
        metavar="MODULE:MAKE_AGENT",
        help="check the agent this function makes, run by --framework's own tool loop with "
        "a scripted model and the contract's tools (instead of --policy)",
    )
    parser.add_argument(
        "--framework",
        choices=list(AGENT_FRAMEWORKS),
        help="the agent framework of --agent (mcp: make_agent() returns an async "
        "agent(client, model), the loop over an mcp.Client)",
    )
    parser.add_argument(
        "--mcp-server",
        metavar="MODULE:MAKE_SERVER",
        help="with --framework mcp: connect the agent to the MCP server make_server(ports) "
        "returns (its handlers reach the world through ports) instead of the contract's; "
        "recorded in the policy spec as mcp:MODULE:MAKE_AGENT@MODULE:MAKE_SERVER",
    )
    parser.add_argument("--contract", metavar="FILE", help="contract (default: bundled checkout)")
    parser.add_argument("--world", metavar="FILE", help="world fixture (default: bundled)")
    parser.add_argument("--plan", metavar="FILE", help="explore this one proposal")
    add_store_option(parser)
    parser.add_argument(
        "--engine", default="auto", choices=["auto", *ENGINES], help="exploration engine"
    )
    parser.add_argument(
        "--max-examples", type=positive_int, default=1000, metavar="N", help="runs per engine"
    )
    parser.add_argument(
        "--max-faults", type=natural, default=3, metavar="K", help="deviations per run"
    )
    parser.add_argument(
        "--max-states",
        type=positive_int,
        default=Bounds().max_states,
        metavar="N",
        help=f"states the systematic search may visit (default {Bounds().max_states:,})",
    )
    parser.add_argument(
        "--require-exhaustive",
        action="store_true",
        help="exit 3 (inconclusive) unless the systematic search reached --max-faults",
    )
    parser.add_argument(
        "--time-budget", type=positive_seconds, metavar="S", help="seconds for the whole run"
    )
    parser.add_argument(
        "--seed", type=natural, metavar="S", help="reproducible run (no example database)"
    )
    parser.add_argument("--no-seeds", action="store_true", help="skip the scenario seeds")
    parser.add_argument(
        "--max-shrinks",
        type=natural,
        default=500,
        metavar="N",
        help="stop shrinking after N examples past the first failure (default 500)",
    )
    parser.add_argument(
        "--trace-out", default=DEFAULT_TRACE, metavar="FILE", help="counterexample trace file"
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing --trace-out (or --html-out) file even when it is not a "
        "txcheck trace (report)",
    )
    parser.add_argument(
        "--html-out",
        metavar="FILE",
        help="also write an HTML report: the counterexample, or the coverage of a pass",
    )
    parser.add_argument(
        "--policy-timeout",
        type=positive_seconds,
        default=DEFAULT_POLICY_TIMEOUT,
        metavar="S",
        help=POLICY_TIMEOUT_HELP,
    )
    parser.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="spread the search over N local Dask worker processes (with --scheduler: "
        "N shares on that cluster); needs txcheck[distributed]",
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="spread the search over the Dask cluster whose scheduler is at ADDRESS "
        "(e.g. tcp://10.0.0.5:8786)",
    )
    parser.add_argument(
        "--example-db",
        metavar="LOCATION",
        help=f"where failures are kept and replayed first: a directory (default "
        f"{DEFAULT_DATABASE}) or redis://HOST:PORT/DB, shared by workers and CI runners",
    )
    add_user_code_options(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(run=run)


MAX_LOCAL_WORKERS = 64
"""``--workers`` starts that many processes on this machine: more is a typo."""
MAX_SHARES = 1024


def _workers(args: argparse.Namespace) -> AbstractContextManager[Workers | None]:
    """The workers ``--workers`` / ``--scheduler`` ask for (None: in this process). Dask
    is imported only here, and only when one of them is given."""
    if args.workers is None and args.scheduler is None:
        return nullcontext(None)
    option = "--scheduler" if args.scheduler is not None else "--workers"
    limit = MAX_SHARES if args.scheduler is not None else MAX_LOCAL_WORKERS
    if args.workers is not None and args.workers > limit:
        raise InputError(f"must be at most {limit} (got {args.workers})", source="--workers")
    try:
        from txcheck.exploration.spread import cluster
    except ImportError as error:
        raise InputError(
            f"needs Dask, which is not installed ({error}): pip install 'txcheck[distributed]'",
            source=option,
        ) from None
    if args.scheduler is not None:
        return cluster.cluster_workers(args.scheduler, args.workers)
    # Hypothesis writes a cache when imported: the workers keep theirs where the command does.
    return cluster.local_workers(
        args.workers, env={"HYPOTHESIS_STORAGE_DIRECTORY": hypothesis_home()}
    )


def _database(args: argparse.Namespace) -> str | None:
    """Where failures are kept: ``--example-db`` or the default directory; none with
    ``--seed`` (a reproducible run depends on its command line only)."""
    if args.seed is not None:
        if args.example_db is not None:
            raise InputError(
                "cannot be combined with --seed: a seeded run uses no example "
                "database, so that it depends on its command line only",
                source="--example-db",
            )
        return None
    location = args.example_db if args.example_db is not None else DEFAULT_DATABASE
    if not location:
        raise InputError("the example database location is empty", source="--example-db")
    if location.startswith("redis://"):  # a directory is made when first written to
        from txcheck.exploration.spread.example_db import check_database  # imports Hypothesis

        check_database(location)
    return location


def _policy_spec(args: argparse.Namespace) -> str:
    """``--policy``, or ``--agent`` with ``--framework`` (and ``--mcp-server``) as the spec
    a trace records."""
    if args.agent is None:
        if args.framework is not None:
            raise InputError("--framework names the framework of --agent", source="--framework")
        if args.mcp_server is not None:
            raise InputError(
                "--mcp-server needs --agent ... --framework mcp (with --policy, name it in "
                "the spec: mcp:MODULE:MAKE_AGENT@MODULE:MAKE_SERVER)",
                source="--mcp-server",
            )
        return str(args.policy)
    if args.policy != "guarded":
        raise InputError("give --policy or --agent, not both", source="--agent")
    if args.framework is None:
        known = ", ".join(AGENT_FRAMEWORKS)
        raise InputError(f"--agent needs --framework ({known})", source="--agent")
    return agent_spec(args.framework, args.agent, args.mcp_server)


def _inputs(args: argparse.Namespace) -> tuple[Contract, WorldFixture]:
    contract = load_contract(args.contract) if args.contract else default_contract()
    fixture = load_world(args.world) if args.world else default_fixture()
    return contract, fixture


def _target(args: argparse.Namespace, loaded: LoadedPolicy, code: UserCode) -> Target:
    contract, fixture = _inputs(args)
    plans: tuple[Any, ...] = ()
    if args.plan:
        plan = load_proposal(args.plan)
        if not plan.calls:
            raise InputError("the proposal has no tool calls to explore", source=args.plan)
        if all(contract.tool(call.name) is None for call in plan.calls):
            names = ", ".join(sorted({one_line(c.name, 40) for c in plan.calls}))
            raise InputError(
                f"the proposal calls no tool the contract has (it calls {names}; the "
                f"contract has {', '.join(sorted(contract.tools))}): is it the right --contract?",
                source=args.plan,
            )
        plans = ((plan,), (plan, plan))
    return Target(
        policy_name=loaded.spec,
        policy=loaded.policy,
        contract=contract,
        fixture=fixture,
        services=code.services,
        invariants=code.invariants,
        plans=plans,
        stores=load_stores(args.store, args.dsn),
        bounds=Bounds(max_faults=args.max_faults, max_states=args.max_states),
        budget=Budget(
            max_examples=args.max_examples,
            time_budget=args.time_budget,
            seed=args.seed,
            max_shrinks=args.max_shrinks,
            database=_database(args),
        ),
    )


def _found_json(found: Counterexample, path: str | None) -> dict[str, Any]:
    execution = found.execution
    return {
        "engine": found.found_by,
        "found_by": found.found_by,
        "shortened_by": found.shortened_by,
        "invariant": found.invariant,
        "violations": [f.to_json() for f in execution.failures],
        "error": execution.error,
        "deviations": found.deviations,
        "steps": len(execution.steps),
        "trace": path,
    }


def _result_json(
    policy: str,
    *,
    engine: str,
    result: ExploreResult,
    verdict: ExploreVerdict,
    path: str | None,
    warnings: list[str],
) -> dict[str, Any]:
    found = result.counterexample
    return {
        "verdict": verdict.to_json(),
        "warnings": warnings,
        "policy": policy,
        "engine": engine,
        "found": found is not None,
        "counterexample": None if found is None else _found_json(found, path),
        "engines": [r.to_json() for r in result.reports],
        "coverage": result.coverage(),
    }


def _write_html(
    args: argparse.Namespace,
    target: Target,
    result: ExploreResult,
    verdict: ExploreVerdict,
    *,
    description: TargetDescription,
    trace_written: bool,
) -> InputError | None:
    """Write ``--html-out``: the counterexample's report, else the coverage page. A
    failure is returned, to be reported after the whole report (as the trace's is)."""
    from txcheck.cli.render_trace import replay_command
    from txcheck.report.build import html_report
    from txcheck.report.coverage import coverage_page
    from txcheck.report.output import write_report

    found = result.counterexample
    if found is None:
        page = coverage_page(target.policy_name, result, verdict)
    else:
        document = trace_of(
            found.execution,
            target=description,
            plans=found.plans,
            extra={"engine": found.found_by},
        )
        command = replay_command(args.trace_out if trace_written else "TRACE.json", description)
        details = {
            "bound": verdict.bound,
            "seed": "none (not a seeded run)" if args.seed is None else str(args.seed),
            "shortened_by": found.shortened_by or "nothing (reported as found)",
        }
        page = html_report(
            found.execution, target=target, document=document, replay=command, details=details
        )
    try:
        write_report(page, args.html_out, force=args.force, option="--html-out")
    except (OSError, InputError) as error:
        problem = error.problem if isinstance(error, InputError) else error.strerror or error
        return InputError(f"cannot write the report: {problem}", source=args.html_out)
    return None


def run(args: argparse.Namespace) -> int:
    example_db = sys.modules.get("txcheck.exploration.spread.example_db")
    if example_db is not None:  # loaded by an earlier command in this process
        example_db.forget_warnings()  # this command warns once about its example database
    check_writable(args.trace_out, force=args.force)  # before the search, not after it
    if args.html_out is not None:
        check_report_path(args.html_out, force=args.force, option="--html-out")
    loaded = load_policy(_policy_spec(args), timeout=args.policy_timeout)
    code = user_code(args)
    target = _target(args, loaded, code)
    description = code.describe(
        loaded.spec, contract=target.contract, fixture=target.fixture, stores=target.stores
    )
    warnings = warn_about("explore", target.contract)
    if args.world:
        warnings += warn_unread("explore", target.fixture, target.services)
    deadline = Deadline(target.budget.time_budget)
    workers = _workers(args)
    progress = ExploreProgress(Console(stderr=True), kinds=len(target.fault_kinds))
    stopping = Stopping(
        "explore",
        deadline,
        policy_timeout=None if loaded.builtin and not code.users else args.policy_timeout,
        time_budget=args.time_budget,
    )
    with stopping, progress, workers as spread_over:
        progress.where = None if spread_over is None else spread_over.where
        result = explore(
            target,
            engine=args.engine,
            seeds=not args.no_seeds and not args.plan,
            deadline=deadline,
            observe=progress.observe,
            workers=spread_over,
        )
    interrupted = stopping.code is not None
    verdict = verdict_of(
        result, target, require_exhaustive=args.require_exhaustive, interrupted=interrupted
    )
    found = result.counterexample
    console = report_console()
    unwritten: InputError | None = None
    html_unwritten: InputError | None = None
    if found is not None:
        document = trace_of(
            found.execution,
            target=description,
            plans=found.plans,
            extra={"engine": found.found_by},
        )
        try:
            write_trace(document, args.trace_out, force=args.force)
        except (OSError, InputError) as error:  # the report is still printed, then this
            problem = error.problem if isinstance(error, InputError) else error.strerror or error
            unwritten = InputError(f"cannot write the trace: {problem}", source=args.trace_out)
        if not args.json:
            console.print(
                counterexample_report(
                    found.execution,
                    target=target,
                    trace_path=None if unwritten else args.trace_out,
                    reproduction=python_reproduction(
                        description,
                        found.execution,
                        trace_path=None if unwritten else args.trace_out,
                        checked=code.checked(),
                    ),
                    found_by=found.found_by,
                    description=description,
                ),
                crop=False,  # the replay command and the Python are whole, never cut
            )
    if args.html_out is not None:
        html_unwritten = _write_html(
            args, target, result, verdict, description=description, trace_written=not unwritten
        )
    if args.json:
        trace = None if unwritten else args.trace_out
        document = _result_json(
            loaded.spec,
            engine=args.engine,
            result=result,
            verdict=verdict,
            path=trace,
            warnings=warnings,
        )
        document["interrupted"] = interrupted
        print(json.dumps(document, indent=2, sort_keys=True))
    else:
        console.print(ExploreSummary(policy=loaded.spec, result=result, verdict=verdict))
    if stopping.code is not None:
        sys.stdout.flush()
        kept = " (the best counterexample so far is above)" if found is not None else ""
        print(f"txcheck explore: interrupted{kept}", file=sys.stderr)
        for failed in (unwritten, html_unwritten):
            if failed is not None:
                print(f"txcheck explore: error: {failed}", file=sys.stderr)
        return stopping.code
    if unwritten is not None:
        sys.stdout.flush()
        raise unwritten
    if html_unwritten is not None:
        sys.stdout.flush()
        raise html_unwritten
    if (
        found is not None
        and verdict.outcome is ExploreOutcome.COUNTEREXAMPLE
        and not found.execution.hung
    ):
        drift = rerun_difference(target, found.execution)
        if drift is not None:  # its trace would not replay: not a counterexample to trust
            sys.stdout.flush()
            raise user_code_error(
                ErrorKind.POLICY,
                "the same choices run again give another run, so the trace would not "
                f"replay ({drift}): the policy, a service or an invariant depends on "
                "something txcheck does not control (time, randomness, global state)",
            )
    if found is not None and verdict.outcome is ExploreOutcome.ERROR:
        sys.stdout.flush()
        raise user_code_error(
            found.execution.error_kind,
            f"{found.execution.error} (trace up to that point: {args.trace_out})",
        )
    return _EXITS[verdict.outcome]
