"""Loading a policy by name: a built-in, or a user's ``package.module:Name``.

A user policy is untrusted code. Each way it can go wrong is reported as such, in one
line: the import fails, the name is missing, the object is not a policy, its constructor
raises (``PolicyError``), or the spec itself is malformed (``InputError``). While it runs,
a policy that raises is reported by the runner (``Execution.error``); one that loops
without yielding is stopped by the watchdog (``txcheck.exploration.usercode.watchdog``).
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import attrs

from txcheck.exploration.usercode.watchdog import (
    DEFAULT_POLICY_TIMEOUT,
    WatchedPolicy,
    bounded_invariant,
    bounded_services,
    policy_timeout,
)
from txcheck.invariants import DEFAULT_INVARIANTS, Invariant
from txcheck.models.errors import (
    ControlFlow,
    InputError,
    InvariantError,
    PolicyError,
    ServiceError,
    UserCodeError,
)
from txcheck.models.memo import IdentityMemo
from txcheck.models.sim.checkout import CHECKOUT
from txcheck.models.sim.policies import BUILTIN_POLICIES, builtin_policy
from txcheck.models.sim.policies.base import Policy, import_path, is_async_entry
from txcheck.models.sim.services import ServiceSet

__all__ = [
    "AGENT_FRAMEWORKS",
    "SERVER_FRAMEWORKS",
    "LoadedPolicy",
    "agent_spec",
    "check_import_path",
    "import_path",
    "load_invariants",
    "load_named",
    "load_policy",
    "load_services",
    "load_user_code",
    "names_a_list",
    "origin",
    "resolve_import_path",
    "select_invariants",
]

_Loaded = TypeVar("_Loaded", ServiceSet, Invariant)


_SPEC = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


AGENT_FRAMEWORKS: dict[str, str] = {
    "openai-agents": "openai_agents",
    "pydantic-ai": "pydantic_ai",
    "langgraph": "langgraph",
    "mcp": "mcp",
}
"""The agent frameworks ``--framework`` names, by their ``txcheck.adapters`` module (and
their extra: ``pip install 'txcheck[NAME]'``)."""

SERVER_FRAMEWORKS = frozenset({"mcp"})
"""The frameworks whose agent may be checked against the user's own server
(``--mcp-server``: ``FRAMEWORK:module:make_agent@module:make_server``)."""

_AGENT_SPEC = re.compile(
    r"^(?P<framework>[a-z][a-z-]*):(?P<agent>[^:@]+:[^:@]+)(?:@(?P<server>[^:@]+:[^:@]+))?$"
)


def agent_spec(framework: str, agent: str, server: str | None = None) -> str:
    """The policy spec of a framework agent: ``FRAMEWORK:package.module:make_agent``, or
    with the user's own server ``mcp:package.module:make_agent@package.module:make_server``;
    the name a trace records and ``load_policy`` loads again. The server is part of the
    policy's name (not a field of its own) because it runs inside each orchestrator
    generation, on its ports, as the agent's code does: every place a policy is named
    (traces, ``replay --policy``, ``scenarios --policy``, workers, the printed Python)
    then rebuilds it with no new field."""
    if framework not in AGENT_FRAMEWORKS:
        raise InputError(
            f"unknown agent framework {framework!r} (known: {', '.join(AGENT_FRAMEWORKS)})",
            source="--framework",
        )
    _spec(agent, "--agent", "an agent factory")
    if server is None:
        return f"{framework}:{agent}"
    if framework not in SERVER_FRAMEWORKS:
        raise InputError(
            f"--mcp-server needs --framework mcp (got --framework {framework})",
            source="--mcp-server",
        )
    _spec(server, "--mcp-server", "an MCP server factory")
    return f"{framework}:{agent}@{server}"


def _agent(spec: str) -> Policy:
    """A framework agent run under txcheck: the adapter's ``agent_policy`` around the
    user's ``make_agent`` (and, for MCP, ``make_server``)."""
    framework, _, rest = spec.partition(":")
    agent, _, server = rest.partition("@")
    try:
        adapter = importlib.import_module(f"txcheck.adapters.{AGENT_FRAMEWORKS[framework]}")
    except ImportError as missing:
        raise PolicyError(
            f"checking a {framework} agent needs its extra: pip install 'txcheck[{framework}]' "
            f"({missing})"
        ) from None
    make = _resolve(agent, "agent")
    if not callable(make):
        raise PolicyError(
            f"{agent!r} must be a function that makes the agent (got {type(make).__name__})"
        )
    servers: tuple[Any, ...] = ()
    if server:
        make_server = _resolve(server, "MCP server")
        if not callable(make_server):
            raise PolicyError(
                f"{server!r} must be a function 'make_server(ports)' that makes the MCP "
                f"server (got {type(make_server).__name__})"
            )
        adapter.user_server(make_server)  # tried once: its own one-line errors
        servers = (make_server,)
    from txcheck.sim.policy import AsyncPolicy  # noqa: PLC0415 (start-up: asyncio)

    try:
        return AsyncPolicy(adapter.agent_policy(make, *servers), spec=spec)
    except ControlFlow:
        raise  # a real Ctrl-C
    except BaseException as error:  # user code: even SystemExit is reported, not obeyed
        raise PolicyError(
            f"making {framework} agent {agent!r} raised {type(error).__name__}: {error}"
        ) from None


