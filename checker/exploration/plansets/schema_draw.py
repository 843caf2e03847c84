"""One real draw of a tool's arguments, before a generated search relies on it.

The static checks (``txcheck.models.plan.schema_limits``) catch the contradictions a reader
can see; this catches the rest: a schema whose every generated value fails Draft 2020-12
validation, or one hypothesis-jsonschema cannot turn into a strategy. ``hypothesis.find``
runs the generate phase only (no shrinking, no database, a fixed random), so the check is
quick and the same every time.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import HypothesisException, NoSuchExample

__all__ = ["DRAWS", "first_draw_problem"]

DRAWS = 200
"""Examples tried before a schema is declared ungeneratable."""

_SETTINGS = settings(
    database=None,
    max_examples=DRAWS,
    phases=(Phase.generate,),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


def first_draw_problem(strategy: Any) -> str | None:
    """Why ``strategy`` yields no value (one line), or None when it yields one."""
    try:
        find(strategy, lambda _: True, settings=_SETTINGS, random=random.Random(0))
    except NoSuchExample:
        return f"none of {DRAWS} generated values was valid under its schema"
    except HypothesisException as error:
        return f"{type(error).__name__}: {error}"
    except (AttributeError, KeyError, TypeError, ValueError, RecursionError) as error:
        # hypothesis-jsonschema on a schema it does not support
        return f"{type(error).__name__}: {error}"
    return None
