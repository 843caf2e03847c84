"""Render the mutant benchmark as ``benchmarks/results.md`` (Markdown, no timestamps)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from mutants_cells import BLIND_CATCHES, BLIND_CONTRACTS, DETERMINISTIC, ROOT, Cell, Minimum

__all__ = ["DoneWhen", "done_when", "render"]

LIMIT_S = 60.0
MEDIAN_S = 1.0


def _group(cells: Sequence[Cell]) -> dict[tuple[str, str], list[Cell]]:
    grouped: dict[tuple[str, str], list[Cell]] = {}
    for cell in cells:
        grouped.setdefault((cell.mutant, cell.method), []).append(cell)
    return grouped


def _invariants(cells: Sequence[Cell]) -> str:
    names = Counter(c.invariant for c in cells if c.invariant)
    return "/".join(f"`{n}`" for n, _ in sorted(names.items(), key=lambda kv: (-kv[1], kv[0])))


def _verdict(cells: Sequence[Cell], catches: Sequence[str]) -> str:
    """``killed 5/5 `inv```, with the other outcomes after; ``†`` marks an invariant the
    mutant's docstring does not name."""
    total = len(cells)
    parts = []
    for status in ("killed", "guarded", "missed", "hung", "skipped", "error"):
        group = [c for c in cells if c.status == status]
        if not group:
            continue
        text = f"{status} {len(group)}/{total}"
        if status in ("killed", "guarded"):
            text += " " + _invariants(group)
            if status == "killed" and any(c.invariant not in catches for c in group):
                text += " †"
        parts.append(text)
    return "; ".join(parts)


def _seconds(cells: Sequence[Cell]) -> str:
    kills = sorted(c.seconds for c in cells if c.killed)
    if not kills:
        return "—"
    text = f"{statistics.median(kills):.2f} / {max(kills):.2f}"
    return text if len(kills) == len(cells) else f"{text} ({len(kills)}/{len(cells)})"


def _worst(cells: Sequence[Cell]) -> Cell | None:
    kills = [c for c in cells if c.killed and c.deviations is not None]
    return max(kills, key=lambda c: (c.deviations or 0, c.steps or 0), default=None)


def _length(cells: Sequence[Cell], known: Minimum) -> str:
    worst = _worst(cells)
    if worst is None:
        return "—"
    over = (worst.deviations or 0) - known.deviations
    mark = "" if over <= 1 else " ✗"
    return f"{worst.deviations} / {worst.steps}{mark}"


class DoneWhen:
    """Issue 8's bar for ``auto`` (explore's defaults) and whether this run met it."""

    def __init__(self, cells: Sequence[Cell], minimums: Mapping[str, Minimum]) -> None:
        auto = [c for c in cells if c.method == "auto"]
        by_mutant = _group(auto)
        self.mutants = len(by_mutant)
        self.all_killed = all(c.killed for c in auto) and bool(auto)
        kills = [c.seconds for c in auto if c.killed]
        self.slowest = max(kills, default=float("nan"))
        medians = [
            statistics.median(c.seconds for c in group) for group in by_mutant.values() if group
        ]
        self.median = statistics.median(medians) if medians else float("nan")
        self.too_long = sorted(
            {
                c.mutant
                for c in auto
                if c.killed and (c.deviations or 0) > minimums[c.mutant].deviations + 1
            }
        )

    @property
    def met(self) -> bool:
        return (
            self.all_killed
            and self.slowest <= LIMIT_S
            and self.median < MEDIAN_S
            and not self.too_long
        )

    def lines(self) -> list[str]:
        def mark(ok: bool) -> str:
            return "yes" if ok else "**no**"

        longer = ", ".join(self.too_long) or "none"
        return [
            f"- every mutant killed by `auto` on every seed: {mark(self.all_killed)}",
            f"- slowest kill: {self.slowest:.2f} s (bar: {LIMIT_S:.0f} s): "
            f"{mark(self.slowest <= LIMIT_S)}",
            f"- median over mutants of the median kill time: {self.median:.2f} s "
            f"(bar: under {MEDIAN_S:.0f} s): {mark(self.median < MEDIAN_S)}",
            f"- traces more than one deviation over the known minimum: {longer}",
            f"- issue 8 bar met: {mark(self.met)}",
        ]


