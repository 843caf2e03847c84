"""The cost of real stores inside ``txcheck explore``: guarded's journal and idempotency
records on SQLite against the in-memory world, in the same run.

    python benchmarks/bench_stores_explore.py [--max-faults N] [--rounds N]

Runs the systematic search of guarded on the bundled checkout plan (one instance, and two:
a double submission) to ``--max-faults`` deviations, first in the in-memory world, then
with ``--store journal=sqlite --store idempotency=sqlite``, interleaved for ``--rounds``
rounds. Reports CPU seconds (this process: the search runs in it), runs, states and the
CPU per run, each the median over the rounds, and the ratio SQLite / in-memory as the
median of the per-round ratios. It also checks that both searches visited the same number
of states with the same verdict (the fingerprints read the same records). A measurement,
not a test.
"""

from __future__ import annotations

import argparse
import resource
import statistics
from pathlib import Path
from typing import Any

from txcheck.exploration.kernel.target import Bounds, Budget, Deadline, Target
from txcheck.exploration.search import explore
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.stored import Stores
from txcheck.models.stores.sqlite import SqliteIdempotencyStore, SqliteJournal

PLAN = Path(__file__).resolve().parent.parent / "examples" / "proposals" / "valid_openai_chat.json"


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _search(max_faults: int, stores: Stores | None) -> tuple[float, int, int, str]:
    policy = builtin_policy("guarded")
    assert policy is not None
    plan = load_proposal(str(PLAN))
    target = Target(
        policy=policy,
        plans=((plan,), (plan, plan)),
        stores=stores,
        bounds=Bounds(max_faults=max_faults),
        budget=Budget(seed=1),
    )
    started = _cpu()
    result: Any = explore(target, engine="systematic", seeds=False, deadline=Deadline())
    spent = _cpu() - started
    report = result.reports[0]
    found = "counterexample" if result.counterexample is not None else "pass"
    return spent, report.runs, report.states, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-faults", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sqlite = Stores(
        journal=SqliteJournal,
        idempotency=SqliteIdempotencyStore,
        names={"journal": "sqlite", "idempotency": "sqlite"},
    )
    rows: dict[str, list[tuple[float, int, int, str]]] = {"in-memory": [], "SQLite": []}
    for _ in range(args.rounds):
        rows["in-memory"].append(_search(args.max_faults, None))
        rows["SQLite"].append(_search(args.max_faults, sqlite))
    memory, stored = rows["in-memory"], rows["SQLite"]
    same = all(m[1:] == s[1:] for m, s in zip(memory, stored, strict=True))
    ratios = [s[0] / m[0] for m, s in zip(memory, stored, strict=True)]
    print(
        f"guarded, checkout plan (1 and 2 instances), systematic to {args.max_faults} "
        f"deviations, {args.rounds} interleaved rounds; medians"
    )
    print(f"{'world':<10} {'verdict':<8} {'runs':>7} {'states':>8} {'CPU s':>7} {'ms/run':>7}")
    for name, found in rows.items():
        cpu = statistics.median(r[0] for r in found)
        runs, states, verdict = found[0][1], found[0][2], found[0][3]
        print(
            f"{name:<10} {verdict:<8} {runs:>7} {states:>8} {cpu:>7.2f} {1000 * cpu / runs:>7.2f}"
        )
    print(
        f"SQLite / in-memory CPU: {statistics.median(ratios):.2f}x "
        f"(per round: {', '.join(f'{r:.2f}' for r in ratios)}); "
        f"same runs, states and verdicts: {same}"
    )


if __name__ == "__main__":
    main()