@attrs.frozen(kw_only=True)
class LoadedPolicy:
    """A policy ready to run, with the spec that names it in traces (``spec``)."""

    spec: str
    policy: Policy = attrs.field(eq=False)
    builtin: bool


@contextmanager
def _cwd_on_path() -> Iterator[None]:
    """Import user modules from the current directory too, as ``python -m`` would."""
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        yield
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def resolve_import_path(
    spec: str, what: str = "policy", error: type[UserCodeError] = PolicyError
) -> Any:
    """The object at ``package.module:Name`` (the current directory is importable); a
    failure is one line, ``error``, naming ``what`` was imported."""
    module_name, _, attribute = spec.partition(":")
    with _cwd_on_path():
        try:
            module = importlib.import_module(module_name)
        except ImportError as problem:
            raise error(f"cannot import {what} module {module_name!r}: {problem}") from None
        except ControlFlow:
            raise  # a real Ctrl-C
        except BaseException as problem:  # user code: even SystemExit is reported, not obeyed
            raise error(
                f"importing {what} module {module_name!r} raised "
                f"{type(problem).__name__}: {problem}"
            ) from None
    found: Any = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise error(f"module {module_name!r} has no attribute {attribute!r}")
        found = getattr(found, part)
    return found


def check_import_path(spec: str, option: str, what: str) -> str:
    """``spec`` when it is an import path ``package.module:NAME``, else bad usage
    (``InputError`` naming ``option`` and ``what`` it should name)."""
    if not _SPEC.match(spec):
        raise InputError(
            f"{what} must be an import path 'package.module:NAME' (got {spec!r})", source=option
        )
    return spec


_resolve = resolve_import_path
_spec = check_import_path


_ORIGINS: IdentityMemo[str] = IdentityMemo(limit=None)
"""Where each loaded service set and invariant came from (by identity): ``module:NAME``,
or ``module:NAME#i`` for item ``i`` of a list."""


def _remember(spec: str, items: Sequence[object], *, listed: bool) -> None:
    """Note where each of ``items`` came from: ``spec``, or item ``i`` of the list it
    names (``listed``)."""
    if listed:
        _LISTS.add(spec)
    for index, item in enumerate(items):
        _ORIGINS.put(item, f"{spec}#{index}" if listed else spec)


_LISTS: set[str] = set()


def names_a_list(spec: str) -> bool:
    """Whether ``spec`` (``module:NAME``, loaded by ``load_services`` or
    ``load_invariants``) named a list of them rather than one."""
    return spec in _LISTS


def origin(obj: object) -> str | None:
    """The import path ``obj`` was loaded from by ``load_services`` or ``load_invariants``
    (``module:NAME`` or ``module:NAME#i``), or None."""
    return _ORIGINS.get(obj)


