"""The public API is a contract (issue 23 item 7): every name ``txcheck`` exports is listed
once and documented in docs/api.md with its true signature, every name the docs document
imports from ``txcheck``, the signatures need no name ``txcheck`` does not export, and no
doc imports an internal module. tests/api_contract.py holds the checks; each has a
positive control here."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

import txcheck
import txcheck.policy
from tests.api_contract import (
    API_DOC,
    BLOCK_BEGIN,
    BLOCK_END,
    INIT,
    NOT_OURS,
    REF_BEGIN,
    REF_END,
    ROOT,
    between,
    documented_names,
    internal_imports,
    missing_imports,
    names_signatures_need,
    reference,
    signature_names,
    signature_text,
    type_checking_block,
    undocumented,
    unexported,
)

DOC = API_DOC.read_text("utf-8")


def _docs() -> Iterator[Path]:
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))


# -- one list ---------------------------------------------------------------------------------


def test_each_public_name_is_listed_once_and_all_is_derived_from_the_list() -> None:
    listed = Counter(name for names in txcheck._EXPORTS.values() for name in names)
    assert [name for name, count in listed.items() if count > 1] == []
    assert txcheck.__all__ == sorted(listed)
    assert len(txcheck.__all__) > 140


def test_the_type_checking_block_is_generated_from_the_list() -> None:
    """mypy reads the names from this block; it must say exactly what ``_EXPORTS`` says
    (``python tests/api_contract.py --write`` regenerates it)."""
    source = INIT.read_text("utf-8")
    assert between(source, BLOCK_BEGIN, BLOCK_END) == type_checking_block(txcheck._EXPORTS)
    pairs = {
        (node.module, alias.name, alias.asname)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module != "typing"
        for alias in node.names
        if node.module and node.module.startswith("txcheck")
    }
    expected = {(m, n, n) for m, names in txcheck._EXPORTS.items() for n in names}
    assert pairs == expected


def test_a_name_missing_from_the_block_is_noticed() -> None:
    exports = {module: tuple(names) for module, names in txcheck._EXPORTS.items()}
    exports["txcheck.exploration.kernel.target"] = ("Target", "Bounds", "Budget")
    block = type_checking_block(exports)
    assert "Deadline as Deadline" not in block
    assert block != between(INIT.read_text("utf-8"), BLOCK_BEGIN, BLOCK_END)


def test_every_public_name_imports_lazily_and_import_txcheck_stays_light() -> None:
    script = (
        "import json, sys, txcheck\n"
        "light = sorted(m for m in sys.modules if m.startswith('txcheck.exploration'))\n"
        "from txcheck import Deadline, explore, load_services, Seed\n"
        "print(json.dumps(light))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout) == []
    assert [name for name in txcheck.__all__ if not hasattr(txcheck, name)] == []


# -- the names a documented signature needs --------------------------------------------------


def test_every_name_a_public_signature_needs_is_exported() -> None:
    assert names_signatures_need(txcheck.__all__) == {}
    assert {"Deadline", "Workers", "InProcess", "SearchContext", "Tuning", "Seed"} <= set(
        txcheck.__all__
    )
    assert {"StopReason", "StopKind", "ExploreResult", "local_workers", "cluster_workers"} <= set(
        txcheck.__all__
    )
    assert {"load_services", "load_invariants", "StoreBusy", "conform"} <= set(txcheck.__all__)


def test_the_signature_check_names_what_is_not_exported() -> None:
    entry = "def f(x: Secret, *, y: Plan = Kind.SAFETY, z: str = 'Quoted') -> Iterator[Other]"
    assert signature_names(entry) == {"Secret", "Plan", "Kind", "Iterator", "Other"}
    method = "class C(*, a: int)\n    def run(job: Hidden) -> None"
    assert signature_names(method) == {"Hidden", "None"}
    assert "None" in NOT_OURS
    assert "Secret" not in txcheck.__all__


# -- docs/api.md ------------------------------------------------------------------------------


def test_every_exported_name_is_documented() -> None:
    assert undocumented(txcheck.__all__, DOC) == []


def test_every_documented_name_imports_from_txcheck() -> None:
    assert unexported(DOC) == []
    assert {"explore", "Policy", "Deadline", "ServiceSet"} <= documented_names(DOC)


def test_the_reference_is_what_the_code_says() -> None:
    """The signatures in docs/api.md are rendered from ``inspect.signature``; when the code
    changes, ``python tests/api_contract.py --write`` brings the doc along."""
    assert between(DOC, REF_BEGIN, REF_END) == reference()


def test_the_doc_checks_report_a_missing_and_a_made_up_name() -> None:
    """Positive controls: a doc that leaves ``explore`` out, and one that documents a name
    ``txcheck`` does not export."""
    partial = reference([n for n in txcheck.__all__ if n != "explore"])
    assert undocumented(txcheck.__all__, partial) == ["explore"]
    assert undocumented(txcheck.__all__, "no reference here") == sorted(txcheck.__all__)
    made_up = "| name | what |\n|---|---|\n| `Policy`, `explore_all(target)` | ... |\n"
    assert unexported(made_up) == ["explore_all"]


def test_signature_text_renders_what_a_caller_writes() -> None:
    def sample(a: int, b: Sequence[str] = (), /, *, c: str | None = "x", **rest: object) -> bool:
        return bool(a or b or c or rest)

    assert signature_text(sample) == (
        "(a: int, b: Sequence[str] = (), /, *, c: str | None = 'x', **rest: object) -> bool"
    )
    assert "def explore(target: Target, *, engine: str = 'auto'" in DOC
    assert "deadline: Deadline | None = None" in DOC


# -- every doc imports only from txcheck -----------------------------------------------------


def test_no_doc_imports_an_internal_module() -> None:
    found = {
        str(path.relative_to(ROOT)): internal_imports(path.read_text("utf-8")) for path in _docs()
    }
    assert {path: lines for path, lines in found.items() if lines} == {}


def test_every_name_a_doc_imports_is_exported() -> None:
    found = {
        str(path.relative_to(ROOT)): missing_imports(path.read_text("utf-8")) for path in _docs()
    }
    assert {path: lines for path, lines in found.items() if lines} == {}


def test_a_doc_importing_a_name_that_is_not_exported_is_reported() -> None:
    text = (
        "from txcheck import explore, Nope  # comment, Ignored\n"
        "from txcheck.policy import (\n    Policy,\n    Target,\n)\n"
        "from txcheck import Target as T\n"
    )
    assert missing_imports(text) == ["line 1: txcheck.Nope", "line 2: txcheck.policy.Target"]


def test_an_internal_import_in_a_doc_is_reported() -> None:
    text = (
        "```python\n"
        "from txcheck import explore\n"
        "from txcheck.policy import Policy\n"
        "from txcheck.exploration.spread.cluster import local_workers\n"
        ">>> import txcheck.models.sim.world\n"
        "```\n"
    )
    assert internal_imports(text) == [
        "line 4: txcheck.exploration.spread.cluster",
        "line 5: txcheck.models.sim.world",
    ]


# -- txcheck.policy ---------------------------------------------------------------------------


def test_txcheck_policy_gathers_what_a_policy_author_needs() -> None:
    names = set(txcheck.policy.__all__)
    assert {"Policy", "OrchestratorContext", "ActorGen", "Invoke", "ToolResult"} <= names
    assert {"ResultStatus", "Phase", "TERMINAL_PHASES", "JournalState", "Delivery"} <= names
    assert {"undo_arguments", "Request"} <= names
    assert [n for n in sorted(names) if getattr(txcheck.policy, n) is not getattr(txcheck, n)] == []
    requests = txcheck._EXPORTS["txcheck.models.sim.requests"]
    assert set(requests) <= names


def test_txcheck_policy_is_documented() -> None:
    policies = (ROOT / "docs" / "policies.md").read_text("utf-8")
    assert "from txcheck.policy import" in policies
    assert "txcheck.policy" in DOC


def test_importing_txcheck_policy_loads_no_engine() -> None:
    script = (
        "import json, sys, txcheck.policy\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('hypothesis', 'rich', 'networkx', 'dask') or m.startswith('txcheck.exploration'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout) == []
