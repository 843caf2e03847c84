"""What a deviation costs: one, except the same fault again on the same retried call.

Bounds on deviations exist to keep searches finite, and a bug that needs a call to time
out four times in a row (a retry budget that never counts timeouts) is one idea, not four:
counted one each, it hides past any bound a search can afford. So a fault is *free* when
the run's previous deviation was the same outcome completing the same call (same actor,
same call id, same tool) and nothing else deviated in between: the call was retried and
met the same fault again. Free repeats are bounded (``REPEAT_LIMIT`` in a row), so a
policy that retries forever still meets a finite search; the one after that costs one.

Engines count with ``deviation_count`` and branch with ``is_free_repeat``; traces keep
every deviating step marked ``deviation: true``, so a reader sees each fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from txcheck.models.sim.choices import Action, Choice

__all__ = [
    "NO_CHAIN",
    "REPEAT_LIMIT",
    "FaultChain",
    "deviation_count",
    "extend",
    "fault_chain",
    "is_free_repeat",
]

REPEAT_LIMIT = 8
"""Free repeats in a row of one fault on one retried call; the next one costs one."""


def _fault(step: Any) -> tuple[str, str, str, str] | None:
    """(actor, outcome, call, tool) of a step that completed a call with a fault."""
    choice: Choice = step.choice
    if choice.action is not Action.COMPLETE:
        return None
    request = step.request
    return (choice.actor, str(choice.outcome), str(request.get("call")), str(request.get("tool")))


FaultChain = tuple[tuple[str, str, str, str] | None, int]
"""The fault of a run's last deviation (None if it was not a faulty completion) and how
many free repeats of it end the run's deviations."""


NO_CHAIN: FaultChain = (None, 0)


def extend(chain: FaultChain, step: Any) -> FaultChain:
    """The chain after ``step`` (unchanged by a step on the default schedule)."""
    if not step.deviation:
        return chain
    last, free = chain
    fault = _fault(step)
    if fault is not None and fault == last and free < REPEAT_LIMIT:
        return last, free + 1
    return fault, 0


def fault_chain(steps: Sequence[Any]) -> FaultChain:
    """The ``FaultChain`` at the end of ``steps``."""
    chain = NO_CHAIN
    for step in steps:
        chain = extend(chain, step)
    return chain


def deviation_count(steps: Sequence[Any]) -> int:
    """The deviations ``steps`` cost: each deviating step, free repeats excepted."""
    count = 0
    chain = NO_CHAIN
    for step in steps:
        if step.deviation:
            after = extend(chain, step)
            count += after[1] == 0
            chain = after
    return count


def is_free_repeat(chain: FaultChain, choice: Choice, call: str | None, tool: str | None) -> bool:
    """Whether taking ``choice`` next (completing ``call`` of ``tool``, the call its actor
    has in flight) would be a free repeat of the last deviation (``chain``, from
    ``fault_chain`` of the run's steps so far)."""
    if choice.action is not Action.COMPLETE or call is None:
        return False
    last, free = chain
    mine = (choice.actor, str(choice.outcome), str(call), str(tool))
    return last is not None and last == mine and free < REPEAT_LIMIT