def load_services(
    specs: Sequence[str], *, timeout: float | None = DEFAULT_POLICY_TIMEOUT
) -> tuple[ServiceSet, ...]:
    """The ``ServiceSet``s ``--services`` names (each NAME a set or a list of them), each
    call of their code bounded by ``timeout`` seconds (None: unbounded)."""
    seconds = None if timeout is None else policy_timeout(timeout)
    return tuple(
        _load_all(
            specs,
            ServiceSet,
            ("--services", "a service set", "service", ServiceError),
            "a ServiceSet or a list of them",
            None if seconds is None else lambda s: bounded_services(s, seconds),
        )
    )


def load_invariants(
    specs: Sequence[str], *, timeout: float | None = DEFAULT_POLICY_TIMEOUT
) -> tuple[Invariant, ...]:
    """The invariants ``--invariants`` names (each NAME one made with @always or
    @eventually, or a list of them), each evaluation bounded by ``timeout`` seconds (None:
    unbounded)."""
    seconds = None if timeout is None else policy_timeout(timeout)
    return tuple(
        _load_all(
            specs,
            Invariant,
            ("--invariants", "an invariant", "invariant", InvariantError),
            "an invariant made with @always or @eventually, or a list of them",
            None if seconds is None else lambda i: bounded_invariant(i, seconds),
        )
    )


def _load_all(
    specs: Sequence[str],
    kind: type[_Loaded],
    option: tuple[str, str, str, type[UserCodeError]],
    wanted: str,
    bound: Callable[[_Loaded], _Loaded] | None,
) -> list[_Loaded]:
    """Every ``kind`` the ``specs`` name, each NAME one of them or a list of them, made
    ``bound`` (under the watchdog); ``option`` is the flag, what it names, the kind's word
    and its error class."""
    flag, what, word, error = option
    found: list[_Loaded] = []
    for spec in specs:
        value = _resolve(_spec(spec, flag, what), word, error)
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if not isinstance(item, kind):
                raise error(f"{spec!r} must be {wanted} (got {type(item).__name__})")
        loaded = [item if bound is None else bound(item) for item in items]
        _remember(spec, loaded, listed=items is value)
        found.extend(loaded)
    return found


def _instantiate(spec: str, found: Any) -> Policy:
    if isinstance(found, Policy):
        return found
    make: Callable[[], Policy]
    if is_async_entry(found):
        from txcheck.sim.policy import AsyncPolicy  # noqa: PLC0415 (start-up: asyncio)

        make = functools.partial(AsyncPolicy, found)
    elif isinstance(found, type) and issubclass(found, Policy):
        make = found
    else:
        raise PolicyError(
            f"{spec!r} must be a Policy subclass or instance, or an asyncio orchestrator "
            "('async def orchestrate(ctx, ports)' or a class with one; got "
            f"{type(found).__name__})"
        )
    try:
        return make()
    except ControlFlow:
        raise  # a real Ctrl-C
    except BaseException as error:  # user code: even SystemExit is reported, not obeyed
        raise PolicyError(
            f"creating policy {spec!r} raised {type(error).__name__}: {error}"
        ) from None


