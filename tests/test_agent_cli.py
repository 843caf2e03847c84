"""``txcheck explore --agent MODULE:MAKE_AGENT --framework NAME``: the plumbing every agent
adapter shares (the spec a trace records, replay, the errors), checked against a stand-in
adapter so it holds whichever framework extras are installed; each framework's own tests
run its real adapter."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import main
from txcheck.exploration.usercode.loading import load_policy

ROOT = Path(__file__).resolve().parent.parent
ADAPTER = "txcheck.adapters.langgraph"
SPEC = "langgraph:tests.test_agent_cli:make_agent"


def make_agent() -> str:
    """The user's factory: what the stand-in adapter wraps (a name, as a stand-in agent)."""
    return "naive"


def make_broken_agent() -> str:
    raise RuntimeError("no model configured")


@pytest.fixture
def adapter(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """A stand-in ``txcheck.adapters.langgraph`` whose agent is the naive asyncio
    orchestrator; it records what ``agent_policy`` was given."""
    sys.path.insert(0, str(ROOT))
    from examples.async_orchestrators.naive import Naive  # noqa: PLC0415

    made: list[Any] = []
    module = types.ModuleType(ADAPTER)

    def agent_policy(make: Any) -> Naive:
        made.append(make)
        assert make() == "naive"
        return Naive()

    module.agent_policy = agent_policy  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, ADAPTER, module)
    monkeypatch.syspath_prepend(str(ROOT))
    yield made
    sys.path.remove(str(ROOT))


def test_an_agent_is_explored_and_its_trace_names_it(
    adapter: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "agent.json"
    argv = ["explore", "--agent", "tests.test_agent_cli:make_agent", "--framework", "langgraph"]
    argv += ["--seed", "1", "--no-seeds", "--engine", "systematic", "--max-faults", "1"]
    assert main([*argv, "--trace-out", str(trace), "--json"]) == 1
    # the adapter was given the user's factory, imported from the spec
    assert [(m.__module__, m.__name__) for m in adapter] == [("tests.test_agent_cli", "make_agent")]
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["verdict"]["outcome"] == "counterexample"
    assert json.loads(trace.read_text(encoding="utf-8"))["policy"] == SPEC
    # a trace is data: replay loads the agent only when named, by the spec it records
    assert main(["replay", str(trace), "--policy", SPEC]) == 1
    assert "reproduced" in capsys.readouterr().out.lower()


def test_the_spec_is_a_policy_anywhere_a_policy_is_named(adapter: list[Any]) -> None:
    loaded = load_policy(SPEC, timeout=None)
    assert loaded.spec == SPEC and not loaded.builtin
    assert getattr(loaded.policy, "import_path", None) == SPEC  # what workers load


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--agent", "tests.test_agent_cli:make_agent"], "--agent needs --framework"),
        (["--framework", "langgraph"], "--framework names the framework of --agent"),
        (
            ["--policy", "naive", "--agent", "tests.test_agent_cli:make_agent"],
            "give --policy or --agent, not both",
        ),
        (["--agent", "not a spec", "--framework", "langgraph"], "import path"),
        (
            ["--agent", "tests.test_agent_cli:make_broken_agent", "--framework", "langgraph"],
            "raised RuntimeError: no model configured",
        ),
    ],
)
def test_bad_agent_options_are_one_line_errors(
    adapter: list[Any], extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_missing_framework_extra_names_the_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, ADAPTER, None)  # import fails as if not installed
    argv = ["explore", "--agent", "tests.test_agent_cli:make_agent", "--framework", "langgraph"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "pip install 'txcheck[langgraph]'" in err and "Traceback" not in err


def test_an_unknown_framework_prefix_is_not_taken_for_an_agent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explore", "--policy", "crewai:tests.test_agent_cli:make_agent"]) == 2
    assert "FRAMEWORK: openai-agents, pydantic-ai, langgraph, mcp" in capsys.readouterr().err
