"""``txcheck conform``: check a store implementation against the model of its record.

A public module, as ``txcheck.policy`` and ``txcheck.sim`` are: ``conform`` and its report,
the per-key linearizability checker for concurrent histories (``check`` over a ``History``
of ``Operation``s against a ``Specification``), the operations conformance applies
(``Op``, ``KIND_SPECS``, ``answer``) and the in-memory models they are checked against.
"""

from txcheck.conformance.linearizable import (
    DEFAULT_BUDGET,
    UNKNOWN,
    History,
    Linearizability,
    Operation,
    Part,
    Recorder,
    Specification,
    check,
)
from txcheck.conformance.machine import Conformance, Mismatch, conform
from txcheck.conformance.operations import KIND_SPECS, KindSpec, Op, Probe, answer
from txcheck.models.stores.memory import MemoryInbox, MemoryJournal, MemoryOutbox

__all__ = [
    "DEFAULT_BUDGET",
    "KIND_SPECS",
    "UNKNOWN",
    "Conformance",
    "History",
    "KindSpec",
    "Linearizability",
    "MemoryInbox",
    "MemoryJournal",
    "MemoryOutbox",
    "Mismatch",
    "Op",
    "Operation",
    "Part",
    "Probe",
    "Recorder",
    "Specification",
    "answer",
    "check",
    "conform",
]
