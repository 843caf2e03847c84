"""txcheck on the real BFCL data: ground truth, alternatives, optional arguments, mutations,
and batch validation time.

    python benchmarks/bench_bfcl.py [--data DIR]

Uses the data folder of the installed ``bfcl-eval`` package (``pip install bfcl-eval``;
not a txcheck dependency) or ``--data DIR``; without either it says so and exits 0. It
imports the eight single-turn AST categories with ``txcheck.importers.bfcl`` and measures,
in one process:

1. the ground truth as the proposal: pass rate over the schema-valid cases (should be 100%)
   and the schema violations of the others (genuine breaches of BFCL's own schemas);
2. for every case with another acceptable value (``$any``) or an optional argument, a
   proposal using the other value / leaving the optional argument out: pass rate over the
   variants that are schema-valid (a listed alternative may itself break the schema, e.g.
   "ft" for an enum of "meter", "feet", or leave out an argument the schema requires: those
   fail, with their code, as they should);
3. for every case with an integer, number, boolean or string argument, a proposal giving
   that argument a value of the wrong type: caught rate, and the code it is caught with;
4. ``txcheck validate --jsonl`` over all ground-truth proposals, in process: CPU seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import io
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from txcheck.cli import main as txcheck_main
from txcheck.importers.bfcl import CATEGORIES, bfcl_cases
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.scorer import score_file

_WRONG = {"integer": "7", "number": "7.5", "boolean": "true", "string": 7}


def _data_dir(given: str | None) -> Path | None:
    if given:
        return Path(given)
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _args(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [json.loads(c["function"]["arguments"]) for c in case["proposal"].get("tool_calls", [])]


def _set_args(case: dict[str, Any], args: list[dict[str, Any]], suffix: str) -> dict[str, Any]:
    out = copy.deepcopy(case)
    out["id"] = f"{case['id']}#{suffix}"
    for call, a in zip(out["proposal"]["tool_calls"], args, strict=True):
        call["function"]["arguments"] = json.dumps(a)
    return out


def _alternative(case: dict[str, Any]) -> dict[str, Any] | None:
    """The ground truth with, in each call, the second ``$any`` option where there is one
    and every optional argument left out; ``None`` when there is nothing to vary."""
    args = _args(case)
    changed = False
    for call, expected in zip(args, case["expect"]["calls"], strict=True):
        for name, pattern in expected["arguments"].items():
            if isinstance(pattern, dict) and list(pattern) == ["$optional"]:
                changed = changed or name in call
                call.pop(name, None)
            elif isinstance(pattern, dict) and list(pattern) == ["$any"] and name in call:
                call[name] = pattern["$any"][1]
                changed = True
    return _set_args(case, args, "alt") if changed else None


def _mutant(case: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """The ground truth with one scalar argument given a value of the wrong type."""
    args = _args(case)
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in case["tools"]}
    for call, expected in zip(args, case["expect"]["calls"], strict=True):
        props = tools[expected["name"]].get("properties", {})
        for name in sorted(call):
            kind = props.get(name, {}).get("type")
            if kind in _WRONG and "enum" not in props[name]:
                call[name] = _WRONG[kind]
                return _set_args(case, args, "mut"), name
    return None


def _score(cases: list[dict[str, Any]]) -> Any:
    return score_file(None, parse_cases("\n".join(json.dumps(c) for c in cases), source="bfcl"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="BFCL data folder (default: the installed bfcl-eval's)")
    args = parser.parse_args(argv)
    data = _data_dir(args.data)
    if data is None or not data.is_dir():
        print("skipped: bfcl-eval is not installed (pip install bfcl-eval) and no --data given")
        return 0
    cases = list(bfcl_cases(data, CATEGORIES))
    print(
        f"data: {data.name} folder of bfcl-eval, {len(cases)} cases in {len(CATEGORIES)} categories"
    )

    truth = _score(cases)
    valid = [r for r in truth.cases if r.strict.schema_valid]
    breaches = Counter(
        v.code for r in truth.cases for v in r.strict.violations if v.level in ("json", "schema")
    )
    print(
        f"1. ground truth: {sum(r.strict.passed for r in valid)}/{len(valid)} schema-valid cases "
        f"pass; {len(truth.cases) - len(valid)} cases break BFCL's own schemas "
        f"({sum(breaches.values())} violations: {dict(breaches.most_common())})"
    )
    valid_ids = {r.id for r in valid}
    alternatives = [a for c in cases if c["id"] in valid_ids if (a := _alternative(c))]
    alt = _score(alternatives)
    alt_valid = [r for r in alt.cases if r.strict.schema_valid]
    alt_breaches = Counter(
        next(v.code for v in r.strict.violations) for r in alt.cases if not r.strict.schema_valid
    )
    print(
        f"2. another acceptable value / optional left out: "
        f"{sum(r.strict.passed for r in alt_valid)}/{len(alt_valid)} schema-valid variants pass; "
        f"{len(alt.cases) - len(alt_valid)} variants fail because the other listed value itself "
        f"breaks the schema ({dict(alt_breaches.most_common())})"
    )
    mutants = [m for c in cases if c["id"] in valid_ids if (m := _mutant(c))]
    mut = _score([m for m, _ in mutants])
    codes = Counter(next((v.code for v in r.strict.violations), "none") for r in mut.cases)
    caught = sum(not r.strict.passed for r in mut.cases)
    print(f"3. wrong-type mutants: {caught}/{len(mut.cases)} caught, first codes {dict(codes)}")

    with tempfile.TemporaryDirectory() as tmp:
        batch = Path(tmp) / "proposals.jsonl"
        batch.write_text(
            "".join(
                json.dumps({"id": c["id"], "proposal": c["proposal"], "tools": c["tools"]}) + "\n"
                for c in cases
            ),
            encoding="utf-8",
        )
        cpu, wall = time.process_time(), time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = txcheck_main(["validate", "--jsonl", str(batch), "--json"])
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(
        f"4. validate --jsonl of {len(cases)} proposals in one process: {cpu:.2f} s CPU, "
        f"{wall:.2f} s wall (exit {code})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
