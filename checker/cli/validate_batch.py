"""``txcheck validate`` over many proposals in one process.

Sources are proposal files (``validate CONTRACT P1 P2 ...``) or the lines of a JSON Lines
file (``validate [CONTRACT] --jsonl FILE``). A line is a proposal document, or an object
``{"proposal", "id"?, "tools"?, "meta"?}``; a line's ``tools`` (any contract form) take
precedence over CONTRACT, and parsed contracts are cached per identical tools document.

Output, one result per proposal as it is validated, then a summary:

- human: ``VALID``/``INVALID`` and the source per proposal, each violation indented below;
- ``--json``: JSON Lines, one object per proposal, ``{"source", "line", "id", "valid",
  "violations", "plan", "levels_checked", "levels_skipped"}`` (``line`` and ``id`` are
  ``null`` for files), then ``{"summary": {"proposals", "valid", "invalid", "errors":
  [{"source", "line", "message"}]}}``.

Exit 0 when every proposal is valid, 1 when some is invalid, 2 when any file or line was
bad input (reported on stderr as ``FILE:LINE: problem``; the rest is still validated),
3 when nothing was validated at all.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import Any

import attrs

from txcheck.cli import EXIT_BAD_INPUT, EXIT_FOUND, EXIT_INCONCLUSIVE, EXIT_OK
from txcheck.cli.cmd_validate import world_check
from txcheck.cli.contract_warnings import warn_about
from txcheck.cli.progress_line import LineProgress
from txcheck.cli.safe_text import one_line
from txcheck.models.canonical import printable_json
from txcheck.models.errors import InputError
from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import load_contract
from txcheck.models.plan.proposal import Plan
from txcheck.models.plan.proposal_parser import load_proposal, parse_proposal
from txcheck.models.plan.validation import validate
from txcheck.models.plan.verdict import Verdict
from txcheck.models.strict_json import StrictJsonError, loads_strict
from txcheck.scoring.case_contracts import CaseContracts
from txcheck.scoring.cases import open_cases
from txcheck.scoring.reading import LineError, iter_lines

__all__ = ["run_files", "run_jsonl"]

_LINE_KEYS = frozenset({"proposal", "id", "tools", "meta"})
_SHOWN_VIOLATIONS = 20


@attrs.frozen(kw_only=True)
class _Item:
    """One proposal to validate, or the problem that kept it from being read."""

    source: str
    line: int | None
    id: str | None = None
    contract: Contract | None = None
    plan: Plan | None = None
    problem: str | None = None


@attrs.define
class _Batch:
    """Prints results as they come and counts them."""

    as_json: bool
    valid: int = 0
    invalid: int = 0
    errors: list[dict[str, Any]] = attrs.field(factory=list)
    progress: LineProgress = attrs.field(factory=lambda: LineProgress("proposals validated"))

    def result(self, item: _Item, verdict: Verdict) -> None:
        if verdict.valid:
            self.valid += 1
        else:
            self.invalid += 1
        self.progress.clear()
        if self.as_json:
            record = {"source": item.source, "line": item.line, "id": item.id}
            record.update(verdict.to_json())
            text = json.dumps(record, sort_keys=True, ensure_ascii=False)
            sys.stdout.write(printable_json(text) + "\n")
        else:
            sys.stdout.write(_human(item, verdict))
        self.progress.tick(self.valid + self.invalid, len(self.errors))

    def error(self, item: _Item) -> None:
        assert item.problem is not None
        self.errors.append({"source": item.source, "line": item.line, "message": item.problem})
        self.progress.clear()
        where = one_line(item.source if item.line is None else f"{item.source}:{item.line}", None)
        print(f"txcheck validate: {where}: {one_line(item.problem, 400)}", file=sys.stderr)

    def finish(self) -> int:
        self.progress.clear()
        total = self.valid + self.invalid
        if self.as_json:
            summary = {
                "proposals": total,
                "valid": self.valid,
                "invalid": self.invalid,
                "errors": self.errors,
            }
            sys.stdout.write(json.dumps({"summary": summary}, sort_keys=True) + "\n")
        else:
            bad = f", {len(self.errors)} bad input" if self.errors else ""
            sys.stdout.write(
                f"Validated {total} proposal(s): {self.valid} valid, {self.invalid} invalid{bad}.\n"
            )
        if self.errors:
            return EXIT_BAD_INPUT
        if not total:
            print("txcheck validate: inconclusive: no proposal was validated", file=sys.stderr)
            return EXIT_INCONCLUSIVE
        return EXIT_FOUND if self.invalid else EXIT_OK


def _human(item: _Item, verdict: Verdict) -> str:
    where = item.source if item.line is None else f"{item.source}:{item.line}"
    label = f"{where} ({one_line(item.id, 60)})" if item.id else where
    calls = len(item.plan.calls) if item.plan is not None else 0
    if verdict.valid:
        return f"VALID    {one_line(label, 200)}: {calls} call(s)\n"
    lines = [f"INVALID  {one_line(label, 200)}: {len(verdict.violations)} violation(s)"]
    for v in verdict.violations[:_SHOWN_VIOLATIONS]:
        call = f" {one_line(v.call, 40)}" if v.call is not None else ""
        lines.append(f"  {v.level} {v.code}{call}: {one_line(v.message, 300)}")
    if len(verdict.violations) > _SHOWN_VIOLATIONS:
        lines.append(f"  ... {len(verdict.violations) - _SHOWN_VIOLATIONS} more (use --json)")
    return "\n".join(lines) + "\n"


def _run(args: argparse.Namespace, items: Iterator[_Item]) -> int:
    business = world_check(args)
    batch = _Batch(as_json=args.json)
    for item in items:
        if item.problem is not None:
            batch.error(item)
            continue
        assert item.contract is not None and item.plan is not None
        problem = None if business is None else business.unjudged(item.contract, item.plan.calls)
        if problem is not None:
            unjudged = f"the business level cannot judge it: {problem}"
            batch.error(attrs.evolve(item, problem=unjudged))
            continue
        batch.result(item, validate(item.contract, item.plan, business=business))
    return batch.finish()


def run_files(args: argparse.Namespace, contract_path: str, proposals: list[str]) -> int:
    """``validate CONTRACT P1 P2 ...``: each file one proposal."""
    contract = load_contract(contract_path)
    warn_about("validate", contract)

    def items() -> Iterator[_Item]:
        for path in proposals:
            try:
                plan = load_proposal(path)
            except InputError as error:
                yield _Item(source=path, line=error.line, problem=_problem(error))
                continue
            yield _Item(source=path, line=None, contract=contract, plan=plan)

    return _run(args, items())


def _problem(error: InputError) -> str:
    at = f"at {error.path}: " if error.path else ""
    return at + " ".join(error.problem.split())


def run_jsonl(args: argparse.Namespace, contract_path: str | None, path: str) -> int:
    """``validate [CONTRACT] --jsonl FILE``: each line one proposal."""
    contract = load_contract(contract_path) if contract_path else None
    if contract is not None:
        warn_about("validate", contract)
    contracts = CaseContracts(contract)
    handle = open_cases(path)

    def items() -> Iterator[_Item]:
        with handle:
            for number, text in iter_lines(handle):
                yield _line_item(path, number, text, contracts)

    return _run(args, items())


def _line_item(source: str, number: int, text: str | LineError, contracts: CaseContracts) -> _Item:
    if isinstance(text, LineError):
        return _Item(source=source, line=number, problem=text.message)
    try:
        value = loads_strict(text)
    except StrictJsonError as error:
        column = f"column {error.column}: " if error.column is not None else ""
        return _Item(source=source, line=number, problem=f"not valid JSON: {column}{error.problem}")
    except RecursionError:
        return _Item(source=source, line=number, problem="not valid JSON: nests too deeply")
    item_id: str | None = None
    tools = None
    proposal = value
    if isinstance(value, dict) and "proposal" in value:
        unknown = sorted(set(value) - _LINE_KEYS)
        if unknown:
            return _Item(
                source=source,
                line=number,
                problem=f"unknown key {unknown[0]!r} (expected only id, proposal, tools, meta)",
            )
        proposal, tools = value["proposal"], value.get("tools")
        raw_id = value.get("id")
        if raw_id is not None and not isinstance(raw_id, str):
            return _Item(source=source, line=number, problem="'id' must be a string")
        item_id = raw_id
    try:
        context = contracts.for_tools(tools)
        plan = parse_proposal(proposal, source=f"{source}:{number}")
    except InputError as error:
        return _Item(source=source, line=number, id=item_id, problem=_problem(error))
    return _Item(source=source, line=number, id=item_id, contract=context.contract, plan=plan)