def load_policy(
    spec: str | Policy | type | Callable[..., Any],
    *,
    timeout: float | None = DEFAULT_POLICY_TIMEOUT,
) -> LoadedPolicy:
    """The policy ``spec`` names: a built-in name or ``package.module:Name``; a Policy
    instance or subclass is taken as is, and named by its import path when it has one
    (so traces and printed reproductions can load it again). User policies run under the
    watchdog unless ``timeout`` is None."""
    if (
        isinstance(spec, Policy)
        or (isinstance(spec, type) and issubclass(spec, Policy))
        or is_async_entry(spec)
    ):
        policy = _instantiate(repr(spec), spec)
        cls = spec if isinstance(spec, type) else type(spec)
        builtin = BUILTIN_POLICIES.get(policy.name) is cls
        own = getattr(policy, "import_path", None)  # an async policy: its entry's path
        name = policy.name if builtin else own or import_path(cls) or policy.name
        if builtin:
            return LoadedPolicy(spec=name, policy=policy, builtin=True)
    elif not isinstance(spec, str):
        raise PolicyError(
            f"{spec!r} is not a policy: expected a Policy (instance or subclass), an asyncio "
            "orchestrator, a built-in name or an import path 'package.module:Name'"
        )
    else:
        builtin = spec in BUILTIN_POLICIES
        if builtin:
            found = builtin_policy(spec)
            assert found is not None
            return LoadedPolicy(spec=spec, policy=found, builtin=True)
        agent = _AGENT_SPEC.match(spec)
        if agent is not None and agent["framework"] in AGENT_FRAMEWORKS:
            policy = _agent(agent_spec(agent["framework"], agent["agent"], agent["server"]))
        elif not _SPEC.match(spec):
            known = ", ".join(sorted(BUILTIN_POLICIES))
            raise InputError(
                f"policy must be a built-in name ({known}), an import path "
                f"'package.module:Name' or an agent 'FRAMEWORK:package.module:make_agent' "
                f"(FRAMEWORK: {', '.join(AGENT_FRAMEWORKS)}; an MCP agent may add "
                f"'@package.module:make_server'; got {spec!r})",
                source="--policy",
            )
        else:
            policy = _instantiate(spec, _resolve(spec))
        name = spec
    if timeout is not None:
        policy = WatchedPolicy(policy, seconds=policy_timeout(timeout), name=name)
    return LoadedPolicy(spec=name, policy=policy, builtin=builtin)


def load_named(
    specs: Sequence[str],
    load: Callable[..., tuple[_Loaded, ...]],
    timeout: float | None = None,
) -> list[_Loaded]:
    """What ``specs`` name, by ``load`` (``load_services`` or ``load_invariants``):
    ``module:NAME`` (one, or every item of a list), or ``module:NAME#i`` (item ``i`` of
    a list, as a target sent to workers names it), under the watchdog with ``timeout``
    (None: the default limit)."""
    found: list[_Loaded] = []
    for spec in specs:
        path, _, index = spec.partition("#")
        items = load([path], timeout=timeout or DEFAULT_POLICY_TIMEOUT)
        found.extend(items[int(index) : int(index) + 1] if index else items)
    return found


def select_invariants(
    invariants: Sequence[Invariant], only: Sequence[str] = (), skip: Sequence[str] = ()
) -> tuple[Invariant, ...]:
    """``invariants`` narrowed to ``only`` (when given) and without ``skip``; a name that
    is none of them, or a selection that leaves none, is bad usage (``InputError``)."""
    known = {i.name for i in invariants}
    for option, names in (("--invariants-only", only), ("--skip-invariant", skip)):
        unknown = sorted(set(names) - known)
        if unknown:
            raise InputError(
                f"no invariant named {', '.join(map(repr, unknown))} (known: "
                f"{', '.join(sorted(known))})",
                source=option,
            )
    chosen = tuple(
        i for i in invariants if (not only or i.name in only) and i.name not in set(skip)
    )
    if not chosen:
        raise InputError("the selection leaves no invariant to check", source="--skip-invariant")
    return chosen


def load_user_code(
    services: Sequence[str],
    invariants: Sequence[str],
    *,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    timeout: float | None = None,
    defaults: bool = True,
) -> tuple[tuple[ServiceSet, ...], tuple[Invariant, ...]]:
    """The services and invariants a target runs with: those ``services`` and
    ``invariants`` name (``load_named``), after checkout and the built-in invariants
    unless not ``defaults``, the invariants narrowed by ``only`` and ``skip``
    (``select_invariants``, when either is given). The user's code runs under the
    watchdog with ``timeout`` (None: the default limit)."""
    checks = tuple(load_named(invariants, load_invariants, timeout))  # first, as ever
    sets = tuple(load_named(services, load_services, timeout))
    if defaults:
        sets, checks = (CHECKOUT, *sets), (*DEFAULT_INVARIANTS, *checks)
    if only or skip:
        checks = select_invariants(checks, only, skip)
    return sets, checks
