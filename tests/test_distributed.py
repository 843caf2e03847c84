"""The search on a real local Dask cluster of two worker processes gives the verdicts the
in-process search gives, reproducibly; a worker killed mid-search is reported and its
share run again; SIGINT and SIGTERM stop the cluster and keep the best counterexample;
without Dask, ``--workers`` is a one-line error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import free_port

from txcheck.exploration.engines.hypothesis_engine import HypothesisEngine
from txcheck.exploration.engines.random_walk import RandomEngine
from txcheck.exploration.kernel.context import SearchContext
from txcheck.exploration.kernel.report import Tally
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Bounds, Budget, Target
from txcheck.exploration.kernel.workers import Job
from txcheck.exploration.plansets.representative import representative_plans
from txcheck.exploration.search import explore
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import DESIGNATED, Guarded, builtin_policy

pytest.importorskip("distributed")

# appended: ``mutants`` comes from examples/, but ``agents`` is still openai-agents
sys.path.append(str(Path(__file__).resolve().parent.parent / "examples"))
from mutants import MUTANTS

ENGINES = {"hypothesis": HypothesisEngine, "random": RandomEngine}
SINGLE = representative_plans(default_contract(), default_fixture())[0]


def _target(policy: Any, *, examples: int, seed: int = 1) -> Target:
    return Target(
        policy=policy,
        bounds=Bounds(max_faults=2),
        budget=Budget(max_examples=examples, seed=seed, database=None),
    )


def _outcome(report: Any) -> str:
    found = report.counterexample
    return "pass" if found is None else "counterexample"


def _slow_item(item: float, job: Job) -> float:
    job.tally.runs += 1
    time.sleep(item)
    return item


def test_items_come_back_as_they_complete_with_their_counters(dask_workers: Any) -> None:
    progress = Tally()
    got = list(dask_workers.map_unordered(_slow_item, [0.6, 0.0], SearchContext(tally=progress)))
    assert sorted(got) == [(0, 0.6), (1, 0.0)]  # in the order they completed (unasserted)
    assert progress.runs == 2 and dask_workers.notes == []


def _fails(item: int, job: Job) -> int:
    raise ValueError(f"item {item} is bad")


def test_an_error_in_an_item_is_raised_in_the_caller(dask_workers: Any) -> None:
    with pytest.raises(ValueError, match="item 0 is bad"):
        list(dask_workers.map_unordered(_fails, [0], SearchContext()))


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("name", ["guarded", "naive", "control-no-saga"])
def test_the_distributed_verdict_is_the_in_process_verdict(
    dask_workers: Any, engine: str, name: str
) -> None:
    policy = builtin_policy(name)
    # Seed 3: in-process, Hypothesis finds control-no-saga's bug within a few examples, so
    # each share of half the examples has room to find it too.
    target = _target(policy, examples=100 if engine == "hypothesis" else 300, seed=3)
    alone = ENGINES[engine]().explore(target, SearchContext())
    spread = ENGINES[engine]().explore(target, SearchContext(workers=dask_workers))
    assert (
        _outcome(spread) == _outcome(alone) == ("pass" if name == "guarded" else "counterexample")
    )
    assert spread.notes[0].startswith("spread over 2 local worker processes: 2 share(s)")
    if spread.counterexample is not None:
        execution = spread.counterexample.execution  # re-executed here, a full execution
        assert execution.failures and execution.steps
        if name in DESIGNATED:
            assert any(execution.failed(n) for n in DESIGNATED[name])
    else:
        assert spread.runs >= 100 and spread.writes > 0


def _mutants(slow: bool) -> list[Any]:
    return [
        pytest.param(m, id=m.name, marks=[pytest.mark.slow] if slow else [])
        for m in MUTANTS
        if (m.name in {"mutant-key-per-attempt", "mutant-compensate-forward"}) != slow
    ]


def _guarded_survives(found: Any) -> bool:
    """``guarded`` on the counterexample's choices (up to where it does something else,
    then its default schedule) passes: the failure is the mutant's bug."""
    choices = [s.choice for s in found.execution.steps]
    run = execute(Target(policy=Guarded()), found.plans, choices=choices)
    if run.divergence is not None and not run.failures:
        run = execute(Target(policy=Guarded()), found.plans, choices=choices[: run.divergence.step])
    return bool(run.ok and run.quiesced)


