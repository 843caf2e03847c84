"""What the simulated loop refuses, and where the refused call came from.

A run on ``SimLoop`` must depend on nothing but its seed and the checker's choices, so the
loop methods that reach the real world (threads, sockets, name resolution, pipes,
subprocesses, file descriptors, signals) are fences: calling one raises ``SimulationError``
naming the call and the caller's ``file:line``, the first frame outside asyncio and
``txcheck.sim`` (so ``asyncio.to_thread(f)`` on line 12 is reported at line 12).
"""

from __future__ import annotations

import asyncio
import os
import sys
from types import FrameType

from txcheck.models.errors import SimulationError

__all__ = ["FENCED", "call_site", "refusal"]

_THREADS = "threads run outside the simulated schedule"
_NETWORK = "the real network is outside the simulation; reach services through a port"
_PROCESSES = "subprocesses and pipes are outside the simulation"
_DESCRIPTORS = "file descriptors are real I/O, outside the simulation"
_SIGNALS = "signals are real-world events, outside the simulation"

FENCED: dict[str, str] = {
    "run_in_executor": _THREADS,
    "set_default_executor": _THREADS,
    "getaddrinfo": _NETWORK,
    "getnameinfo": _NETWORK,
    "create_connection": _NETWORK,
    "create_server": _NETWORK,
    "create_unix_connection": _NETWORK,
    "create_unix_server": _NETWORK,
    "connect_accepted_socket": _NETWORK,
    "create_datagram_endpoint": _NETWORK,
    "sendfile": _NETWORK,
    "start_tls": _NETWORK,
    "sock_recv": _NETWORK,
    "sock_recv_into": _NETWORK,
    "sock_recvfrom": _NETWORK,
    "sock_recvfrom_into": _NETWORK,
    "sock_sendall": _NETWORK,
    "sock_sendto": _NETWORK,
    "sock_connect": _NETWORK,
    "sock_accept": _NETWORK,
    "sock_sendfile": _NETWORK,
    "connect_read_pipe": _PROCESSES,
    "connect_write_pipe": _PROCESSES,
    "subprocess_shell": _PROCESSES,
    "subprocess_exec": _PROCESSES,
    "add_reader": _DESCRIPTORS,
    "remove_reader": _DESCRIPTORS,
    "add_writer": _DESCRIPTORS,
    "remove_writer": _DESCRIPTORS,
    "add_signal_handler": _SIGNALS,
    "remove_signal_handler": _SIGNALS,
}
"""Each fenced ``AbstractEventLoop`` method and why it is refused."""

_SKIP = (
    os.path.dirname(asyncio.__file__) + os.sep,
    os.path.dirname(os.path.abspath(__file__)) + os.sep,
)


def call_site(frame: FrameType | None = None) -> str | None:
    """``file:line`` of the innermost frame outside asyncio and ``txcheck.sim``."""
    frame = frame if frame is not None else sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_SKIP):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def refusal(call: str, why: str, frame: FrameType | None = None) -> SimulationError:
    """The error for a refused ``call`` made from ``frame`` (default: the caller's)."""
    site = call_site(frame if frame is not None else sys._getframe(1))
    where = f" at {site}" if site else ""
    return SimulationError(
        f"{call} is refused under txcheck's simulated loop{where}: {why}",
        call=call,
        site=site,
    )
