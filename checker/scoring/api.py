"""``score``: a cases file scored against a contract, in one call (the public API's)."""

from __future__ import annotations

from pathlib import Path

from txcheck.models.plan.contract import Contract
from txcheck.models.plan.contract_loader import load_contract
from txcheck.scoring.cases import read_cases
from txcheck.scoring.scorer import ScoreReport, score_file

__all__ = ["score"]


def score(contract: Contract | str | Path, cases: str | Path) -> ScoreReport:
    """Score a cases file (``.jsonl``, one case a line) against ``contract`` (a
    ``Contract`` or a contract file): the strict and legacy result of every case."""
    loaded = contract if isinstance(contract, Contract) else load_contract(contract)
    return score_file(loaded, read_cases(cases))