@pytest.mark.parametrize("mutant", [*_mutants(False), *_mutants(True)])
def test_what_the_walks_catch_in_process_they_catch_spread_over_workers(
    dask_workers: Any, mutant: Any
) -> None:
    target = _target(mutant.policy(), examples=1000, seed=3)
    alone = RandomEngine().explore(target, SearchContext())
    spread = RandomEngine().explore(target, SearchContext(workers=dask_workers))
    if alone.counterexample is not None:
        assert spread.counterexample is not None
    if spread.counterexample is not None:  # two shares may catch what one search missed
        assert _guarded_survives(spread.counterexample)


@pytest.mark.slow
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_auto_gives_the_in_process_verdict_on_every_mutant(dask_workers: Any, mutant: Any) -> None:
    target = Target(
        policy=mutant.policy(),
        plans=(SINGLE,),
        bounds=Bounds(max_faults=2),
        budget=Budget(max_examples=200, seed=0, database=None),
    )
    spread, alone = explore(target, workers=dask_workers), explore(target)
    assert spread.found and alone.found
    assert spread.counterexample is not None and _guarded_survives(spread.counterexample)


# -- the command ----------------------------------------------------------------------------


def _explore(
    cwd: Path, *argv: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "txcheck", "explore", *argv],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


SEEDED = (
    *("--policy", "control-no-saga", "--engine", "hypothesis", "--no-seeds"),
    *("--max-examples", "80", "--max-faults", "2", "--seed", "4", "--json"),
)


RANDOM = (
    *("--policy", "control-no-dedupe", "--engine", "random", "--no-seeds"),
    *("--max-examples", "300", "--max-faults", "2", "--seed", "4", "--json"),
)


def test_seed_and_workers_give_the_same_bytes_and_the_in_process_verdict(tmp_path: Path) -> None:
    written = tmp_path / "txcheck-counterexample.json"
    first = _explore(tmp_path, *SEEDED, "--workers", "2")
    trace = written.read_bytes()
    written.unlink()
    again = _explore(tmp_path, *SEEDED, "--workers", "2")
    assert trace != b"" and written.read_bytes() == trace  # the same counterexample's bytes
    alone = _explore(tmp_path, *SEEDED)
    assert first.returncode == again.returncode == alone.returncode == 1, first.stderr
    assert first.stdout == again.stdout
    assert first.stderr == again.stderr == ""
    spread, local = json.loads(first.stdout), json.loads(alone.stdout)
    assert spread["verdict"]["outcome"] == local["verdict"]["outcome"] == "counterexample"
    notes = spread["engines"][0]["notes"]
    assert notes[0] == (
        "spread over 2 local worker processes: 2 share(s) of 40 examples, seeds derived from 4"
    )


def test_one_worker_is_the_in_process_search(tmp_path: Path) -> None:
    # The random walks: Hypothesis also draws constants from the local modules a process
    # has loaded, which differ between a worker and the command (docs/distributed.md).
    one = json.loads(_explore(tmp_path, *RANDOM, "--workers", "1").stdout)
    alone = json.loads(_explore(tmp_path, *RANDOM).stdout)
    assert one["found"] is True
    for document in (one, alone):
        for report in document["engines"]:
            report.pop("notes")
    assert one == alone


