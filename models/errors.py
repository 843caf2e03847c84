"""One error root for txcheck; user mistakes also subclass the matching built-in."""

from __future__ import annotations

__all__ = [
    "ContractError",
    "ControlFlow",
    "InputError",
    "Interrupted",
    "InvariantError",
    "InvariantStuck",
    "PolicyError",
    "PolicyStuck",
    "ProposalFormatError",
    "ServiceError",
    "ServiceStuck",
    "SimulationError",
    "StoreError",
    "TxcheckError",
    "UnknownNameError",
    "UserCodeError",
    "UserCodeStuck",
    "WorldFixtureError",
    "raised",
    "user_code_error",
]


class TxcheckError(Exception):
    """Root of every error txcheck raises on purpose."""


class InputError(TxcheckError, ValueError):
    """A user's file or argument is wrong.

    ``str(error)`` is the one-line message the CLI prints: ``FILE:LINE: problem``, with the
    JSON path of the offending part when there is one.
    """

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        path: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.path = path
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = self.source or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        at = f" at {self.path}" if self.path else ""
        text = " ".join(self.problem.split())
        return f"{where}:{at} {text}" if at else f"{where}: {text}"

    def located(self, *, source: str | None = None, line: int | None = None) -> InputError:
        """The same error with the file (and line) filled in where it was not yet known."""
        return type(self)(
            self.problem,
            source=self.source or source,
            line=self.line if self.line is not None else line,
            path=self.path,
        )


class UnknownNameError(TxcheckError, ValueError):
    """A string outside a closed vocabulary (a tool result status, an explore outcome, ...)
    where one of its names was expected; the message lists the allowed ones."""


class ContractError(InputError):
    """The contract file is malformed."""


class ProposalFormatError(InputError):
    """The proposal document is none of the recognised vendor formats."""


class WorldFixtureError(InputError):
    """The world fixture file is malformed."""


class UserCodeError(TxcheckError, RuntimeError):
    """A user's code (a policy, a service, an invariant) could not be loaded, raised, or
    broke its protocol: not a counterexample, a mistake to fix (the CLI exits 2)."""

    kind = "user code"


class UserCodeStuck(UserCodeError):
    """User code ran past its time limit (the watchdog stopped it). Running it again would
    only hang again, so a search stops at once and reports that run as it is."""


class PolicyError(UserCodeError):
    """A user policy could not be loaded, raised, broke the request protocol, or ran
    without yielding."""

    kind = "policy"


class PolicyStuck(PolicyError, UserCodeStuck):
    """A user policy ran past its time limit without yielding (the watchdog stopped it)."""


class ServiceError(UserCodeError):
    """A service's handler raised, returned something that is not a JSON receipt, events
    or rejection, or a user's service set could not be loaded."""

    kind = "service"


class ServiceStuck(ServiceError, UserCodeStuck):
    """A service's code ran past its time limit without returning."""


class StoreError(UserCodeError):
    """A store implementation given to ``txcheck conform`` could not be loaded or opened,
    or lacks a method of its protocol."""

    kind = "store"


class InvariantError(UserCodeError):
    """A user's invariant raised, yielded something that is not a message string, or
    could not be loaded."""

    kind = "invariant"


class InvariantStuck(InvariantError, UserCodeStuck):
    """A user's invariant ran past its time limit without returning."""


class SimulationError(UserCodeError):
    """Code running on txcheck's simulated event loop (``txcheck.sim``) reached for the real
    world (a thread, a socket, a subprocess, a signal, a file descriptor, a blocking sleep),
    or the simulation cannot go on (nothing is ready, no timer is due, and only a checker
    could resolve what is awaited). A run that depended on the real world would not replay,
    so it is refused rather than run: the CLI exits 2.

    ``call`` names what was refused (``loop.run_in_executor``) and ``site`` the caller's
    ``file:line`` outside asyncio and txcheck (``None`` when no such frame was found).
    """

    def __init__(self, message: str, *, call: str = "", site: str | None = None) -> None:
        self.call = call
        self.site = site
        super().__init__(message)


class ControlFlow(BaseException):
    """Mixed into txcheck's own control-flow exceptions (a real Ctrl-C, a search's time
    budget running out): where user code is contained, these pass through by type, while
    anything else user code raises (``SystemExit``, its own ``KeyboardInterrupt``, a
    custom ``BaseException``) is reported as its error."""


class Interrupted(KeyboardInterrupt, ControlFlow):
    """A real SIGINT (the CLI's handler raises it), as opposed to a ``KeyboardInterrupt``
    that a service, an invariant or a policy raises itself."""


def raised(error: BaseException) -> str:
    """``Type: message`` (or ``Type`` alone) of what user code raised, on one line."""
    try:
        text = " ".join(str(error).split())
    except ControlFlow:
        raise
    except BaseException:  # user code's own __str__ may raise too
        text = "(its message could not be read: str() raised)"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def user_code_error(kind: str | None, message: str) -> UserCodeError:
    """The ``UserCodeError`` subclass for ``kind`` (``policy``, ``service``, ``invariant``,
    or its ``ErrorKind`` member)."""
    for cls in (PolicyError, ServiceError, InvariantError):
        if cls.kind == kind:
            return cls(message)
    return UserCodeError(message)
