"""The install layout: checker/, models/ and invariants/ are installed as ``txcheck``,
``txcheck.models`` and ``txcheck.invariants``, so a user's own top-level ``models``,
``checker`` or ``invariants`` module cannot shadow them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"txcheck": "checker", "txcheck.models": "models", "txcheck.invariants": "invariants"}


def _pyproject() -> dict:  # type: ignore[type-arg]
    return tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))


def _packages_on_disk() -> set[str]:
    found = set()
    for package, folder in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((package, *parts)))
    return found


def test_the_package_list_names_every_folder_with_code() -> None:
    setuptools = _pyproject()["tool"]["setuptools"]
    assert setuptools["package-dir"] == FOLDERS
    assert set(setuptools["packages"]) == _packages_on_disk()


def test_the_typecheck_tree_mirrors_the_installed_layout() -> None:
    tree = ROOT / ".typecheck" / "txcheck"
    entries = {p.name for p in (ROOT / "checker").iterdir() if p.name != "__pycache__"}
    linked = [p for p in tree.iterdir() if p.name != "__pycache__"]  # Python's, if it ran there
    assert {p.name for p in linked} == entries | {"models", "invariants"}
    for entry in linked:
        assert entry.is_symlink()
        expected = ROOT / FOLDERS.get(f"txcheck.{entry.name}", f"checker/{entry.name}")
        assert entry.resolve() == expected.resolve()


def _run(cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        list(argv), cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300
    )


def test_a_project_with_its_own_models_checker_and_invariants_still_runs(tmp_path: Path) -> None:
    for name in ("models", "checker", "invariants"):
        (tmp_path / f"{name}.py").write_text(f'"""The user\'s own {name}."""\nOWN = True\n')
    (tmp_path / "mymod.py").write_text(
        textwrap.dedent(
            """\
            import models, checker, invariants
            from txcheck.models.sim.policies.guarded import Guarded

            assert models.OWN and checker.OWN and invariants.OWN


            class MyPolicy(Guarded):
                name = "my-policy"
            """
        )
    )
    done = _run(
        tmp_path,
        sys.executable,
        "-c",
        "import mymod, txcheck.exploration.engines.auto; print('ok')",
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")
    txcheck = Path(sys.executable).parent / "txcheck"
    done = _run(
        tmp_path,
        str(txcheck),
        "explore",
        "--policy",
        "mymod:MyPolicy",
        "--engine",
        "systematic",
        "--max-faults",
        "1",
        "--seed",
        "1",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert '"found": false' in done.stdout


def test_python_dash_m_txcheck_is_the_command(tmp_path: Path) -> None:
    done = _run(tmp_path, sys.executable, "-m", "txcheck", "--help")
    assert done.returncode == 0 and "validate" in done.stdout, done.stderr