def done_when(cells: Sequence[Cell], minimums: Mapping[str, Minimum]) -> DoneWhen:
    return DoneWhen(cells, minimums)


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def render(
    *,
    command: str,
    machine: Mapping[str, str],
    settings: Mapping[str, Any],
    methods: Sequence[str],
    experiments: Sequence[str],
    mutants: Sequence[Any],
    minimums: Mapping[str, Minimum],
    cells: Sequence[Cell],
    baselines: Mapping[str, Any],
    blind: Sequence[Cell] = (),
    depth: Sequence[Mapping[str, Any]] = (),
) -> str:
    grouped = _group(cells)
    names = [m.name for m in mutants]
    catches = {m.name: m.catches for m in mutants}
    out = ["# Mutant benchmark: what txcheck catches, and how fast", ""]
    out += [
        "Produced by `benchmarks/mutants.py`; every figure below comes from one run on one",
        "machine, and every ratio is against a baseline measured in the same run.",
        "",
        f"Reproduce: `{command}`",
        "",
        "Machine: " + ", ".join(f"{k} {v}" for k, v in machine.items()),
        "",
        "Settings: " + ", ".join(f"{k} {v}" for k, v in settings.items()),
        "",
        "`systematic`, `random` and `hypothesis` run alone with explore's defaults and the",
        "search cap as their time budget: a miss well under the cap means the examples",
        "(walks, Hypothesis examples) ran out, not the time.",
        "",
        "## Issue 8's bar (`auto`, explore's defaults)",
        "",
        *done_when(cells, minimums).lines(),
        "",
        "## Kill matrix",
        "",
        "Each cell: how many seeds killed the mutant and the invariant that fired first.",
        "`killed` means `guarded` survives the very same choices; `guarded` means the",
        "counterexample fails `guarded` too (a finding about `guarded` or an invariant, not",
        "about the mutant); † marks an invariant the mutant's docstring does not name.",
        "Deterministic methods (" + ", ".join(sorted(DETERMINISTIC)) + ") are re-run per",
        "seed only to re-time them; one that misses is not re-run. A run that hangs past",
        "its hard limit is stopped, and the later seeds of that cell are skipped.",
        "",
    ]
    out += _table(
        ["mutant", *methods],
        [[n, *(_verdict(grouped.get((n, m), []), catches[n]) for m in methods)] for n in names],
    )
    out += [
        "",
        "## Scenarios that kill each mutant",
        "",
        "The 14 fixed scenarios, each run once under the mutant (their plans and deviation",
        "scripts); a scenario kills when any invariant fails.",
        "",
    ]
    missed = []
    rows = []
    for name in names:
        group = grouped.get((name, "scenarios"), [])
        killers = group[0].scenarios if group else ()
        rows.append([name, ", ".join(killers) or "**none**"])
        if group and not killers:
            missed.append(name)
    out += _table(["mutant", "killing scenarios"], rows)
    out += ["", f"Missed by all 14 scenarios: {', '.join(missed) or 'none'}.", ""]
    out += [
        "## Time to first counterexample (seconds, median / max over seeds)",
        "",
        "CPU seconds, measured in the worker around the search alone (`time.process_time`). For",
        "`scenarios`, the time until the first failing scenario. Only killing runs count;",
        "(k/n) says how many seeds killed.",
        "",
    ]
    out += _table(
        ["mutant", *methods],
        [[n, *(_seconds(grouped.get((n, m), [])) for m in methods)] for n in names],
    )
    out += [
        "",
        "## Counterexample length against the known minimum",
        "",
        "Deviations / steps of the longest killing counterexample over the seeds, as",
        "reported. Known shortest: the mutant's shortest script on the single checkout plan",
        "(`examples/mutants/shortest.py`): its deviations are the known minimum (the",
        "systematic engine's, on that plan), its steps are that run's, not a minimum.",
        "✗: more than one deviation over the known minimum.",
        "A run that never quiesces stops at the 2000-step limit. `auto` after the proposed",
        "seed shrink: what the reported seed counterexample shrinks to (delta debugging,",
        "then a systematic search below its deviation count) and the extra seconds.",
        "",
    ]
    rows = []
    for name in names:
        known = minimums[name]
        auto = grouped.get((name, "auto"), [])
        shrunk = [c for c in auto if c.shrunk is not None]
        after = "—"
        if shrunk:
            cell = max(shrunk, key=lambda c: c.shrunk or (0, 0))
            extra = max(c.shrink_seconds or 0.0 for c in shrunk)
            after = f"{cell.shrunk[0]} / {cell.shrunk[1]} (+{extra:.2f} s)" if cell.shrunk else "—"
        rows.append(
            [
                name,
                f"{known.deviations} / {known.steps}",
                *(_length(grouped.get((name, m), []), known) for m in methods),
                after,
            ]
        )
    out += _table(["mutant", "known shortest", *methods, "auto, seed shrink"], rows)
    if experiments:
        out += [
            "",
            "## Proposed search changes, measured",
            "",
            "The same cells for search changes not (yet) in the engines' defaults, named",
            "`ENGINE+CHANGE` (`EXPERIMENTS` in `benchmarks/mutants_cells.py` says what each",
            "change is).",
            "",
        ]
        out += _table(
            ["mutant", *(f"{e}: kill" for e in experiments), *(f"{e}: s" for e in experiments)],
            [
                [
                    n,
                    *(_verdict(grouped.get((n, e), []), catches[n]) for e in experiments),
                    *(_seconds(grouped.get((n, e), [])) for e in experiments),
                ]
                for n in names
            ],
        )
    out += _blind_spots(blind)
    out += _depth(depth)
    out += _baselines(baselines)
    return "\n".join(out) + "\n"


