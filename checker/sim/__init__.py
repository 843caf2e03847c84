"""``txcheck.sim``: a deterministic asyncio event loop for checking async orchestrators.

``SimLoop`` runs ordinary asyncio code on a virtual clock with a first-in, first-out ready
queue, refuses the real world (``SimulationError`` naming the call site) and gives the code
seeded stand-ins for the clock and randomness; ``run(main(), seed=...)`` is its
``asyncio.run``. A checker drives it step by step: ``run_until_blocked``, ``next_timer``,
``advance_to`` and port futures (``create_port_future``/``pending_ports``). This package
imports only the standard library and ``txcheck.models.errors``. See docs/async.md.
"""

from __future__ import annotations

from txcheck.models.errors import SimulationError
from txcheck.sim.fences import FENCED
from txcheck.sim.loop import EPOCH, PortFuture, SimFuture, SimLoop, SimTask, run

__all__ = [
    "EPOCH",
    "FENCED",
    "PortFuture",
    "SimFuture",
    "SimLoop",
    "SimTask",
    "SimulationError",
    "run",
]
