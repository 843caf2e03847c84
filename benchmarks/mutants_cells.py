"""One cell of the mutant benchmark: one search method against one mutant with one seed.

A cell runs in a forked worker (``run_cell``), so an engine that hangs past its budget is
stopped without taking the harness down; the time is measured inside the worker in CPU
time (``time.process_time``) around the search alone (no interpreter start-up, no imports),
so a busy shared machine does not inflate it; the hard limit that stops a worker is wall
time, and a hung cell's seconds are wall time too.

A counterexample counts as a kill only if ``guarded`` survives the very same choices
(where it diverges from them, the choices up to there and then the default schedule):
otherwise the search found a failure of ``guarded`` itself, which says nothing about the
mutant.
"""

from __future__ import annotations

import multiprocessing
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))  # ``mutants`` is the examples package
sys.path.insert(1, str(ROOT))  # ``tests.blind_spots``

from mutants import MUTANTS, Mutant  # noqa: E402
from mutants.make_traces import policy_spec  # noqa: E402
from mutants.shortest import shortest_run  # noqa: E402

from tests import blind_spots, deep_controls  # noqa: E402
from tests.blind_spots import CATCHES, HOTEL_CATCHES  # noqa: E402
from tests.deep_controls import DEEP_CATCHES  # noqa: E402
from txcheck.cli import build_parser  # noqa: E402
from txcheck.exploration.engines.shrink import delta_debug, search_below  # noqa: E402
from txcheck.exploration.kernel.context import SearchContext  # noqa: E402
from txcheck.exploration.kernel.report import Counterexample, ExploreResult  # noqa: E402
from txcheck.exploration.kernel.schedule import Deviations  # noqa: E402
from txcheck.exploration.kernel.session import Execution, execute  # noqa: E402
from txcheck.exploration.kernel.target import Bounds, Budget, Deadline, Target  # noqa: E402
from txcheck.exploration.search import explore  # noqa: E402
from txcheck.invariants import DEFAULT_INVARIANTS  # noqa: E402
from txcheck.models.plan.contract import Contract  # noqa: E402
from txcheck.models.plan.contract_loader import default_contract, load_contract  # noqa: E402
from txcheck.models.sim.fixture import default_fixture  # noqa: E402
from txcheck.models.sim.policies import Guarded  # noqa: E402
from txcheck.scenarios.catalog import SCENARIOS  # noqa: E402

__all__ = [
    "BLIND_CATCHES",
    "BLIND_SPOTS",
    "ENGINE_METHODS",
    "EXPERIMENTS",
    "METHODS",
    "Cell",
    "Minimum",
    "cli_defaults",
    "minimum",
    "run_blind_spot",
    "run_cell",
]

CONTRACT = default_contract()
FIXTURE = default_fixture()

ENGINE_METHODS: tuple[str, ...] = ("systematic", "random", "hypothesis")
METHODS: tuple[str, ...] = ("scenarios", *ENGINE_METHODS, "auto")
"""The methods of the kill matrix, in column order."""

EXPERIMENTS: tuple[str, ...] = ()
"""Proposed search changes, measured the same way (``--experiments``), as
``ENGINE+VARIANT`` (see ``_explore``). None at present: the last one, near-valid plans,
is in every engine's default plan sets (``search_plans``)."""

DETERMINISTIC = frozenset({"scenarios", "systematic"})
"""Methods whose search does not depend on the seed (repeats only re-time them)."""


@attrs.frozen(kw_only=True)
class Cell:
    """What one method did to one mutant with one seed.

    ``status``: ``killed`` (a counterexample ``guarded`` survives), ``guarded`` (the
    counterexample fails ``guarded`` too), ``missed`` (none within the budget) or
    ``hung`` (the worker overran its hard limit and was stopped) or ``error`` (the
    search raised; ``engine`` holds the message). ``shrunk`` is the
    (deviations, steps) of the ``auto`` counterexample after the proposed seed shrink.
    """

    mutant: str
    method: str
    seed: int
    status: str
    seconds: float
    invariant: str | None = None
    engine: str | None = None
    deviations: int | None = None
    steps: int | None = None
    scenarios: tuple[str, ...] = ()
    shrunk: tuple[int, int] | None = None
    shrink_seconds: float | None = None

    @property
    def killed(self) -> bool:
        return self.status == "killed"


@attrs.frozen(kw_only=True)
class Minimum:
    """The mutant's known shortest failing run (``SHORTEST``, single checkout plan)."""

    deviations: int
    steps: int
    invariant: str


def minimum(mutant: Mutant) -> Minimum:
    execution, _ = shortest_run(mutant.name, mutant.plan, mutant.policy(), stop_at_first=True)
    return Minimum(
        deviations=execution.deviations,
        steps=len(execution.steps),
        invariant=execution.failures[0].name if execution.failures else "none",
    )


