"""Model-check policies from your own test suite: one line per policy.

Run with ``pytest examples/pytest_example`` from the repository root. ``TestGuarded``
passes; ``TestKeepsTheMoney`` fails on purpose and prints the shrunk counterexample (the
numbered steps, the state change and a Python reproduction). The trace txcheck finds for
it is committed next to this file as ``counterexample.json``.
"""

from __future__ import annotations

from examples.pytest_example.shop_policy import KeepsTheMoney
from txcheck import txcheck_testcase

TestGuarded = txcheck_testcase("guarded", max_examples=50)
TestKeepsTheMoney = txcheck_testcase(KeepsTheMoney(), max_examples=200)
