"""The watchdog charges user code with the time it had: on a busy machine (its thread
waiting for a CPU) or while the garbage collector runs over txcheck's heap, a step of
user code is not stopped for wall-clock time that was not its own. A default ``explore``
of an asyncio agent on a loaded 2-core machine was stopped as "has run 11s without
yielding" when its steps took milliseconds: the collector ran inside them while the
process waited for a CPU. Code that loops is still stopped (the controls)."""

from __future__ import annotations

import gc
import signal
import threading
from collections.abc import Iterator

import pytest

from txcheck.exploration.usercode import watchdog
from txcheck.exploration.usercode.watchdog import Bounded, UserClock, monotonic
from txcheck.models.errors import ServiceStuck

pytestmark = pytest.mark.skipif(
    not watchdog.watchdog_available(), reason="the SIGALRM watchdog needs POSIX"
)


@pytest.fixture
def no_alarm_left() -> Iterator[None]:
    previous = signal.signal(signal.SIGALRM, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _clock(*, wall_ago: float, waited: float, collected: float) -> UserClock:
    """A clock started ``wall_ago`` seconds ago, since when the thread waited ``waited``
    seconds for a CPU and the collector ran ``collected`` seconds."""
    now = UserClock.start()
    thread = threading.get_native_id()
    return UserClock(
        thread,
        monotonic() - wall_ago,
        watchdog._waited(thread) - waited,
        now.collecting - collected,
    )


def test_time_waited_for_a_cpu_or_collecting_is_not_charged() -> None:
    assert _clock(wall_ago=10.0, waited=9.0, collected=0.0).charged() == pytest.approx(1.0, 0.05)
    assert _clock(wall_ago=10.0, waited=0.0, collected=6.0).charged() == pytest.approx(4.0, 0.05)
    assert _clock(wall_ago=10.0, waited=0.0, collected=0.0).charged() == pytest.approx(10.0, 0.05)
    assert _clock(wall_ago=1.0, waited=3.0, collected=0.0).charged() == 0.0


def test_an_alarm_that_fires_early_by_the_time_charged_is_set_again(
    no_alarm_left: None,
) -> None:
    busy = watchdog._on_alarm_after(_clock(wall_ago=5.0, waited=4.0, collected=0.0), 5.0)
    busy(signal.SIGALRM, None)  # 1 s charged of 5: not stuck
    left, _ = signal.getitimer(signal.ITIMER_REAL)
    assert 3.5 < left <= 4.0 + 0.05
    spent = watchdog._on_alarm_after(_clock(wall_ago=5.0, waited=0.5, collected=0.0), 4.0)
    with pytest.raises(watchdog._Stuck):
        spent(signal.SIGALRM, None)  # 4.5 s charged of 4


def test_a_step_is_not_stopped_while_the_collector_runs() -> None:
    """The step's wall-clock time is the collector's (a heap of 100,000 cycles of
    txcheck's), well past the limit; none of it is charged to the step."""
    heap = [[i] for i in range(100_000)]
    for cell in heap:
        cell.append(cell)  # cycles: the collector must walk them all
    collect = Bounded(lambda: gc.collect() + gc.collect(), seconds=0.01, who="service 'x'",
                      stuck=ServiceStuck)  # fmt: skip
    started = monotonic()
    collect()
    assert monotonic() - started > 0.01, "the heap collected too fast to show anything"
    del heap


def test_a_step_that_loops_is_still_stopped() -> None:
    """The control: time the code spends on its own is charged in full."""

    def loop() -> None:
        while True:
            pass

    looping = Bounded(loop, seconds=0.2, who="service 'x'", stuck=ServiceStuck)
    with pytest.raises(ServiceStuck, match=r"ran 0\.2s without returning"):
        looping()


def test_a_step_that_sleeps_is_still_stopped() -> None:
    """Waiting on something else (a sleep, a socket) is the code's own time too."""
    import time  # noqa: PLC0415

    sleeping = Bounded(lambda: time.sleep(5), seconds=0.2, who="service 'x'", stuck=ServiceStuck)
    with pytest.raises(ServiceStuck):
        sleeping()
