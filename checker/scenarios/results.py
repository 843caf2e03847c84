"""The scenario result files: ``raw_results.jsonl`` and ``summary.json``.

Both are byte-identical across runs, machines and directories: every line is canonical
JSON (sorted keys), nothing holds a timestamp or a path outside the output folder, and no
value depends on set or dict iteration order. ``summary.json`` carries the SHA-256 of the
raw file, so one hash pins the behaviour of all 19 runs.

The two names are fixed, so what already holds them is checked before the runs
(``check_results``, ``txcheck.traces.destination``): a device, a pipe, a folder or a
symbolic link there is refused, and so is a file that is not a previous result file of
the same name, unless ``force``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from txcheck.models.canonical import printable_json, stable_hash
from txcheck.models.input_files import MAX_DOCUMENT_BYTES, open_regular, read_regular
from txcheck.models.plan.contract import Contract
from txcheck.models.sim.fixture import WorldFixture
from txcheck.models.strict_json import loads_strict
from txcheck.scenarios.catalog import DIMENSIONS
from txcheck.scenarios.run import ScenarioRun
from txcheck.scoring.reading import iter_lines
from txcheck.traces.atomic import write_atomically
from txcheck.traces.destination import Output, OutputPathError, check_destination

__all__ = [
    "RAW_NAME",
    "SUMMARY_FORMAT",
    "SUMMARY_NAME",
    "ResultFiles",
    "check_results",
    "is_raw_results",
    "is_summary",
    "raw_text",
    "summarize",
    "write_results",
]

RAW_NAME = "raw_results.jsonl"
SUMMARY_NAME = "summary.json"
SUMMARY_FORMAT = "txcheck-scenarios/1"


def raw_text(runs: Sequence[ScenarioRun]) -> str:
    """One canonical JSON object per run, in run order."""
    return "".join(
        printable_json(
            json.dumps(r.record(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        )
        + "\n"
        for r in runs
    )


def _dimensions(runs: Sequence[ScenarioRun]) -> dict[str, Any]:
    counts: dict[str, Any] = {}
    for dimension in DIMENSIONS:
        own = [r for r in runs if r.scenario.dimension == dimension and r.control is None]
        controls = [r for r in runs if r.scenario.dimension == dimension and r.control]
        counts[dimension] = {
            "scenarios": len(own),
            "passed": sum(1 for r in own if r.met),
            "failed": [r.scenario.id for r in own if not r.met],
            "controls": len(controls),
            "controls_seen": sum(1 for r in controls if r.met),
        }
    return counts


def _controls(runs: Sequence[ScenarioRun]) -> dict[str, Any]:
    return {
        r.policy: {
            "scenario": r.scenario.id,
            "expected_failure": r.expectation,
            "seen": r.met,
            "designated": r.control.designated if r.control else None,
            "invariants_fired": r.fired,
        }
        for r in runs
        if r.control is not None
    }


def summarize(
    runs: Sequence[ScenarioRun], *, raw_sha256: str, contract: Contract, fixture: WorldFixture
) -> dict[str, Any]:
    """The ``summary.json`` document."""
    scenarios = [r for r in runs if r.control is None]
    controls = [r for r in runs if r.control is not None]
    passed = sum(1 for r in scenarios if r.met)
    seen = sum(1 for r in controls if r.met)
    return {
        "format": SUMMARY_FORMAT,
        "raw_results": {"file": RAW_NAME, "runs": len(runs), "sha256": raw_sha256},
        "inputs": {
            "contract_sha256": stable_hash(dict(contract.document)),
            "world_sha256": stable_hash(dict(fixture.document)),
        },
        "scenarios": {"total": len(scenarios), "passed": passed},
        "controls": {"total": len(controls), "seen": seen, "runs": _controls(runs)},
        "dimensions": _dimensions(runs),
        "ok": passed == len(scenarios) and seen == len(controls),
    }


@attrs.frozen(kw_only=True)
class ResultFiles:
    """What ``write_results`` wrote: the two files and the summary document."""

    raw: Path
    summary_path: Path
    summary: dict[str, Any] = attrs.field(eq=False)

    @property
    def sha256(self) -> str:
        return str(self.summary["raw_results"]["sha256"])

    @property
    def ok(self) -> bool:
        return bool(self.summary["ok"])


_RAW_KEYS = frozenset({"run", "kind", "scenario", "dimension", "policy", "outcome"})


def is_raw_results(path: str | Path) -> bool:
    """Whether ``path`` starts like a ``raw_results.jsonl`` (its first line is a run
    record), or is empty. Reads the first line only."""
    try:
        with open_regular(path) as handle:
            first = next(iter_lines(handle), None)
        if first is None:
            return True
        record = loads_strict(first[1]) if isinstance(first[1], str) else None
    except (OSError, ValueError, RecursionError):  # InputError, StrictJsonError: ValueErrors
        return False
    return isinstance(record, dict) and record.keys() >= _RAW_KEYS


def is_summary(path: str | Path) -> bool:
    """Whether ``path`` is a ``summary.json`` of scenario results, or is empty."""
    try:
        data = read_regular(path, limit=MAX_DOCUMENT_BYTES)
        document = loads_strict(data) if data.strip() else {"format": SUMMARY_FORMAT}
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("format") == SUMMARY_FORMAT


_OUTPUTS = {
    RAW_NAME: Output(
        what="the raw results", kind="scenario results file", option="--out", ours=is_raw_results
    ),
    SUMMARY_NAME: Output(
        what="the summary", kind=f"{SUMMARY_FORMAT} file", option="--out", ours=is_summary
    ),
}


def check_results(out: Path, *, force: bool = False) -> None:
    """Raise ``OutputPathError`` (one line naming the file) unless both result files can
    be written into the existing folder ``out``: what holds their names is a previous
    result file, or nothing (any regular file, or a link, with ``force``)."""
    for name, output in _OUTPUTS.items():
        check_destination(out / name, output, force=force, error=OutputPathError)


def _write(path: Path, data: bytes) -> None:
    """``write_atomically``, with ``path`` as the failing file's name."""
    try:
        write_atomically(path, data)
    except OSError as error:
        raise OSError(error.errno, error.strerror or str(error), str(path)) from error


def write_results(
    runs: Sequence[ScenarioRun],
    out: Path,
    *,
    contract: Contract,
    fixture: WorldFixture,
    force: bool = False,
) -> ResultFiles:
    """Write both files into ``out`` (created if missing), each whole or not at all: a
    temporary file in ``out`` renamed over the name, so a symbolic link planted under
    either name is replaced (with ``force``), never written through. ``OutputPathError``
    when ``check_results`` refuses, ``OSError`` when writing fails."""
    out.mkdir(parents=True, exist_ok=True)
    check_results(out, force=force)
    data = raw_text(runs).encode("utf-8")
    raw = out / RAW_NAME
    _write(raw, data)
    summary = summarize(
        runs, raw_sha256=hashlib.sha256(data).hexdigest(), contract=contract, fixture=fixture
    )
    summary_path = out / SUMMARY_NAME
    _write(
        summary_path,
        (
            printable_json(json.dumps(summary, sort_keys=True, indent=2, ensure_ascii=False)) + "\n"
        ).encode(),
    )
    return ResultFiles(raw=raw, summary_path=summary_path, summary=summary)
