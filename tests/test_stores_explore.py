"""Real stores inside ``txcheck explore``: guarded's journal (with its claims) and the
idempotency records on SQLite give the in-memory world's verdicts, forks and fingerprints
read the committed rows, a crash loses what was never committed, and the mutant stores
that can matter under explore are caught with a trace that replays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from txcheck.cli import main
from txcheck.cli.store_options import load_stores
from txcheck.exploration.kernel.target import Target
from txcheck.models.plan.proposal_parser import load_proposal
from txcheck.models.sim.idempotency import IdempotencyStore
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.stored import StoredWorld, Stores
from txcheck.models.stores.mutants import ClaimInMemory
from txcheck.models.stores.sqlite import SqliteIdempotencyStore, SqliteJournal
from txcheck.traces.document import load_trace
from txcheck.traces.replaying import replay
from txcheck.traces.repro import python_reproduction

ROOT = Path(__file__).resolve().parent.parent
PLAN = str(ROOT / "examples" / "proposals" / "valid_openai_chat.json")
SQLITE = ("--store", "journal=sqlite", "--store", "idempotency=sqlite")
MUTANTS = "txcheck.models.stores.mutants"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / ".hypothesis"))


def explore_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["explore", "--plan", PLAN, "--engine", "systematic", "--seed", "1", *argv])
    return code, json.loads(capsys.readouterr().out)


def _sameness(result: dict[str, Any]) -> tuple[Any, ...]:
    """What must not change when the records move to SQLite: verdict, bound, state count."""
    engine = result["engines"][0]
    return (
        result["verdict"]["outcome"],
        result["verdict"]["bound"],
        engine["states"],
        engine["runs"],
        result["verdict"]["writes"],
        result["verdict"]["faults"],
    )


def _stored_run(stores: Stores) -> Any:
    policy = builtin_policy("guarded")
    target = Target(policy=policy, stores=stores)
    plan = load_proposal(PLAN)
    return target.run((plan, plan), track_positions=True)


def test_a_stored_world_is_a_stored_world() -> None:
    run = _stored_run(Stores(journal=SqliteJournal, idempotency=SqliteIdempotencyStore))
    assert isinstance(run.world, StoredWorld)
    assert not isinstance(run.world.store, IdempotencyStore)  # routed to SQLite
    assert not isinstance(Target(policy=builtin_policy("guarded")).world(), StoredWorld)


def _step_until(run: Any, predicate: Any, limit: int = 200) -> None:
    for _ in range(limit):
        if predicate(run):
            return
        run.apply(run.choices()[0])
    raise AssertionError("the run never got there")


def test_journals_and_records_are_read_from_the_database() -> None:
    run = _stored_run(Stores(journal=SqliteJournal, idempotency=SqliteIdempotencyStore))
    _step_until(run, lambda r: len(r.world.store.records()) >= 1)
    world = run.world
    # what invariants read is what a fresh connection to the database reads
    reader = SqliteJournal(world._uri)
    assert world.journals["orchestrator-1"] == reader.entries("orchestrator-1")
    assert world.journals["orchestrator-1"], "guarded journals before it sends"
    assert world.claims == reader.claims() != {}
    records = SqliteIdempotencyStore(world._uri).records()
    assert [r.idempotency_key for r in world.store.records()] == [
        r.idempotency_key for r in records
    ]


def test_a_fork_copies_the_database_and_is_independent() -> None:
    run = _stored_run(Stores(journal=SqliteJournal, idempotency=SqliteIdempotencyStore))
    _step_until(run, lambda r: len(r.world.journals.get("orchestrator-1", [])) >= 2)
    twin = run.fork()
    assert twin is not None
    assert twin.world._uri != run.world._uri
    assert twin.fingerprint() == run.fingerprint()
    before = list(twin.world.journals["orchestrator-1"])
    run.world.append_journal("orchestrator-1", {"note": "only in the original"})
    assert twin.world.journals["orchestrator-1"] == before
    assert twin.fingerprint() != run.fingerprint()
    replayed = _stored_run(Stores(journal=SqliteJournal, idempotency=SqliteIdempotencyStore))
    for step in twin.steps:
        replayed.apply(step.choice)
    assert replayed.fingerprint() == twin.fingerprint()


def test_a_crash_forgets_what_the_store_kept_in_memory_only() -> None:
    run = _stored_run(Stores(journal=ClaimInMemory, idempotency=SqliteIdempotencyStore))
    world = run.world
    assert world.claim("op", "orchestrator-1", {"phase": "PROPOSED"}) == "orchestrator-1"
    # another instance's connection never saw the claim: the bug explore finds
    assert world.claim("op", "orchestrator-2", {"phase": "PROPOSED"}) == "orchestrator-2"
    kept = world.fingerprint()
    world.crashed("orchestrator-1")
    assert world.fingerprint() != kept  # the claim in the process is gone ...
    assert world.claim("op", "orchestrator-1", {"phase": "PROPOSED"}) == "orchestrator-1"
    # ... while the committed entries survived the crash
    assert len(world.journals["orchestrator-1"]) == 2


@pytest.mark.slow
def test_guarded_on_sqlite_gives_the_in_memory_verdicts_at_two_faults(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code_memory, memory = explore_json(capsys, "--max-faults", "2", "--json")
    code_sqlite, sqlite = explore_json(capsys, "--max-faults", "2", "--json", *SQLITE)
    assert code_memory == code_sqlite == 0
    assert _sameness(sqlite) == _sameness(memory)
    assert sqlite["verdict"]["bound"] == "exhaustive to 2 deviations on all 2 plan sets"


def test_guarded_on_sqlite_gives_the_in_memory_verdicts_at_one_fault(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code_memory, memory = explore_json(capsys, "--max-faults", "1", "--json")
    code_sqlite, sqlite = explore_json(capsys, "--max-faults", "1", "--json", *SQLITE)
    assert code_memory == code_sqlite == 0
    assert _sameness(sqlite) == _sameness(memory)
    assert sqlite["engines"][0]["states"] > 100


def test_naive_on_sqlite_is_still_caught_and_replays(capsys: pytest.CaptureFixture[str]) -> None:
    code_memory, memory = explore_json(capsys, "--policy", "naive", "--max-faults", "1", "--json")
    code, found = explore_json(
        capsys, "--policy", "naive", "--max-faults", "1", "--json", "--trace-out", "n.json", *SQLITE
    )
    assert code == code_memory == 1
    assert found["counterexample"]["invariant"] == memory["counterexample"]["invariant"]
    trace = json.loads(Path("n.json").read_text())
    assert trace["stores"] == {
        "idempotency": "txcheck.models.stores.sqlite:SqliteIdempotencyStore",
        "journal": "txcheck.models.stores.sqlite:SqliteJournal",
    }
    assert main(["replay", "n.json", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["reproduced"] is True


@pytest.mark.slow
def test_a_journal_that_loses_the_claim_is_caught_and_replays(
    capsys: pytest.CaptureFixture[str],
) -> None:
    journal = f"journal={MUTANTS}:ClaimInMemory"
    argv = ("--max-faults", "2", "--trace-out", "c.json", "--json")
    code, found = explore_json(capsys, *argv, "--store", journal, "--store", "idempotency=sqlite")
    assert code == 1
    assert "no_double_charge" in {v["invariant"] for v in found["counterexample"]["violations"]}
    assert main(["replay", "c.json", "--json"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["reproduced"] is True
    # the Python the report prints runs it on the same stores, and asserts the failure
    trace = load_trace("c.json")
    target = Target(policy=builtin_policy("guarded"), stores=load_stores(trace.stores))
    code_text = python_reproduction(trace.description, replay(trace, target), trace_path="c.json")
    assert "stores=Stores(idempotency=SqliteIdempotencyStore, journal=ClaimInMemory)" in code_text
    exec(compile(code_text, "reproduction", "exec"), {})
    # the same choices on the reference journal: the second instance attaches to the
    # first one's claim, and the recorded run (both instances charging) cannot happen
    assert main(["replay", "c.json", "--json", "--store", "journal=sqlite"]) == 2
    other = json.loads(capsys.readouterr().out)
    assert other["reproduced"] is False
    claims = [s for s in other["steps"] if s["request"] and s["request"]["kind"] == "Claim"]
    assert [c["observed"]["owner"] for c in claims] == ["orchestrator-1", "orchestrator-1"]


@pytest.mark.parametrize("mutant", ["ResultBeforeReservation", "CheckThenInsert"])
def test_idempotency_mutants_cannot_matter_to_guarded_under_explore(
    mutant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both bugs show only to a second request of a key while the first is in flight;
    guarded's claim keeps a second instance from sending it, and a step is atomic, so
    the check-then-insert window never opens (``txcheck conform`` races two clients)."""
    store = f"idempotency={MUTANTS}:{mutant}"
    code, result = explore_json(
        capsys, "--max-faults", "1", "--json", "--store", "journal=sqlite", "--store", store
    )
    assert code == 0, result["verdict"]


