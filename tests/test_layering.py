"""``models`` and ``invariants`` are plain deterministic Python: they never import
Hypothesis, rich or ``checker``, so a policy or invariant can be tested without the engine."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ("models", "invariants")
FORBIDDEN = ("hypothesis", "rich", "checker")


def _modules(package: str) -> list[str]:
    names = []
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_importing_every_core_module_loads_no_engine_library() -> None:
    modules = [m for package in CORE for m in _modules(package)]
    assert "models.runner" in modules and "invariants.orchestration" in modules
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(json.dumps(bad))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def _imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("package", CORE)
def test_no_core_module_names_an_engine_library(package: str) -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{line}: import {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] in FORBIDDEN
    ]
    assert offending == []


def test_models_never_imports_invariants() -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{line}: import {name}"
        for path in sorted((ROOT / "models").rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] == "invariants"
    ]
    assert offending == []


def test_the_static_check_sees_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import rich.console\nfrom hypothesis import given\nfrom . import x\n"
        "def f():\n    import checker.cli\n",
        "utf-8",
    )
    assert _imports(sample) == [(1, "rich.console"), (2, "hypothesis"), (5, "checker.cli")]
