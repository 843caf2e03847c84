"""One error root for txcheck; user mistakes also subclass the matching built-in."""

from __future__ import annotations

__all__ = [
    "ContractError",
    "InputError",
    "InvariantError",
    "PolicyError",
    "PolicyStuck",
    "ProposalFormatError",
    "ServiceError",
    "TxcheckError",
    "UserCodeError",
    "WorldFixtureError",
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


class PolicyError(UserCodeError):
    """A user policy could not be loaded, raised, broke the request protocol, or ran
    without yielding."""

    kind = "policy"


class PolicyStuck(PolicyError):
    """A user policy ran past its time limit without yielding (the watchdog stopped it).
    Running it again would only hang again, so the search stops at once."""


class ServiceError(UserCodeError):
    """A service's handler raised, or a user's service set could not be loaded."""

    kind = "service"


class InvariantError(UserCodeError):
    """A user's invariant raised, or could not be loaded."""

    kind = "invariant"


def user_code_error(kind: str, message: str) -> UserCodeError:
    """The ``UserCodeError`` subclass for ``kind`` (``policy``, ``service``, ``invariant``)."""
    for cls in (PolicyError, ServiceError, InvariantError):
        if cls.kind == kind:
            return cls(message)
    return UserCodeError(message)
