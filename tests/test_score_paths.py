"""The scorer's shortcut for a proposal that makes exactly the expected calls gives the
result of the general road: same alignment, violations, warnings and metrics.

Cases come from the benchmark's generator (every kind and vendor format), with variants
that change one argument, the order, a key or the ordered flag, so that the shortcut is
taken, and missed, for the right reasons.
"""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from txcheck.models.plan.contract_loader import default_contract
from txcheck.scoring import scorer
from txcheck.scoring.cases import parse_cases
from txcheck.scoring.scorer import score_file

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = default_contract()


def _bench_cases(count: int) -> list[dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("bench_score", ROOT / "benchmarks/bench_score.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [json.loads(line) for line in module.build(count)[0].splitlines()]


def _variants(case: dict[str, Any]) -> list[dict[str, Any]]:
    out = [case]
    calls = case["expect"]["calls"]
    if calls:
        changed = copy.deepcopy(case)
        first = changed["expect"]["calls"][0]["arguments"]
        first[sorted(first)[0]] = "other"
        out.append(changed)
        ordered = copy.deepcopy(case)
        ordered["expect"]["ordered"] = True
        out.append(ordered)
        marked = copy.deepcopy(case)
        arguments = marked["expect"]["calls"][-1]["arguments"]
        key = sorted(arguments)[-1]
        arguments[key] = {"$any": [arguments[key], "x"]}
        out.append(marked)
    if len(calls) > 1:
        swapped = copy.deepcopy(case)
        swapped["expect"]["calls"].reverse()
        out.append(swapped)
    for k, variant in enumerate(out):
        variant["id"] = f"{case['id']}-{k}"
    return out


def _scored(cases: list[dict[str, Any]]) -> Any:
    text = "\n".join(json.dumps(c) for c in cases)
    return score_file(CONTRACT, parse_cases(text, source="t")).to_json()


def test_the_shortcut_gives_the_general_result(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [v for c in _bench_cases(60) for v in _variants(c)]
    taken: list[bool] = []
    repeats = scorer._repeats
    monkeypatch.setattr(scorer, "_repeats", lambda p, c: taken.append(repeats(p, c)) or taken[-1])
    quick = _scored(cases)
    assert True in taken and False in taken  # both roads were taken
    monkeypatch.setattr(scorer, "_repeats", lambda p, c: False)
    assert _scored(cases) == quick
