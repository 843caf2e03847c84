"""Named properties over a run, in the stateright style: ``always`` and ``eventually``.

``always`` properties (safety) must hold after every step. ``eventually`` properties
(liveness) are judged once the run is quiescent: faults stopped and every actor drained.
A property is a plain function of a ``RunView`` that yields one readable message per
offending record; decorate it to give it its name and kind::

    @always(reads=(Part.SERVICES,))
    def no_negative_stock(view: RunView) -> Iterator[str]:
        \"\"\"Stock never goes below zero (an oversold item).\"\"\"
        ...

``reads`` is optional: it names the parts of the world the property looks at, so the
checker can skip re-evaluating it after a step that changed none of them. A property that
does not declare it is evaluated after every step.

``severity`` says what a failure means: ``harm`` (the default: the world is wrong, a
double effect, money destroyed) or ``hygiene`` (the policy broke a rule that leads to harm
only sometimes: a retry under a fresh key, a rejected plan that wrote). When a run breaks
both, the harm is what a counterexample reports first. ``applies`` (optional) tells, for a
contract and the services that run it, why the property has nothing to read there (the
checkout properties on a contract no checkout service serves): it is then reported as not
applicable instead of as checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import overload

import attrs

from txcheck.models.errors import TxcheckError
from txcheck.models.plan.contract import Contract
from txcheck.models.sim.choices import Part, Vocabulary, part_mask
from txcheck.models.sim.runner import RunView
from txcheck.models.sim.services import ServiceSet

__all__ = ["Applies", "Check", "Invariant", "Kind", "Severity", "always", "eventually"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

Property = Callable[[RunView], Iterable[str]]


class Kind(Vocabulary):
    """When a property is judged: ``SAFETY`` (``always``) after every step, ``LIVENESS``
    (``eventually``) at quiescence."""

    SAFETY = "always"
    LIVENESS = "eventually"


class Severity(Vocabulary):
    """What a failure means: ``HARM`` (the world is wrong) or ``HYGIENE`` (the policy broke
    a rule that leads to harm only sometimes). A counterexample reports harm first."""

    HARM = "harm"
    HYGIENE = "hygiene"


Applies = Callable[[Contract, Sequence[ServiceSet]], "str | None"]
"""Why a property has nothing to read for a contract run on these services, or None when
it applies."""


def _parts(value: Iterable[Part | str] | None) -> frozenset[Part] | None:
    return None if value is None else frozenset(Part(p) for p in value)


@attrs.frozen(kw_only=True)
class Invariant:
    """A named property; calling it on a view returns its messages (empty when it holds).

    ``reads`` is the set of world parts it looks at, or None when undeclared (then it is
    evaluated after every step).
    """

    name: str
    kind: Kind = attrs.field(converter=Kind)
    check: Property = attrs.field(eq=False, repr=False)
    doc: str = attrs.field(default="", eq=False, repr=False)
    reads: frozenset[Part] | None = attrs.field(default=None, converter=_parts, eq=False)
    severity: Severity = attrs.field(default=Severity.HARM, converter=Severity, eq=False)
    applies: Applies | None = attrs.field(default=None, eq=False, repr=False)
    """Why the property does not apply to a contract and its services (None: always)."""
    reads_mask: int = attrs.field(init=False, eq=False, repr=False)
    """``reads`` as the flags of ``Part.bit`` (every flag when undeclared)."""

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "reads_mask", part_mask(self.reads))

    def __call__(self, view: RunView) -> list[str]:
        return list(self.check(view))

    @property
    def is_safety(self) -> bool:
        return self.kind is Kind.SAFETY

    @property
    def is_harm(self) -> bool:
        return self.severity is Severity.HARM

    def inapplicable(self, contract: Contract, services: Sequence[ServiceSet]) -> str | None:
        """Why this property has nothing to read for ``contract`` run on ``services``, or
        None when it applies."""
        return None if self.applies is None else self.applies(contract, services)


Check = Invariant
"""What the checker evaluates: an ``Invariant`` (made with ``always`` or ``eventually``)."""


def _make(
    kind: Kind,
    func: Property,
    *,
    name: str | None,
    reads: Iterable[Part | str] | None,
    severity: Severity | str = Severity.HARM,
    applies: Applies | None = None,
) -> Invariant:
    label = name or func.__name__
    if not _NAME.match(label):
        raise TxcheckError(f"an invariant name must be snake_case (got {label!r})")
    doc = (func.__doc__ or "").strip()
    if not doc:
        raise TxcheckError(
            f"invariant {label!r} needs a docstring saying which failure it prevents"
        )
    try:
        parts = _parts(reads)
    except ValueError:
        known = ", ".join(p.value for p in Part)
        raise TxcheckError(
            f"invariant {label!r}: 'reads' must name parts of the world ({known}) (got {reads!r})"
        ) from None
    try:
        level = Severity(severity)
    except ValueError:
        raise TxcheckError(
            f"invariant {label!r}: 'severity' must be 'harm' or 'hygiene' (got {severity!r})"
        ) from None
    return Invariant(
        name=label, kind=kind, check=func, doc=doc, reads=parts, severity=level, applies=applies
    )


Decorator = Callable[[Property], Invariant]


@overload
def always(
    func: Property,
    *,
    name: str | None = None,
    reads: Iterable[Part | str] | None = None,
    severity: Severity | str = Severity.HARM,
    applies: Applies | None = None,
) -> Invariant: ...
@overload
def always(
    func: None = None,
    *,
    name: str | None = None,
    reads: Iterable[Part | str] | None = None,
    severity: Severity | str = Severity.HARM,
    applies: Applies | None = None,
) -> Decorator: ...
def always(
    func: Property | None = None,
    *,
    name: str | None = None,
    reads: Iterable[Part | str] | None = None,
    severity: Severity | str = Severity.HARM,
    applies: Applies | None = None,
) -> Invariant | Decorator:
    """Declare a safety property, checked after every step."""
    if func is not None:
        return _make(Kind.SAFETY, func, name=name, reads=reads, severity=severity, applies=applies)
    return lambda f: _make(
        Kind.SAFETY, f, name=name, reads=reads, severity=severity, applies=applies
    )


@overload
def eventually(
    func: Property,
    *,
    name: str | None = None,
    reads: Iterable[Part | str] | None = None,
    severity: Severity | str = Severity.HARM,
    applies: Applies | None = None,
) -> Invariant: ...
@overload
def eventually(
    func: None = None,
    *,
    name: str | None = None,
    reads: Iterable[Part | str] | None = None,
    severity: Severity | str = Severity.HARM,
    applies: Applies | None = None,
) -> Decorator: ...
def eventually(
    func: Property | None = None,
    *,
    name: str | None = None,
    reads: Iterable[Part | str] | None = None,
    severity: Severity | str = Severity.HARM,
    applies: Applies | None = None,
) -> Invariant | Decorator:
    """Declare a liveness property, checked once the run is quiescent."""
    if func is not None:
        return _make(
            Kind.LIVENESS, func, name=name, reads=reads, severity=severity, applies=applies
        )
    return lambda f: _make(
        Kind.LIVENESS, f, name=name, reads=reads, severity=severity, applies=applies
    )
