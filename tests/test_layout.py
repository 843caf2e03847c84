"""Another project's ``models`` (or ``invariants``) package on sys.path must not silently
shadow txcheck's: importing fails with an ImportError that names both locations."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _import_with(tmp_path: Path, statement: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-c", statement],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _fake(tmp_path: Path, name: str, *, regular: bool = True) -> Path:
    package = tmp_path / name
    package.mkdir()
    if regular:
        (package / "__init__.py").write_text('"""Not txcheck\'s."""\n', "utf-8")
    return package


def _last_line(done: subprocess.CompletedProcess[str]) -> str:
    return done.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("entry", ["import checker", "import invariants"])
def test_a_shadowing_models_package_fails_naming_both_locations(tmp_path: Path, entry: str) -> None:
    fake = _fake(tmp_path, "models")
    done = _import_with(tmp_path, entry)
    assert done.returncode == 1
    message = _last_line(done)
    assert message.startswith("ImportError: txcheck needs its own 'models' package at ")
    assert str(ROOT / "models") in message
    assert str(fake.resolve()) in message
    assert "AttributeError" not in done.stderr


def test_a_shadowing_invariants_package_fails_naming_both_locations(tmp_path: Path) -> None:
    fake = _fake(tmp_path, "invariants")
    done = _import_with(tmp_path, "import checker")
    message = _last_line(done)
    assert message.startswith("ImportError: txcheck needs its own 'invariants' package at ")
    assert str(ROOT / "invariants" / "__init__.py") in message
    assert str(fake.resolve() / "__init__.py") in message


def test_a_plain_models_folder_is_named_too(tmp_path: Path) -> None:
    fake = _fake(tmp_path, "models", regular=False)  # a namespace package: no __init__.py
    done = _import_with(tmp_path, "import invariants")
    message = _last_line(done)
    assert message.startswith("ImportError: txcheck needs its own 'models' package at ")
    assert str(fake.resolve()) in message


def test_without_a_shadow_everything_imports(tmp_path: Path) -> None:
    done = _import_with(tmp_path, "import checker, invariants, models.world; print('ok')")
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")
