"""Start-up matches the work: a search that runs no Hypothesis engine never imports
Hypothesis (about 0.2 s of CPU with its strategies and hypothesis-jsonschema), and one
that does still keeps Hypothesis' files under ``.txcheck/`` (issue 23, item 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import configuration

from txcheck.exploration.spread import generated as spread

ROOT = Path(__file__).resolve().parent.parent
ONE_CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {
                "name": "create_order",
                "arguments": json.dumps(
                    {
                        "order_id": "ord_1001",
                        "customer_id": "cus_1",
                        "items": [{"sku": "sku_book", "quantity": 2}],
                        "currency": "USD",
                        "idempotency_key": "ord_1001-create",
                    }
                ),
            },
        }
    ],
}
HEAVY = ("hypothesis", "hypothesis_jsonschema", "dask", "distributed")
"""Top-level packages a search of given plans by the systematic or random engine needs
none of."""


def _explore_in_a_fresh_process(cwd: Path, *argv: str) -> tuple[int, dict[str, object], list[str]]:
    """``main(["explore", *argv, "--json"])`` in a fresh interpreter (nothing imported
    before it) in ``cwd``: its exit code, its JSON and the heavy packages it imported."""
    code = (
        "import json, os, sys\n"
        "from txcheck.cli import main\n"
        f"code = main(['explore', *{list(argv)!r}, '--json'])\n"
        f"heavy = sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})\n"
        "left = os.environ.get('HYPOTHESIS_STORAGE_DIRECTORY')\n"
        "print(json.dumps({'code': code, 'heavy': heavy, 'left': left}))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYPOTHESIS")}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    *report, last = done.stdout.strip().splitlines()
    tail = json.loads(last)
    assert tail["left"] is None  # the command's setting is undone when it ends
    return tail["code"], json.loads("\n".join(report)), tail["heavy"]


@pytest.mark.parametrize("engine", ["systematic", "random"])
def test_a_search_of_a_given_plan_imports_no_hypothesis(tmp_path: Path, engine: str) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(ONE_CALL), encoding="utf-8")
    argv = ["--engine", engine, "--plan", str(plan), "--max-faults", "1", "--seed", "0"]
    code, report, heavy = _explore_in_a_fresh_process(tmp_path, *argv, "--max-examples", "3")
    assert [e["engine"] for e in report["engines"]] == [engine]  # type: ignore[index]
    assert report["verdict"]["runs"] > 0  # type: ignore[index]
    assert code in (0, 3)
    assert heavy == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_the_hypothesis_engine_imports_it_and_keeps_its_files_under_txcheck(
    tmp_path: Path,
) -> None:
    """Hypothesis is first imported while the command runs: its home is still
    ``.txcheck/hypothesis``, never ``./.hypothesis``."""
    argv = ["--engine", "hypothesis", "--max-examples", "5", "--max-faults", "0"]
    _, report, heavy = _explore_in_a_fresh_process(tmp_path, *argv)
    assert [e["engine"] for e in report["engines"]] == ["hypothesis"]  # type: ignore[index]
    assert "hypothesis" in heavy and "hypothesis_jsonschema" in heavy
    assert sorted(p.name for p in tmp_path.iterdir()) == [".txcheck"]


def test_the_workers_share_the_home_hypothesis_has_not_looked_up_yet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Until Hypothesis needs a folder its home is only the environment variable the
    command sets: the shares sent to workers carry it all the same."""
    monkeypatch.setattr(configuration, "__hypothesis_home_directory", None)
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", ".txcheck/hypothesis")
    assert spread._hypothesis_home() == ".txcheck/hypothesis"
    monkeypatch.setattr(configuration, "__hypothesis_home_directory", Path("elsewhere"))
    assert spread._hypothesis_home() == Path("elsewhere")
    monkeypatch.setattr(configuration, "__hypothesis_home_directory", None)
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY")
    assert spread._hypothesis_home() is None
