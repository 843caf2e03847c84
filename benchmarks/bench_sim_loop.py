"""CPU per 10,000 task switches: ``txcheck.sim.SimLoop`` against asyncio's own loop.

    python benchmarks/bench_sim_loop.py [--rounds N] [--switches S]

Three workloads, each doing ``S`` task switches (default 10,000) in one loop run:

- ``sleep0``: 10 tasks, each ``await asyncio.sleep(0)`` ``S / 10`` times (the task
  reschedules itself: the ready queue alone);
- ``queue``: two tasks passing a token back and forth over two ``asyncio.Queue``s (a
  future resolved and a waiter woken per switch);
- ``gather``: ``S`` tiny tasks made and gathered (task creation and completion).

Each round measures every workload on both loops, alternating which loop goes first, in
CPU time (``time.process_time``) so a busy shared machine distorts it less than wall time;
the medians over rounds and the ratio sim/asyncio are printed. The asyncio side runs on
``asyncio.new_event_loop()`` (the selector loop: one ``select`` per iteration, which the
simulated loop does not have). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from txcheck.sim import SimLoop

Workload = Callable[[int], Coroutine[Any, Any, None]]


async def sleep0(switches: int) -> None:
    async def spin(times: int) -> None:
        for _ in range(times):
            await asyncio.sleep(0)

    await asyncio.gather(*(spin(switches // 10) for _ in range(10)))


async def queue(switches: int) -> None:
    ping: asyncio.Queue[int] = asyncio.Queue()
    pong: asyncio.Queue[int] = asyncio.Queue()

    async def player(inbox: asyncio.Queue[int], outbox: asyncio.Queue[int]) -> None:
        while True:
            n = await inbox.get()
            if n >= switches:
                await outbox.put(n)
                return
            await outbox.put(n + 1)

    a = asyncio.ensure_future(player(ping, pong))
    b = asyncio.ensure_future(player(pong, ping))
    await ping.put(0)
    await asyncio.wait([a, b], return_when=asyncio.FIRST_COMPLETED)
    for task in (a, b):
        task.cancel()
    await asyncio.gather(a, b, return_exceptions=True)


async def gather(switches: int) -> None:
    async def nothing(n: int) -> int:
        return n

    await asyncio.gather(*(nothing(n) for n in range(switches)))


WORKLOADS: dict[str, Workload] = {"sleep0": sleep0, "queue": queue, "gather": gather}
LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop,
    "sim": SimLoop,
}


def measure(make_loop: Callable[[], asyncio.AbstractEventLoop], work: Workload, n: int) -> float:
    """CPU seconds for one run of ``work(n)`` on a fresh loop (creation excluded)."""
    loop = make_loop()
    try:
        started = time.process_time()
        loop.run_until_complete(work(n))
        return time.process_time() - started
    finally:
        loop.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--switches", type=int, default=10_000)
    args = parser.parse_args(argv)
    per = 10_000 / args.switches
    times: dict[tuple[str, str], list[float]] = {}
    for workload in WORKLOADS.values():  # warm-up, uncounted
        for make in LOOPS.values():
            measure(make, workload, args.switches)
    for round_ in range(args.rounds):
        order = list(LOOPS) if round_ % 2 == 0 else list(reversed(LOOPS))
        for name, workload in WORKLOADS.items():
            for loop_name in order:
                spent = measure(LOOPS[loop_name], workload, args.switches) * per
                times.setdefault((name, loop_name), []).append(spent)
    print(f"CPU ms per 10,000 task switches, median of {args.rounds} interleaved rounds")
    print(f"{'workload':<10}{'asyncio':>10}{'sim':>10}{'sim/asyncio':>14}")
    for name in WORKLOADS:
        real = statistics.median(times[(name, "asyncio")]) * 1000
        simulated = statistics.median(times[(name, "sim")]) * 1000
        print(f"{name:<10}{real:>10.2f}{simulated:>10.2f}{simulated / real:>14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