def cli_defaults() -> dict[str, Any]:
    """``txcheck explore``'s own defaults, read from its parser (so they stay in step)."""
    args = build_parser().parse_args(["explore"])
    return {
        "max_examples": args.max_examples,
        "max_faults": args.max_faults,
        "time_budget": args.time_budget,
        "seeds": not args.no_seeds,
    }


def _target(
    spec: str,
    policy: Guarded,
    seed: int,
    time_budget: float | None,
    *,
    contract: Contract = CONTRACT,
) -> Target:
    """``policy`` (named ``spec``) under ``txcheck explore``'s defaults, but ``seed``,
    ``time_budget`` and the contract."""
    defaults = cli_defaults()
    return Target(
        policy_name=spec,
        policy=policy,
        contract=contract,
        fixture=FIXTURE,
        invariants=DEFAULT_INVARIANTS,
        bounds=Bounds(max_faults=defaults["max_faults"]),
        budget=Budget(
            max_examples=defaults["max_examples"],
            time_budget=time_budget,
            seed=seed,
            database=None,
        ),
    )


def _guarded_fails(execution: Execution, contract: Contract = CONTRACT) -> bool:
    """Whether ``guarded`` violates an invariant on the same plans and choices; where it
    diverges from them (it does something else there), on the choices up to that point
    and then the default schedule, so it is always judged on a whole run."""
    choices = [s.choice for s in execution.steps]

    def again(upto: int) -> Execution:
        return execute(
            Target(
                policy=Guarded(), contract=contract, fixture=FIXTURE, invariants=DEFAULT_INVARIANTS
            ),
            execution.run.plans,
            choices=choices[:upto],
        )

    run = again(len(choices))
    if run.divergence is not None and not run.failures:
        run = again(run.divergence.step)
    return bool(run.failures) or run.error is not None


def _judged(
    label: str,
    method: str,
    seed: int,
    seconds: float,
    execution: Execution,
    *,
    contract: Contract = CONTRACT,
) -> Cell:
    first = execution.failures[0].name if execution.failures else "policy_error"
    return Cell(
        mutant=label,
        method=method,
        seed=seed,
        status="guarded" if _guarded_fails(execution, contract) else "killed",
        seconds=seconds,
        invariant=first,
        deviations=execution.deviations,
        steps=len(execution.steps),
    )


def _scenarios(mutant: Mutant, seed: int) -> Cell:
    """The 14 scenarios under the mutant; the time is until the first one fails."""
    started = time.process_time()
    first: tuple[Execution, float] | None = None
    killers = []
    for scenario in SCENARIOS:
        execution = execute(
            Target(
                policy=mutant.policy(),
                contract=CONTRACT,
                fixture=FIXTURE,
                invariants=DEFAULT_INVARIANTS,
            ),
            scenario.plans,
            chooser=Deviations(scenario.deviations),
        )
        if not execution.ok:
            killers.append(scenario.id)
            if first is None:
                first = (execution, time.process_time() - started)
    if first is None:
        return Cell(
            mutant=mutant.name,
            method="scenarios",
            seed=seed,
            status="missed",
            seconds=time.process_time() - started,
        )
    cell = _judged(mutant.name, "scenarios", seed, first[1], first[0])
    return attrs.evolve(cell, engine=killers[0], scenarios=tuple(killers))


def _seed_shrink(target: Target, found: Counterexample, cap: float) -> Execution:
    """The proposed fix for unshrunk seed counterexamples: delta-debug the deviations,
    then search below their count systematically (as the random engine does)."""
    best = delta_debug(target, found.execution, SearchContext())
    report = search_below(
        target, found.plans, best.deviations, SearchContext(deadline=Deadline(cap))
    )
    if report is not None and report.counterexample is not None:
        best = report.counterexample.execution
    return best


def _explore(mutant: Mutant, method: str, seed: int, cap: float) -> Cell:
    defaults = cli_defaults()
    engine, _, _variant = method.partition("+")  # a proposed change would read the variant
    time_budget = defaults["time_budget"] if engine == "auto" else cap
    target = _target(policy_spec(mutant), mutant.policy(), seed, time_budget)
    seeds = defaults["seeds"] if engine == "auto" else False
    started = time.process_time()
    result: ExploreResult = explore(target, engine=engine, seeds=seeds)
    seconds = time.process_time() - started
    found = result.counterexample
    if found is None:
        return Cell(mutant=mutant.name, method=method, seed=seed, status="missed", seconds=seconds)
    cell = attrs.evolve(
        _judged(mutant.name, method, seed, seconds, found.execution), engine=found.found_by
    )
    if engine == "auto" and found.found_by == "seeds" and found.deviations > mutant.min_deviations:
        started = time.process_time()
        best = _seed_shrink(target, found, cap)
        cell = attrs.evolve(
            cell,
            shrunk=(best.deviations, len(best.steps)),
            shrink_seconds=time.process_time() - started,
        )
    return cell


