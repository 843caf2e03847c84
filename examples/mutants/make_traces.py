"""Write each mutant's shortest known failing run as a replayable ``txcheck-trace/1`` file.

    python examples/mutants/make_traces.py            # writes examples/mutants/traces/
    python examples/mutants/make_traces.py --check    # exit 1 if a committed file differs

Each run is the mutant on its plan with its ``SHORTEST`` script, stopped at the first
failing invariant. Replay one with ``txcheck replay examples/mutants/traces/NAME.json
--policy mutants.policies:CLASS`` (``PYTHONPATH=examples``), or under ``guarded`` to see
it survive the same choices. Traces are deterministic: rerunning writes the same bytes.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: make ``mutants`` importable
    sys.path.insert(0, str(HERE.parent))

from mutants import MUTANTS, Mutant  # noqa: E402
from mutants.shortest import PLANS, shortest_run  # noqa: E402
from txcheck import default_contract, default_fixture, dumps_trace, trace_of  # noqa: E402

__all__ = ["TRACES", "main", "policy_spec", "trace_text"]

TRACES = HERE / "traces"
"""Where the trace files live: ``traces/<mutant name>.json``."""


def policy_spec(mutant: Mutant) -> str:
    """The mutant as ``txcheck --policy`` names it (with ``examples`` on the path)."""
    return f"mutants.policies:{mutant.policy.__name__}"


def trace_text(mutant: Mutant) -> str:
    """The trace file's text for ``mutant``'s shortest known failing run."""
    execution, _ = shortest_run(mutant.name, mutant.plan, mutant.policy(), stop_at_first=True)
    document = trace_of(
        execution,
        policy=policy_spec(mutant),
        contract=default_contract(),
        fixture=default_fixture(),
        plans=[PLANS[mutant.plan]],
        extra={"mutant": mutant.name, "catches": list(mutant.catches)},
    )
    return dumps_trace(document)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    TRACES.mkdir(exist_ok=True)
    stale = []
    for mutant in MUTANTS:
        path = TRACES / f"{mutant.name}.json"
        text = trace_text(mutant)
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
            continue
        path.write_text(text, encoding="utf-8")
        print(f"wrote traces/{path.name}")
    if stale:
        print(f"out of date: {', '.join(stale)} (run make_traces.py)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
