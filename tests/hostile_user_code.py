"""Hostile user code: services and invariants that try to end, interrupt or hang txcheck,
or break their protocol. ``SOURCE`` is the text of a module (tests write it as
``hostile_code.py`` in a temporary directory and name its parts by import path, as a
user does); the tables say what each part does and what the one-line error must say.

Services serve the gift-card tools of ``examples/custom_service/contract.json``
(``send_gift_card``, ``void_gift_card``) under the name ``gift_cards``; ``STATE_EXITS``
raises in its state builder, which every run (and ``validate --world``) calls, whatever
the plan. Invariants are safety invariants, evaluated after the first step.
"""

from __future__ import annotations

__all__ = [
    "INVARIANT_ESCAPES",
    "INVARIANT_SHAPES",
    "SERVICE_ESCAPES",
    "SERVICE_SHAPES",
    "SOURCE",
]

SOURCE = '''
import os

from txcheck import Committed, Rejected, ServiceSet, always


class Custom(BaseException):
    """Not an Exception: only a containment of BaseException catches it."""


def _state(document):
    return {"cards": 0}


def _void(state, arguments):
    return Committed(receipt={"card_id": arguments["card_id"], "status": "void"})


def _serving(send, state=_state):
    return ServiceSet(
        name="gift_cards",
        initial_state=state,
        handlers={"send_gift_card": send, "void_gift_card": _void},
    )


def _raise(error):
    def send(state, arguments):
        raise error

    return send


def _returns(value):
    return lambda state, arguments: value


def _exits_building(document):
    raise SystemExit(0)


def _note_process():
    with open("looping.pids", "a", encoding="utf-8") as pids:
        pids.write(f"{os.getpid()}\\n")


def _loops(state, arguments):
    _note_process()
    while True:
        pass


def _interrupts_for_real(state, arguments):
    os.kill(os.getpid(), __import__("signal").SIGINT)  # a real Ctrl-C, not the service's
    for _ in range(500):  # up to 5 s for it to arrive, however loaded the machine
        __import__("time").sleep(0.01)
    return Committed(receipt={"card_id": "gc_1"})


EXITS = _serving(_raise(SystemExit(0)))
EXITS_WITH_ESCAPES = _serving(_raise(SystemExit("\\x1b[2J\\x1b]0;owned\\x07")))
INTERRUPTS = _serving(_raise(KeyboardInterrupt()))
RAISES_CUSTOM = _serving(_raise(Custom("custom")))
STATE_EXITS = _serving(_returns(None), state=_exits_building)
LOOPS = _serving(_loops)
SENDS_SIGINT = _serving(_interrupts_for_real)

RETURNS_NONE = _serving(_returns(None))
RECEIPT_NONE = _serving(_returns(Committed(receipt=None)))
RECEIPT_OBJECT = _serving(_returns(Committed(receipt=object())))
RECEIPT_SET = _serving(_returns(Committed(receipt={"card_id": {"gc_1", "gc_2"}})))
RECEIPT_NAN = _serving(_returns(Committed(receipt={"card_id": "gc_1", "amount": float("nan")})))
RECEIPT_INT_KEYS = _serving(_returns(Committed(receipt={1: "gc_1"})))
EVENTS_NOT_OBJECTS = _serving(_returns(Committed(receipt={"card_id": "gc_1"}, events=(42,))))
EVENTS_NONE = _serving(_returns(Committed(receipt={"card_id": "gc_1"}, events=None)))
REJECTED_CODE_NOT_TEXT = _serving(_returns(Rejected(code=None, message="no")))


@always
def exits(view):
    """Ends the process, if it may."""
    raise SystemExit(0)


@always
def interrupts(view):
    """Interrupts the process, if it may."""
    raise KeyboardInterrupt


@always
def raises_custom(view):
    """Raises a BaseException of its own."""
    raise Custom("custom")


def _exits_asked(contract, services):
    raise SystemExit(0)


@always(applies=_exits_asked)
def exits_when_asked(view):
    """Never fails; asking whether it applies ends the process, if it may."""
    return []


@always
def loops(view):
    """Never returns."""
    _note_process()
    while True:
        pass


@always
def yields_a_number(view):
    """Yields something that is not a message."""
    yield 42


@always
def returns_a_string(view):
    """Returns one message instead of an iterable of them."""
    return "one message"


@always
def returns_none(view):
    """Returns nothing at all (a function that forgot to return its list)."""
'''

SERVICE_ESCAPES = [
    ("EXITS", "raised handling send_gift_card ({call}): SystemExit: 0"),
    ("INTERRUPTS", "raised handling send_gift_card ({call}): KeyboardInterrupt"),
    ("RAISES_CUSTOM", "raised handling send_gift_card ({call}): Custom: custom"),
    ("STATE_EXITS", "raised building its state from the world fixture: SystemExit: 0"),
]
"""Service sets that raise what is not an ``Exception``, and what the error says
(``{call}``: the id of the call being handled)."""

SERVICE_SHAPES = [
    (
        "RETURNS_NONE",
        "handled send_gift_card ({call}): expected Committed or Rejected, got NoneType None",
    ),
    ("RECEIPT_NONE", "expected the receipt to be a JSON object (a dict), got NoneType None"),
    ("RECEIPT_OBJECT", "expected the receipt to be a JSON object (a dict), got object <object"),
    ("RECEIPT_SET", "expected the receipt['card_id'] to be JSON, got set"),
    ("RECEIPT_NAN", "expected the receipt['amount'] to be JSON, got the number nan"),
    ("RECEIPT_INT_KEYS", "expected the keys of the receipt to be strings, got int 1"),
    ("EVENTS_NOT_OBJECTS", "expected event 0 to be a JSON object (a dict), got int 42"),
    ("EVENTS_NONE", "expected the events to be a tuple of JSON objects, got NoneType None"),
    ("REJECTED_CODE_NOT_TEXT", "expected a string as Rejected.code, got NoneType None"),
]
"""Service sets whose handler returns what is not a receipt, events or a rejection."""

INVARIANT_ESCAPES = [
    ("exits", "invariant 'exits' raised SystemExit: 0 (after step 0)"),
    ("interrupts", "invariant 'interrupts' raised KeyboardInterrupt (after step 0)"),
    ("raises_custom", "invariant 'raises_custom' raised Custom: custom (after step 0)"),
    ("exits_when_asked", "invariant 'exits_when_asked': its applies() raised SystemExit: 0"),
]
"""Invariants that raise what is not an ``Exception``, and what the error says."""

INVARIANT_SHAPES = [
    ("yields_a_number", "invariant 'yields_a_number' yielded int 42: expected a message string"),
    (
        "returns_a_string",
        "invariant 'returns_a_string' returned str 'one message': expected an iterable of "
        "message strings",
    ),
    ("returns_none", "invariant 'returns_none' returned NoneType None: expected an iterable"),
]
"""Invariants whose result is not an iterable of message strings."""