def test_an_existing_cluster_is_used_through_its_scheduler(
    tmp_path: Path, dask_workers: Any
) -> None:
    address = dask_workers.client.scheduler.address
    there = _explore(tmp_path, *RANDOM, "--scheduler", address, "--workers", "2")
    here = _explore(tmp_path, *RANDOM, "--workers", "2")
    assert there.returncode == here.returncode == 1, there.stderr
    ours, theirs = json.loads(here.stdout), json.loads(there.stdout)
    assert theirs["engines"][0]["notes"][0].startswith(f"spread over the cluster at {address}")
    for document in (ours, theirs):
        document["engines"][0]["notes"].pop(0)
    assert ours == theirs


def test_without_dask_the_flags_are_one_line_errors(tmp_path: Path) -> None:
    script = (
        "import sys; sys.modules['distributed'] = None\n"
        "from txcheck.cli import console_main\n"
        "sys.argv = ['txcheck', 'explore', '--workers', '2']\n"
        "console_main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert (
        "--workers: needs Dask" in done.stderr
        and "pip install 'txcheck[distributed]'" in done.stderr
    )


def test_in_process_explore_never_imports_dask(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from txcheck.cli import main\n"
        "code = main(['explore', '--policy', 'naive', '--engine', 'random', '--no-seeds',\n"
        "             '--max-examples', '20', '--seed', '1'])\n"
        "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.stdout.splitlines()[-1] == "1 []", done.stderr


def test_an_unreachable_scheduler_is_a_one_line_error(tmp_path: Path) -> None:
    done = _explore(tmp_path, "--scheduler", f"tcp://127.0.0.1:{free_port()}", "--seed", "1")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "cannot reach a Dask scheduler" in done.stderr


STUCK = """
from txcheck.models.sim.policies.guarded import Guarded
from txcheck.models.sim.requests import JournalRead


class Loops(Guarded):
    name = "loops"

    def orchestrate(self, ctx):
        yield JournalRead()
        while True:
            pass
"""


def test_a_policy_that_never_yields_on_a_worker_is_a_policy_error(tmp_path: Path) -> None:
    (tmp_path / "stuck.py").write_text(STUCK, encoding="utf-8")
    done = _explore(
        tmp_path,
        *("--policy", "stuck:Loops", "--policy-timeout", "0.5", "--engine", "random"),
        *("--no-seeds", "--max-examples", "4", "--seed", "1", "--workers", "2"),
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "ran 0.5s in orchestrate (orchestrator-1) without yielding" in done.stderr


# -- a worker that dies, and stopping ---------------------------------------------------------

# The first worker to check an invariant claims the file ``victim`` with its pid and then
# waits to be killed; every later check (the share run again elsewhere) goes on. A slow
# check after the first failure keeps a share shrinking long enough to be interrupted.
INVARIANTS = """
import os
import time
from pathlib import Path

from txcheck.invariants import always

HERE = Path(__file__).resolve().parent
SEEN = [False]


@always(name="victim_waits")
def victim_waits(view):
    \"\"\"Never fails; the first worker to get here waits to be killed.\"\"\"
    if not SEEN[0]:
        SEEN[0] = True
        try:
            fd = os.open(HERE / "victim", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return []
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        while True:
            time.sleep(0.1)
    return []


@always(name="slow_after_a_failure")
def slow_after_a_failure(view):
    \"\"\"The built-in safety invariants, slowly once one has failed (shrinking is slow).\"\"\"
    from txcheck.invariants import DEFAULT_INVARIANTS

    problems = [p for check in DEFAULT_INVARIANTS if check.is_safety for p in check(view)]
    if problems or (HERE / "failed").exists():
        if problems and (HERE / "failed").exists():
            # a failure again, so in a later example: the first one is recorded, and
            # Hypothesis is replaying or shrinking it
            (HERE / "shrinking").touch()
        (HERE / "failed").touch()
        time.sleep(0.05)
    return problems
"""


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "dist_invariants.py").write_text(INVARIANTS, encoding="utf-8")
    return tmp_path


def _wait_for(path: Path, process: subprocess.Popen[str], seconds: float = 120) -> None:
    ends = time.monotonic() + seconds
    while not path.exists() or not path.read_text():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < ends, f"{path.name} never appeared"
        time.sleep(0.05)


GUARDED = (
    *("--policy", "guarded", "--engine", "hypothesis", "--no-seeds", "--max-faults", "2"),
    *("--max-examples", "60", "--seed", "6", "--json"),
)


SYSTEMATIC = (
    *("--policy", "guarded", "--engine", "systematic", "--no-seeds", "--max-faults", "1"),
    "--json",
)


@pytest.mark.parametrize(
    "search",
    [
        pytest.param(GUARDED, id="hypothesis", marks=pytest.mark.slow),
        pytest.param(SYSTEMATIC, id="systematic"),
    ],
)  # one engine in the default suite, both in the slow tier
def test_a_killed_worker_is_reported_and_its_share_run_again(
    workdir: Path, search: tuple[str, ...]
) -> None:
    argv = [sys.executable, "-m", "txcheck", "explore", *search, "--workers", "2"]
    # the victim waits to be killed: no watchdog may end it first on a slow machine
    argv += ["--invariants", "dist_invariants:victim_waits", "--policy-timeout", "600"]
    process = subprocess.Popen(
        argv, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _wait_for(workdir / "victim", process)
    os.kill(int((workdir / "victim").read_text()), signal.SIGKILL)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert err == ""
    killed = json.loads(out)
    notes = killed["engines"][0]["notes"]
    assert [n for n in notes if " died holding item(s) " in n], notes
    # The share ran again from its start, with its seed: nothing lost, nothing counted twice.
    undisturbed = _explore(
        workdir, *search, "--workers", "2", "--invariants", "dist_invariants:victim_waits"
    )
    assert undisturbed.returncode == 0, undisturbed.stderr
    calm = json.loads(undisturbed.stdout)
    for document in (killed, calm):
        document["engines"][0]["notes"] = [
            n for n in document["engines"][0]["notes"] if "died" not in n
        ]
    assert killed == calm


@pytest.mark.parametrize(
    ("name", "code"),
    [("SIGINT", 130), pytest.param("SIGTERM", 143, marks=pytest.mark.slow)],
)
def test_a_signal_stops_the_cluster_and_keeps_the_best_counterexample(
    workdir: Path, name: str, code: int
) -> None:
    argv = [sys.executable, "-m", "txcheck", "explore", "--workers", "2"]
    argv += ["--policy", "control-fresh-key", "--engine", "hypothesis", "--no-seeds"]
    argv += ["--invariants", "dist_invariants:slow_after_a_failure", "--json"]
    process = subprocess.Popen(
        argv,
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches
    )
    ends = time.monotonic() + 120
    while not (workdir / "shrinking").exists():  # "failed" alone may not be recorded yet
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < ends
        time.sleep(0.05)
    if name == "SIGINT":
        os.killpg(process.pid, signal.SIGINT)  # the whole group: workers too
    else:
        os.kill(process.pid, signal.SIGTERM)
    out, err = process.communicate(timeout=120)
    assert process.returncode == code, err
    assert "Traceback" not in err
    assert "txcheck explore: interrupted (the best counterexample so far is above)" in err
    result = json.loads(out)
    assert result["interrupted"] is True
    found = result["counterexample"]
    assert found is not None and found["trace"] == "txcheck-counterexample.json"
    assert json.loads((workdir / "txcheck-counterexample.json").read_text())["policy"] == (
        "control-fresh-key"
    )
    assert not (workdir / ".hypothesis").exists()  # workers keep Hypothesis under .txcheck
    ends = time.monotonic() + 30
    while (left := _session(process.pid)) and time.monotonic() < ends:
        time.sleep(0.1)
    assert left == []  # no worker process outlives the command


def _session(leader: int) -> list[str]:
    """The command lines of the processes still in ``leader``'s session."""
    found = subprocess.run(
        ["pgrep", "-s", str(leader)], capture_output=True, text=True, check=False
    )
    lines = []
    for pid in found.stdout.split():
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " "))
        except OSError:
            continue
    return lines
