"""``explore`` as users call it: the scenario catalog's regression seeds, then the engines.

The engines take seeds as data (``txcheck.exploration.engines.auto``); this is the one
module of the exploration half that knows the scenario catalog, so the arrow from the
catalog (which builds on the kernel) to the engines never runs back up.
"""

from __future__ import annotations

from collections.abc import Sequence

from txcheck.exploration.engines import auto
from txcheck.exploration.engines.auto import Seed
from txcheck.exploration.kernel.context import Observer, SearchContext, Tuning
from txcheck.exploration.kernel.report import ExploreResult
from txcheck.exploration.kernel.target import Deadline, Target
from txcheck.exploration.kernel.workers import Workers

__all__ = ["explore"]


def explore(
    target: Target,
    *,
    engine: str = "auto",
    seeds: bool | Sequence[Seed] = True,
    deadline: Deadline | None = None,
    observe: Observer | None = None,
    workers: Workers | None = None,
    tuning: Tuning | None = None,
) -> ExploreResult:
    """Search ``target`` for a counterexample, within its budget (or ``deadline``).

    ``seeds``: ``True`` replays the scenario catalog's seeds first (with ``engine="auto"``),
    ``False`` none, or a sequence of your own ``(plans, deviations)`` seeds. With ``workers``,
    the engines that can spread their work over them do. ``observe`` is told when each
    engine starts, with the counters it fills; ``tuning`` changes the engines' constants.
    """
    chosen: Sequence[Seed]
    if seeds is True:
        from txcheck.scenarios.catalog import scenario_seeds  # noqa: PLC0415 (start-up)

        chosen = scenario_seeds()
    elif seeds is False:
        chosen = ()
    else:
        chosen = seeds
    search = SearchContext.of(
        target, deadline=deadline, workers=workers, observe=observe, tuning=tuning
    )
    return auto.explore(target, search, engine=engine, seeds=chosen)
