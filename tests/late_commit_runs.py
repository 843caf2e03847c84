"""A fixed schedule the late-commit tests share: the default, except that the first charge
times out and commits later, landing as soon as a later charge attempt has been answered
(before the order is confirmed, which would make the service refuse it), or when nothing
else can move."""

from __future__ import annotations

from txcheck.exploration.kernel.session import Session
from txcheck.models.sim.choices import Action, Outcome
from txcheck.models.sim.requests import Invoke
from txcheck.models.sim.runner import SERVICE

__all__ = ["late_commit_on_first_charge"]


def late_commit_on_first_charge(session: Session) -> Session:
    """Drive ``session`` to its end on that schedule; it, for chaining."""
    late = False
    while session.choices() and not session.done:
        options = session.choices()
        choice = options[0]
        last = session.run.steps[-1] if session.run.steps else None
        if (
            late
            and last is not None
            and last.choice.action is Action.COMPLETE
            and last.choice.outcome is not Outcome.LATE_COMMIT
            and last.request.get("tool") == "charge_payment"
        ):
            choice = next((o for o in options if o.actor == SERVICE), choice)
        for option in options:
            request = session.run.request_of(option.actor)
            if (
                not late
                and option.action is Action.COMPLETE
                and option.outcome is Outcome.LATE_COMMIT
                and isinstance(request, Invoke)
                and request.tool == "charge_payment"
            ):
                choice, late = option, True
        session.apply(choice)
    assert late
    return session