def _baselines(baselines: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    rows = baselines.get("throughput")
    if rows:
        out += [
            "",
            "## Exploration throughput against bare Hypothesis",
            "",
            "`guarded` on the representative checkout plan, at most two deviations per run,",
            f"{rows[0]['seconds']:.0f} s each. The baseline is a minimal `RuleBasedStateMachine`",
            "over the same world (default or any enabled choice per rule, safety after every",
            "step, liveness at quiescence).",
            "",
        ]
        out += _table(
            ["search", "runs", "steps", "seconds", "steps/s", "x bare Hypothesis"],
            [
                [
                    r["engine"],
                    str(r["runs"]),
                    str(r["steps"]),
                    f"{r['seconds']:.2f}",
                    f"{r['steps_per_s']:.0f}",
                    f"{r['x_bare']:.2f}",
                ]
                for r in rows
            ],
        )
    suite = baselines.get("scenarios")
    if suite:
        out += [
            "",
            "## Scenario-suite time",
            "",
            f"Best of {suite['repeat']}: the {suite['scenarios']} scenarios under `guarded` "
            f"in {suite['scenarios_seconds'] * 1e3:.0f} ms; all 19 runs (with the five "
            f"positive controls) in {suite['all_runs_seconds'] * 1e3:.0f} ms.",
        ]
    score = baselines.get("scoring")
    if score:
        out += [
            "",
            "## Scoring throughput",
            "",
            f"{score['cases']} cases ({score['calls']} proposed calls), best of "
            f"{score['repeat']}: `txcheck score` {score['score_per_s']:.0f} cases/s; bare "
            f"jsonschema on the same calls {score['bare_per_s']:.0f} cases/s; the whole "
            f"strict scorer costs {score['slowdown']:.1f}x bare schema validation.",
        ]
    return out


def _blind_spots(cells: Sequence[Cell]) -> list[str]:
    """Issue 14's regression mutants under ``explore``'s defaults, one row per method."""
    if not cells:
        return []
    out = [
        "",
        "## Regression mutants (`tests/blind_spots.py`, `tests/deep_controls.py`)",
        "",
        "Each regression mutant under `txcheck explore --policy MODULE:NAME --seed S` with",
        "every default (`auto`, scenario seeds first, no time budget), and the retry-forever",
        "mutant also with `--no-seeds` (the scenario that used to be the only thing to kill",
        "it left out). tests/blind_spots.py holds the search's former blind spots (a plan",
        "set, a shape or a depth it did not reach) and what invariants used to trust (an",
        "event consumed for an operation that never committed, an undo resolved by the",
        "forward call, an undo aimed aside); tests/deep_controls.py the bugs that need three",
        "deviations on a double submission. Seconds are CPU time around the search, median /",
        "max over the seeds that killed; † marks an invariant the mutant's docstring does",
        "not name.",
        "",
    ]
    rows = []
    for (name, method), group in _group(cells).items():
        seeds = ", ".join(str(c.seed) for c in group)
        catches = sorted(BLIND_CATCHES.get(name.partition(":")[2], ()))
        engines = "/".join(sorted({c.engine or "" for c in group if c.killed})) or "—"
        worst = _worst(group)
        length = "—" if worst is None else f"{worst.deviations} / {worst.steps}"
        explore = "explore" if method == "auto" else "explore --no-seeds"
        if name in BLIND_CONTRACTS:
            explore += f" --contract {BLIND_CONTRACTS[name].relative_to(ROOT).as_posix()}"
        explore += f" --seed {seeds}"
        verdict = _verdict(group, catches)
        rows.append([f"`{name}`", explore, verdict, engines, _seconds(group), length])
    header = ["mutant", "command", "verdict", "found by", "kill s", "deviations / steps"]
    slowest = max((c.seconds for c in cells if c.killed), default=0.0)
    every = all(c.killed for c in cells)
    bar = "yes" if every and slowest <= LIMIT_S else "no"
    verdicts = [
        f"- every blind spot killed on every seed: {'yes' if every else 'no'}",
        f"- slowest kill: {slowest:.2f} s (bar: {LIMIT_S:g} s): {bar}",
        "",
    ]
    return [*out, *verdicts, *_table(header, rows)]


def _depth(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """``benchmarks/bench_depth.py``'s rows: each policy and mutant on the single checkout
    plan at k deviations, pruned and unpruned."""
    if not rows:
        return []
    k = rows[0]["k"]
    out = [
        "",
        f"## The single checkout plan at {k} deviations, pruned and unpruned",
        "",
        f"From `python benchmarks/bench_depth.py --k {k} --json FILE` (passed to",
        "this script with `--depth-json FILE`): the systematic engine alone on the",
        "representative checkout plan (4 calls, one instance), every built-in policy and",
        "mutant, each search in a fresh interpreter; CPU seconds around the search, peak",
        "RSS of that interpreter. Unpruned, `states` counts every state checked, equal ones",
        "again (nothing is merged). A policy whose bug needs",
        "another plan (one call, an invalid plan, two orders) passes here. Unpruned runs",
        "where pruned found a counterexample, and for `guarded`: walking every run of a",
        "passing policy is the expensive case, and `guarded` measures it. The issue's",
        "baseline for `guarded`: 705,585 states, 76 s CPU, 222 MB (target: at most 25 s",
        "and 100 MB).",
        "",
    ]

    def side(found: Mapping[str, Any]) -> list[str]:
        if "stopped_after_s" in found:
            return [f"stopped at {found['stopped_after_s']:g} s", "—", "—", "—"]
        if "error" in found:
            return [f"error: {found['error']}", "—", "—", "—"]
        if found.get("skipped"):
            return ["not run (passes pruned)", "—", "—", "—"]
        verdict = found["verdict"]
        if found["deviations"] is not None:
            verdict = f"`{verdict}` at {found['deviations']} / {found['steps']}"
        elif not found["complete"]:
            verdict += " (bound not completed)"
        states = f"{found['states']:,}"
        return [verdict, states, f"{found['cpu_s']:.1f}", f"{found['peak_rss_mb']:.0f}"]

    table = []
    for row in rows:
        agree = {True: "yes", False: "**no**", None: "—"}[row["agree"]]
        table.append([f"`{row['name']}`", *side(row["pruned"]), *side(row["unpruned"]), agree])
    header = ["policy", "pruned: verdict", "states", "CPU s", "MB"]
    header += ["unpruned: verdict", "states", "CPU s", "MB", "agree"]
    return [*out, *_table(header, table)]
