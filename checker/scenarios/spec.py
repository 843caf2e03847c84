"""The values that hold a named scenario and a positive control, checked at definition.

``txcheck.scenarios.catalog`` defines the 14 scenarios and 5 controls with these; a mistake in a
definition (an unknown dimension, a designated invariant the control's policy does not
protect) fails at import time, not halfway through a run.
"""

from __future__ import annotations

import re

import attrs

from txcheck.exploration.kernel.schedule import Deviation
from txcheck.models.errors import TxcheckError
from txcheck.models.plan.proposal import Plan
from txcheck.models.sim.policies import DESIGNATED
from txcheck.scenarios.assertions import Assertion

__all__ = ["DIMENSIONS", "Control", "Scenario"]

DIMENSIONS: tuple[str, ...] = (
    "schema",
    "completeness",
    "order",
    "timeout",
    "idempotency",
    "saga",
    "delivery",
)
_ID = re.compile(r"^[a-z][a-z0-9-]*$")


def _check_id(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not _ID.match(value):
        raise TxcheckError(f"'{attribute.name}' must be kebab-case (got {value!r})")


def _check_dimension(_: object, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in DIMENSIONS:
        raise TxcheckError(f"'dimension' must be one of {', '.join(DIMENSIONS)} (got {value!r})")


@attrs.frozen(kw_only=True)
class Scenario:
    """One named, deterministic run: plans, deviations, and what must hold at the end."""

    id: str = attrs.field(validator=_check_id)
    dimension: str = attrs.field(validator=_check_dimension)
    purpose: str
    plans: tuple[Plan, ...]
    deviations: tuple[Deviation, ...] = ()
    assertions: tuple[Assertion, ...]


@attrs.frozen(kw_only=True)
class Control:
    """A positive control: ``policy`` on ``scenario`` must show ``expected_failure``.

    ``designated`` is the invariant that must fire; it must be one that
    ``txcheck.models.sim.policies.controls.DESIGNATED`` names for the policy.
    """

    policy: str
    scenario: str
    expected_failure: str
    designated: str
    assertions: tuple[Assertion, ...]

    def __attrs_post_init__(self) -> None:
        if self.policy not in DESIGNATED:
            raise TxcheckError(
                f"'policy' must be a control policy ({', '.join(sorted(DESIGNATED))}) "
                f"(got {self.policy!r})"
            )
        if self.designated not in DESIGNATED[self.policy]:
            raise TxcheckError(
                f"'designated' must be one of {DESIGNATED[self.policy]} for {self.policy} "
                f"(got {self.designated!r})"
            )