def _work(index: int, method: str, seed: int, cap: float) -> Cell:
    mutant = MUTANTS[index]
    if method == "scenarios":
        return _scenarios(mutant, seed)
    return _explore(mutant, method, seed, cap)


def _reply(label: str, method: str, seed: int, work: Callable[[], Cell], conn: Any) -> None:
    try:
        cell = work()
    except Exception as error:  # reported as a cell, never a traceback mid-table
        problem = f"{type(error).__name__}: {error}"
        cell = Cell(
            mutant=label,
            method=method,
            seed=seed,
            status="error",
            seconds=0.0,
            engine=problem[:160],
        )
    conn.send(cell)
    conn.close()


def _forked(
    label: str, method: str, seed: int, work: Callable[[], Cell], hard_limit: float
) -> Cell:
    """``work()`` in a forked worker, stopped after ``hard_limit`` s."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    worker = context.Process(target=_reply, args=(label, method, seed, work, send), daemon=True)
    started = time.perf_counter()
    worker.start()
    send.close()
    cell: Cell | None = None
    if receive.poll(hard_limit):
        try:
            cell = receive.recv()
        except EOFError:  # the worker died without a word (killed, out of memory)
            cell = Cell(
                mutant=label,
                method=method,
                seed=seed,
                status="error",
                seconds=time.perf_counter() - started,
                engine="worker died",
            )
    if cell is None:
        worker.kill()
    worker.join()
    receive.close()
    if cell is None:
        spent = time.perf_counter() - started
        return Cell(mutant=label, method=method, seed=seed, status="hung", seconds=spent)
    return cell


def run_cell(mutant: Mutant, method: str, seed: int, *, cap: float, hard_limit: float) -> Cell:
    """``method`` against ``mutant`` in a forked worker, stopped after ``hard_limit`` s."""
    index = MUTANTS.index(mutant)
    return _forked(mutant.name, method, seed, lambda: _work(index, method, seed, cap), hard_limit)


BLIND_CLASSES: dict[str, type[Guarded]] = {
    **{f"tests.blind_spots:{name}": getattr(blind_spots, name) for name in CATCHES},
    **{f"tests.blind_spots:{name}": getattr(blind_spots, name) for name in HOTEL_CATCHES},
    **{f"tests.deep_controls:{name}": getattr(deep_controls, name) for name in DEEP_CATCHES},
}
"""Every regression mutant by its ``--policy`` spec: ``tests/blind_spots.py``'s (the
search's former blind spots and the invariants' former trust, by class) and
``tests/deep_controls.py``'s (bugs that need three deviations on a double submission)."""

BLIND_SPOTS: tuple[str, ...] = tuple(BLIND_CLASSES)
"""The regression mutants' specs, in report order."""

BLIND_CATCHES: dict[str, frozenset[str]] = {**CATCHES, **HOTEL_CATCHES, **DEEP_CATCHES}
"""The invariants each regression mutant's docstring names, by class name."""

HOTEL = ROOT / "examples" / "contracts" / "hotel.json"
BLIND_CONTRACTS: dict[str, Path] = {f"tests.blind_spots:{name}": HOTEL for name in HOTEL_CATCHES}
"""The regression mutants explored on another contract than the default (``--contract``)."""


def _blind(spec: str, method: str, seed: int) -> Cell:
    """``txcheck explore --policy SPEC --seed SEED`` with explore's defaults (``auto``), or
    with ``--no-seeds`` (``method`` ``auto-no-seeds``)."""
    defaults = cli_defaults()
    path = BLIND_CONTRACTS.get(spec)
    contract = load_contract(str(path)) if path is not None else CONTRACT
    target = _target(spec, BLIND_CLASSES[spec](), seed, defaults["time_budget"], contract=contract)
    seeds = defaults["seeds"] and method == "auto"
    started = time.process_time()
    result: ExploreResult = explore(target, engine="auto", seeds=seeds)
    seconds = time.process_time() - started
    found = result.counterexample
    if found is None:
        return Cell(mutant=spec, method=method, seed=seed, status="missed", seconds=seconds)
    cell = _judged(spec, method, seed, seconds, found.execution, contract=contract)
    return attrs.evolve(cell, engine=found.found_by)


def run_blind_spot(spec: str, method: str, seed: int, *, hard_limit: float) -> Cell:
    """A regression mutant (``BLIND_SPOTS``) under ``explore``'s defaults (``auto`` or
    ``auto --no-seeds``) in a forked worker, stopped after ``hard_limit`` s."""
    return _forked(spec, method, seed, lambda: _blind(spec, method, seed), hard_limit)
