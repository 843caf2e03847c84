"""``txcheck.sim``: a deterministic asyncio event loop for checking async orchestrators.

``SimLoop`` runs ordinary asyncio code on a virtual clock with a first-in, first-out ready
queue, refuses the real world (``SimulationError`` naming the call site) and gives the code
seeded stand-ins for the clock and randomness; ``run(main(), seed=...)`` is its
``asyncio.run``. A checker drives it step by step: ``run_until_blocked``, ``next_timer``,
``advance_to`` and port futures (``create_port_future``/``pending_ports``).

``AsyncPolicy`` makes an asyncio orchestrator (``async def orchestrate(ctx, ports)``, or a
class with one) a policy every engine checks: its code reaches the simulated world through
``Ports`` (``txcheck.sim.ports``), one request per port operation. The package imports the
standard library and ``txcheck.models`` only. See docs/async.md.
"""

from __future__ import annotations

from txcheck.models.errors import SimulationError
from txcheck.sim.fences import FENCED
from txcheck.sim.loop import EPOCH, PortFuture, SimFuture, SimLoop, SimTask, run
from txcheck.sim.policy import AsyncPolicy, is_async_entry
from txcheck.sim.ports import Ports, StalePortError, ToolTimeout

__all__ = [
    "EPOCH",
    "FENCED",
    "AsyncPolicy",
    "PortFuture",
    "Ports",
    "SimFuture",
    "SimLoop",
    "SimTask",
    "SimulationError",
    "StalePortError",
    "ToolTimeout",
    "is_async_entry",
    "run",
]
