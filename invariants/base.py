"""Named properties over a run, in the stateright style: ``always`` and ``eventually``.

``always`` properties (safety) must hold after every step. ``eventually`` properties
(liveness) are judged once the run is quiescent: faults stopped and every actor drained.
A property is a plain function of a ``txcheck.models.runner.RunView`` that yields one readable
message per offending record; decorate it to give it its name and kind::

    @always
    def no_negative_stock(view: RunView) -> Iterator[str]:
        \"\"\"Stock never goes below zero (an oversold item).\"\"\"
        ...
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Literal, overload

import attrs

from txcheck.models.errors import TxcheckError
from txcheck.models.runner import RunView

__all__ = ["Invariant", "InvariantFailure", "Kind", "always", "eventually"]

Kind = Literal["always", "eventually"]
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@attrs.frozen(kw_only=True)
class InvariantFailure:
    """One invariant's verdict on one state: which records break it."""

    name: str
    kind: Kind
    messages: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"invariant": self.name, "kind": self.kind, "messages": list(self.messages)}


@attrs.frozen(kw_only=True)
class Invariant:
    """A named property; calling it on a view returns its messages (empty when it holds)."""

    name: str
    kind: Kind
    check: Callable[[RunView], Iterable[str]] = attrs.field(eq=False, repr=False)
    doc: str = attrs.field(default="", eq=False, repr=False)

    def __call__(self, view: RunView) -> list[str]:
        return list(self.check(view))

    def evaluate(self, view: RunView) -> InvariantFailure | None:
        messages = tuple(self.check(view))
        if not messages:
            return None
        return InvariantFailure(name=self.name, kind=self.kind, messages=messages)


def _make(kind: Kind, func: Callable[[RunView], Iterable[str]], name: str | None) -> Invariant:
    label = name or func.__name__
    if not _NAME.match(label):
        raise TxcheckError(f"an invariant name must be snake_case (got {label!r})")
    doc = (func.__doc__ or "").strip()
    if not doc:
        raise TxcheckError(
            f"invariant {label!r} needs a docstring saying which failure it prevents"
        )
    return Invariant(name=label, kind=kind, check=func, doc=doc)


@overload
def always(func: Callable[[RunView], Iterable[str]], *, name: str | None = None) -> Invariant: ...
@overload
def always(
    func: None = None, *, name: str | None = None
) -> Callable[[Callable[[RunView], Iterable[str]]], Invariant]: ...
def always(
    func: Callable[[RunView], Iterable[str]] | None = None, *, name: str | None = None
) -> Invariant | Callable[[Callable[[RunView], Iterable[str]]], Invariant]:
    """Declare a safety property, checked after every step."""
    if func is not None:
        return _make("always", func, name)
    return lambda f: _make("always", f, name)


@overload
def eventually(
    func: Callable[[RunView], Iterable[str]], *, name: str | None = None
) -> Invariant: ...
@overload
def eventually(
    func: None = None, *, name: str | None = None
) -> Callable[[Callable[[RunView], Iterable[str]]], Invariant]: ...
def eventually(
    func: Callable[[RunView], Iterable[str]] | None = None, *, name: str | None = None
) -> Invariant | Callable[[Callable[[RunView], Iterable[str]]], Invariant]:
    """Declare a liveness property, checked once the run is quiescent."""
    if func is not None:
        return _make("eventually", func, name)
    return lambda f: _make("eventually", f, name)
