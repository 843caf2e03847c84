"""``txcheck score --json`` prints the same bytes as recorded in tests/golden/score_json.sha256.

The recorded digests were taken before the scorer's speed work, on the benchmark's 2,000
checkout cases (``benchmarks/bench_score.py``) and on the example cases files, so any
change to a verdict, a message, a metric or the output layout shows up here. When an output
change is intended, regenerate the digests (the command is in the failure message).
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = str(ROOT / "examples/checkout/contract.json")
GOLDEN = ROOT / "tests" / "golden" / "score_json.sha256"
FILES = {
    "bench_score-2000.jsonl": None,  # written from the benchmark's generator
    "examples/audit/cases.jsonl": ROOT / "examples/audit/cases.jsonl",
    "examples/evaluate/cases.jsonl": ROOT / "examples/evaluate/cases.jsonl",
}


def _golden() -> dict[str, str]:
    pairs = (line.split() for line in GOLDEN.read_text(encoding="utf-8").splitlines())
    return {name: digest for digest, name in pairs}


def _bench_text() -> str:
    spec = importlib.util.spec_from_file_location("bench_score", ROOT / "benchmarks/bench_score.py")
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text: str = module.build(2000)[0]
    return text


def _score_json(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    main(["score", CONTRACT, str(path), "--json"])
    return capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(FILES))
def test_score_json_is_unchanged(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = FILES[name]
    if path is None:
        path = tmp_path / name
        path.write_text(_bench_text(), encoding="utf-8")
    digest = hashlib.sha256(_score_json(path, capsys).encode("utf-8")).hexdigest()
    assert digest == _golden()[name], (
        f"`txcheck score --json` output on {name} changed; if that is intended, regenerate "
        "tests/golden/score_json.sha256 (sha256 of the output, then the name, one per line)"
    )
