"""Stopping a search from outside: SIGINT and SIGTERM, and a hard deadline.

``Stopping`` is what the long-running commands hold while they search:

- the first SIGINT or SIGTERM interrupts the search's ``Deadline`` (every engine checks it
  between steps), so the command can still print and write the best counterexample found
  so far and exit 130 or 143; a second one ends the process at once, still without a
  traceback;
- a hard deadline, outside the reach of user code: a thread watches how long a user's
  policy, service or invariant has been running (``watchdog.IN_USER_CODE``, in the time
  it had: a busy machine's waits and the garbage collector's runs are not counted). Code that
  swallows the watchdog's alarm (a bare ``except:``) or ignores SIGALRM would otherwise
  hang the search; past ``policy_timeout`` twice over, the process ends with a one-line
  error naming it (exit 2). So does a search that overruns its time budget by far.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import FrameType, TracebackType
from typing import Any

from txcheck.cli.safe_text import one_line
from txcheck.exploration.kernel.target import Deadline
from txcheck.exploration.usercode.watchdog import IN_USER_CODE, USER_CODE_NAME, monotonic

__all__ = ["EXIT_SIGINT", "EXIT_SIGTERM", "Stopping"]

EXIT_SIGINT = 130
EXIT_SIGTERM = 143
_CODES = {signal.SIGINT: EXIT_SIGINT, signal.SIGTERM: EXIT_SIGTERM}


class Stopping:
    """``with Stopping(command, deadline, ...) as stop:``; ``stop.code`` is 130 or 143
    after an interrupt, else None."""

    def __init__(
        self,
        command: str,
        deadline: Deadline,
        *,
        policy_timeout: float | None,
        time_budget: float | None = None,
    ) -> None:
        self.command = command
        self.deadline = deadline
        self.policy_timeout = policy_timeout
        self.time_budget = time_budget
        self.received: int | None = None
        self._previous: dict[int, Any] = {}
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = monotonic()

    @property
    def code(self) -> int | None:
        return None if self.received is None else _CODES[signal.Signals(self.received)]

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None:  # a second signal: stop now
            self._end(_CODES[signal.Signals(signum)], "interrupted again: stopping at once")
        self.received = signum
        self.deadline.interrupt()

    def _end(self, code: int, message: str) -> None:
        sys.stdout.flush()
        print(f"txcheck {self.command}: {message}", file=sys.stderr, flush=True)
        os._exit(code)

    def _watch(self) -> None:
        limit = None if self.policy_timeout is None else 2 * self.policy_timeout + 1.0
        budget = None
        if self.time_budget is not None:
            budget = self.time_budget + max(30.0, self.time_budget)
        while not self._done.wait(0.25):
            since = IN_USER_CODE[0]
            now = monotonic()
            ran = 0.0 if since is None else since.charged()
            if limit is not None and ran > limit:
                who = USER_CODE_NAME[0] or "user code"
                kind = who.split(" ", 1)[0]
                self._end(
                    2,
                    f"{kind} error: {one_line(who, None)} has run {ran:.0f}s without "
                    "yielding or returning and did not stop when the watchdog fired (does it "
                    "catch every exception or ignore SIGALRM?); stopped by the hard deadline",
                )
            if budget is not None and now - self._started > budget:
                self._end(
                    3,
                    f"inconclusive: the search overran its time budget "
                    f"({self.time_budget:g}s) by far and was stopped by the hard deadline",
                )

    def __enter__(self) -> Stopping:
        if threading.current_thread() is threading.main_thread():
            for signum in _CODES:
                self._previous[signum] = signal.signal(signum, self._on_signal)
        self._thread = threading.Thread(target=self._watch, name="txcheck-deadline", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._done.set()
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