def test_a_bad_store_value_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for value in ("ledger=sqlite", "journal", "journal=not a path", "journal=json:dumps"):
        code = main(["explore", "--plan", PLAN, "--store", value, "--max-faults", "0"])
        err = capsys.readouterr().err
        assert code == 2, (value, err)
        assert len(err.strip().splitlines()) == 1, err


def test_replay_refuses_a_users_store_unless_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "my_journal.py").write_text(
        "from txcheck.models.stores.sqlite import SqliteJournal\n"
        "class MyJournal(SqliteJournal):\n    pass\n"
    )
    code, _ = explore_json(
        capsys,
        "--policy",
        "naive",
        "--max-faults",
        "1",
        "--json",
        "--trace-out",
        "u.json",
        "--store",
        "journal=my_journal:MyJournal",
    )
    assert code == 1
    assert main(["replay", "u.json"]) == 2
    assert "--store journal=my_journal:MyJournal" in capsys.readouterr().err
    assert main(["replay", "u.json", "--store", "journal=my_journal:MyJournal", "--json"]) == 1
    capsys.readouterr()


POSTGRES = ("--store", "journal=postgres", "--store", "idempotency=postgres")


@pytest.mark.slow
def test_guarded_on_postgres_gives_the_in_memory_verdicts_without_forking(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code_memory, memory = explore_json(capsys, "--max-faults", "1", "--json")
    code, stored = explore_json(
        capsys, "--max-faults", "1", "--json", *POSTGRES, "--dsn", postgres_dsn
    )
    assert code == code_memory == 0
    assert _sameness(stored) == _sameness(memory)
    notes = " ".join(stored["engines"][0]["notes"])
    assert "(0 forked from a run" in notes  # a world on PostgreSQL is replayed, never forked


@pytest.mark.slow
def test_naive_on_postgres_replays_with_the_dsn_given_again(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("--policy", "naive", "--max-faults", "1", "--json", "--trace-out", "p.json")
    code, _ = explore_json(capsys, *argv, *POSTGRES, "--dsn", postgres_dsn)
    assert code == 1
    assert "postgres" in json.loads(Path("p.json").read_text())["stores"]["journal"]
    assert main(["replay", "p.json"]) == 2  # PostgreSQL's stores, and no --dsn
    assert "give --dsn" in capsys.readouterr().err
    assert main(["replay", "p.json", "--json", "--dsn", postgres_dsn]) == 1
    assert json.loads(capsys.readouterr().out)["reproduced"] is True


def test_a_dsn_without_a_store_or_with_sqlites_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    dsn = "postgresql://nobody@127.0.0.1:1/none"
    for argv in (["--dsn", dsn], ["--dsn", dsn, *SQLITE], list(POSTGRES)):
        code = main(["explore", "--plan", PLAN, "--max-faults", "0", *argv])
        err = capsys.readouterr().err
        assert code == 2, (argv, err)
        assert len(err.strip().splitlines()) == 1, err
