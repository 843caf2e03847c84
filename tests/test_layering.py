"""``txcheck.models`` and ``txcheck.invariants`` are plain deterministic Python: they never
import Hypothesis, rich or the engine (the rest of ``txcheck``), so a policy or invariant can
be tested without the search engine. Imports flow one way: models <- invariants <- engine."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = {"models": "txcheck.models", "invariants": "txcheck.invariants"}
LIBRARIES = ("hypothesis", "rich", "dask", "distributed", "redis")


def _modules(folder: str) -> list[str]:
    names = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        parts = (CORE[folder], *path.relative_to(ROOT / folder).with_suffix("").parts)
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _engine_module(name: str) -> bool:
    """A txcheck module outside the core (the package root itself is a lazy facade)."""
    return (
        name.startswith("txcheck.")
        and not name.startswith(tuple(f"{p}." for p in CORE.values()))
        and name not in CORE.values()
    )


def test_importing_every_core_module_loads_no_engine_module() -> None:
    modules = [m for folder in CORE for m in _modules(folder)]
    assert "txcheck.models.sim.runner" in modules and "txcheck.invariants.orchestration" in modules
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert [m for m in loaded if m.split(".")[0] in LIBRARIES] == []
    assert [m for m in loaded if _engine_module(m)] == []


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


@pytest.mark.parametrize("folder", sorted(CORE))
def test_no_core_module_names_an_engine_library_or_module(folder: str) -> None:
    allowed = (
        ("txcheck.models",) if folder == "models" else ("txcheck.models", "txcheck.invariants")
    )
    offending = [
        f"{path.relative_to(ROOT)}:{line}: import {name}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] in LIBRARIES
        or name.startswith(".")
        or (name.split(".")[0] == "txcheck" and not name.startswith(allowed))
    ]
    assert offending == []


def test_the_static_check_sees_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import rich.console\nfrom hypothesis import given\nfrom . import x\n"
        "def f():\n    import txcheck.cli\n",
        "utf-8",
    )
    assert _imports(sample) == [
        (1, "rich.console"),
        (2, "hypothesis"),
        (3, "."),
        (5, "txcheck.cli"),
    ]


# The floor plan inside the two halves (docs/decisions/012-floor-plan.md): each room may
# import only the rooms listed for it, so an arrow that runs back up fails here by name.
ROOMS: dict[str, tuple[str, ...]] = {
    "txcheck.models.plan": ("txcheck.models.base",),
    "txcheck.models.sim": ("txcheck.models.base", "txcheck.models.plan"),
    "txcheck.models.stores": ("txcheck.models.base", "txcheck.models.sim"),
    "txcheck.exploration.kernel": ("txcheck.models", "txcheck.invariants"),
    "txcheck.exploration.usercode": ("txcheck.models", "txcheck.invariants", "txcheck.sim"),
    "txcheck.exploration.plansets": (
        "txcheck.models",
        "txcheck.invariants",
        "txcheck.exploration.kernel",
    ),
    "txcheck.exploration.spread": (
        "txcheck.models",
        "txcheck.invariants",
        "txcheck.exploration.kernel",
        "txcheck.exploration.usercode",
        "txcheck.traces",
        "txcheck.cli.safe_text",
    ),
    "txcheck.exploration.engines": (
        "txcheck.models",
        "txcheck.invariants",
        "txcheck.exploration.kernel",
        "txcheck.exploration.plansets",
        "txcheck.exploration.spread",
        "txcheck.exploration.usercode",
    ),
    "txcheck.sim": ("txcheck.models",),
}


def _room(module: str) -> str:
    """The room a module sits in: its package under models/ or exploration/, where
    models/'s own top-level modules are the shared base."""
    parts = module.split(".")
    if parts[:2] == ["txcheck", "models"]:
        sub = parts[2] if len(parts) > 3 and parts[2] in {"plan", "sim", "stores"} else "base"
        return f"txcheck.models.{sub}"
    if parts[:2] == ["txcheck", "sim"]:
        return "txcheck.sim"
    return ".".join(parts[:3])


def _crosses(room: str, name: str) -> bool:
    """Whether importing ``name`` from ``room`` is an arrow the floor plan does not allow."""
    if not name.startswith("txcheck") or _room(name) == room:
        return False
    return not any(_room(name) == a or name.startswith(a) for a in ROOMS[room])


def _room_modules(room: str) -> list[tuple[Path, str]]:
    if room == "txcheck.sim":
        return [(path, room) for path in sorted((ROOT / "checker/sim").rglob("*.py"))]
    package, _, rest = room.rpartition(".")
    base = ROOT / ("models" if package == "txcheck.models" else "checker/exploration") / rest
    return [(path, room) for path in sorted(base.rglob("*.py"))]


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_each_room_imports_only_the_rooms_below_it(room: str) -> None:
    files = _room_modules(room)
    assert files, f"{room} has no modules"
    offending = [
        f"{path.relative_to(ROOT)}:{line}: import {name}"
        for path, _ in files
        for line, name in _imports(path)
        if _crosses(room, name)
    ]
    assert offending == []


def test_the_room_check_catches_an_arrow_back_up(tmp_path: Path) -> None:
    """A positive control: a kernel module that imports an engine is named."""
    sample = tmp_path / "sample.py"
    sample.write_text("from txcheck.exploration.engines.auto import explore\n", "utf-8")
    name = _imports(sample)[0][1]
    assert _crosses("txcheck.exploration.kernel", name)
    assert _crosses("txcheck.models.plan", "txcheck.models.sim.world")
    assert not _crosses("txcheck.models.sim", "txcheck.models.plan.contract")
    assert _crosses("txcheck.sim", "txcheck.exploration.kernel.session")
    assert _crosses("txcheck.sim", "txcheck.invariants")
    assert not _crosses("txcheck.sim", "txcheck.models.sim.world")


def test_the_simulated_loop_imports_only_the_standard_library_attrs_and_models() -> None:
    """``txcheck.sim`` runs under every engine and in workers: it must not pull in
    Hypothesis, rich, an engine or the rest of txcheck, only the plain, deterministic
    ``txcheck.models`` its ports speak (issue 24)."""
    outside = [
        f"{path.relative_to(ROOT)}:{line}: import {name}"
        for path in sorted((ROOT / "checker/sim").rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] not in {*sys.stdlib_module_names, "attrs", "txcheck"}
        or (name.startswith("txcheck") and not name.startswith(("txcheck.sim", "txcheck.models")))
    ]
    assert outside == []
    script = "import json, sys, txcheck.sim\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert [m for m in loaded if m.split(".")[0] in LIBRARIES] == []
    assert [
        m
        for m in loaded
        if m.startswith("txcheck.") and not m.startswith(("txcheck.sim", "txcheck.models"))
    ] == []


def test_only_the_search_module_of_exploration_knows_the_scenario_catalog() -> None:
    knows = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "checker/exploration").rglob("*.py")
        for _, name in _imports(path)
        if name.startswith("txcheck.scenarios")
    )
    assert knows == ["checker/exploration/search.py"]
