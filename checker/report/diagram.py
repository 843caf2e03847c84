"""The run as a sequence diagram in SVG: a lifeline per actor and per service it talks to.

Each step is a row. A tool call is an arrow from the actor to the tool's lifeline, and its
answer an arrow back; an answer the actor never learned (a timeout before commit, a
response lost after commit) is dashed. Requests to the journal, the idempotency store, the
outbox, the broker and the inbox are arrows to their lifelines; a crash is an X on the
actor's lifeline and its next step a new activation (``restart``); a broker duplicate or a
second delivery of one event is marked ``redelivery``; a clock jump is marked on the
clock. Deviations from the default schedule carry the class ``dev``; the step where the
reported invariant broke carries ``break``. Each row links to its line of the steps
table (``#step-N``) and is the target of the table's links (``#d-N``). Every label is
escaped (``txcheck.report.markup``); the output is a pure function of its input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from txcheck.models.sim.runner import Step
from txcheck.report.markup import text

__all__ = ["Lane", "Row", "lanes_of", "rows_of", "sequence_svg"]

_STORES: dict[str, str] = {
    "JournalRead": "journal",
    "JournalAppend": "journal",
    "Claim": "journal",
    "KeyLookup": "idempotency store",
    "OutboxFetch": "outbox",
    "OutboxMarkPublished": "outbox",
    "Publish": "outbox",
    "BrokerSend": "broker",
    "Ack": "broker",
    "SeenCheck": "inbox",
    "MarkSeen": "inbox",
    "ApplyEffect": "inbox",
}
"""Which store lifeline a request kind goes to (tool calls go to their tool's lifeline)."""
_TOOL_KINDS = frozenset({"Invoke", "Lookup"})
_ORDER = ("journal", "idempotency store", "tools", "outbox", "relay", "broker", "consumer")
_UNKNOWN = frozenset({"timeout_before_commit", "lost_response_after_commit"})
"""Outcomes the actor never learns the result of: drawn dashed."""

GAP = 130
LEFT = 70
TOP = 50
ROW = 24
LABEL = 48
"""Characters of a step's label drawn beside its arrow (the whole label is its title)."""
CHAR = 7
"""Pixels a label character takes (11px monospace, rounded up): the diagram is as wide
as its longest label, so none is cut at its right edge."""


@attrs.frozen
class Lane:
    """A lifeline: ``kind`` is ``actor``, ``tool`` or ``store``."""

    kind: str
    name: str


@attrs.frozen(kw_only=True)
class Row:
    """What one step draws: an arrow from ``source`` to ``target`` (the same lane: a mark
    on it), its label, and the classes saying what it shows."""

    index: int
    source: Lane
    target: Lane
    label: str
    classes: tuple[str, ...] = ()
    glyph: str = ""
    """``crash``, ``restart`` or ``jump``: drawn on the source lane."""


def _target(step: Step) -> Lane | None:
    request = step.request
    kind = str(request.get("kind", ""))
    if kind in _TOOL_KINDS and "tool" in request:
        return Lane("tool", str(request["tool"]))
    if kind in _STORES:
        return Lane("store", _STORES[kind])
    if str(step.choice.action) == "deliver":
        return Lane("store", "broker")
    return None


def lanes_of(steps: Sequence[Step], instances: Sequence[str] = ()) -> tuple[Lane, ...]:
    """Every lifeline the steps use: orchestrator instances first (in order), then the
    journal and idempotency store, the tools (in order of first use), the outbox, relay,
    broker, consumer and inbox, other actors, and the clock last."""
    actors: list[str] = list(dict.fromkeys(instances))
    tools: list[str] = []
    stores: set[str] = set()
    for step in steps:
        if step.choice.actor not in actors:
            actors.append(step.choice.actor)
        target = _target(step)
        if target is None:
            continue
        if target.kind == "tool" and target.name not in tools:
            tools.append(target.name)
        elif target.kind == "store":
            stores.add(target.name)
    placed = {"relay", "consumer", "clock"}
    lanes = [Lane("actor", a) for a in actors if a not in placed and a.startswith("orch")]
    for name in _ORDER:
        if name == "tools":
            lanes += [Lane("tool", t) for t in tools]
        elif name in ("relay", "consumer"):
            lanes += [Lane("actor", name)] if name in actors else []
        elif name in stores:
            lanes.append(Lane("store", name))
    if "inbox" in stores:
        lanes.append(Lane("store", "inbox"))
    lanes += [Lane("actor", a) for a in actors if a not in placed and not a.startswith("orch")]
    if "clock" in actors:
        lanes.append(Lane("actor", "clock"))
    return tuple(lanes)


def _request_label(request: Mapping[str, Any]) -> str:
    kind = str(request.get("kind", ""))
    words = [kind] if kind not in _TOOL_KINDS else []
    for key in ("tool", "call", "event", "delivery", "ticks"):
        if key in request:
            words.append(str(request[key]))
    return " ".join(words)


def _answer_label(step: Step) -> str:
    observed = step.observed
    outcome = str(step.choice.outcome)
    if outcome == "lost_response_after_commit":
        return "response lost (committed)"
    if outcome == "timeout_before_commit":
        return "timeout (not committed)"
    status = str(observed.get("status", ""))
    code = observed.get("code")
    return status + (f" ({code})" if code else "")


def rows_of(steps: Sequence[Step]) -> tuple[Row, ...]:
    """What each step draws (see the module docstring)."""
    rows: list[Row] = []
    crashed: set[str] = set()
    delivered: set[str] = set()
    for step in steps:
        actor = Lane("actor", step.choice.actor)
        action = str(step.choice.action)
        outcome = str(step.choice.outcome)
        classes = ["dev"] if step.deviation else []
        glyph = ""
        if action == "crash":
            crashed.add(step.choice.actor)
            lost = step.observed.get("lost")
            label = "crash" + (f" (lost {lost})" if lost else "")
            rows.append(
                Row(
                    index=step.index,
                    source=actor,
                    target=actor,
                    label=label,
                    classes=(*classes, "crash"),
                    glyph="crash",
                )
            )
            continue
        if step.choice.actor in crashed:
            crashed.discard(step.choice.actor)
            classes.append("restart")
            glyph = "restart"
        if action in ("jump", "wait"):
            clock = step.observed.get("clock")
            label = ("clock jump" if action == "jump" else "wait") + f" to {clock}"
            if action == "jump":
                classes.append("jump")
                glyph = glyph or "jump"
            rows.append(
                Row(
                    index=step.index,
                    source=actor,
                    target=actor,
                    label=label,
                    classes=tuple(classes),
                    glyph=glyph,
                )
            )
            continue
        target = _target(step)
        if action == "deliver":
            event = str(step.observed.get("event", ""))
            label = f"deliver {outcome} {event}".rstrip()
            if event and event in delivered:
                classes.append("redelivery")
                label += " (redelivery)"
            delivered.add(event)
            rows.append(
                Row(
                    index=step.index,
                    source=target or actor,
                    target=actor,
                    label=label,
                    classes=(*classes, "deliver"),
                    glyph=glyph,
                )
            )
            continue
        label = _request_label(step.request) or action
        if action == "complete":
            classes.append("answer")
            if outcome in _UNKNOWN:
                classes.append("unknown")
            if outcome in ("transient_error", "permanent_error"):
                classes.append("error")
            label = f"{label}: {_answer_label(step)}"
            rows.append(
                Row(
                    index=step.index,
                    source=target or actor,
                    target=actor,
                    label=label,
                    classes=tuple(classes),
                    glyph=glyph,
                )
            )
            continue
        if outcome == "duplicate":
            classes.append("redelivery")
            label += " (duplicate: redelivery)"
        elif outcome != "ok":
            classes.append("fault")
            label += f" ({outcome})"
        rows.append(
            Row(
                index=step.index,
                source=actor,
                target=target or actor,
                label=label,
                classes=(*classes, "request"),
                glyph=glyph,
            )
        )
    return tuple(rows)


def _x(lanes: Sequence[Lane], lane: Lane) -> int:
    try:
        return LEFT + lanes.index(lane) * GAP
    except ValueError:  # never: every lane a row uses is listed
        return LEFT


def _arrow(x1: int, x2: int, y: int, dashed: bool) -> list[str]:
    dash = ' class="dashed"' if dashed else ""
    if x1 == x2:  # a message to oneself: a small loop
        return [
            f'<path{dash} d="M{x1} {y - 6} h24 v12 h-20"/>',
            f'<polygon points="{x1 + 4},{y + 2} {x1 + 4},{y + 10} {x1},{y + 6}"/>',
        ]
    head = 7 if x2 > x1 else -7
    return [
        f'<line{dash} x1="{x1}" y1="{y}" x2="{x2 - head}" y2="{y}"/>',
        f'<polygon points="{x2},{y} {x2 - head},{y - 4} {x2 - head},{y + 4}"/>',
    ]


def _glyph(kind: str, x: int, y: int) -> str:
    if kind == "crash":
        return (
            f'<path class="x" d="M{x - 7} {y - 7} L{x + 7} {y + 7} M{x - 7} {y + 7} '
            f'L{x + 7} {y - 7}"/>'
        )
    if kind == "restart":
        return f'<rect class="activation" x="{x - 5}" y="{y - 9}" width="10" height="18"/>'
    return f'<circle class="jump-mark" cx="{x}" cy="{y}" r="6"/>'


def _label_x(lanes: Sequence[Lane], row: Row) -> int:
    """Where ``row``'s label starts: beside its arrow, or right of a self-message."""
    x1, x2 = _x(lanes, row.source), _x(lanes, row.target)
    return min(x1, x2) + 10 if x1 != x2 else x1 + 30


def sequence_svg(
    steps: Sequence[Step],
    *,
    instances: Sequence[str] = (),
    breaking: int | None = None,
    failing: Sequence[int] = (),
    quiescence: bool = False,
    ids: str = "d-",
    links: str = "step-",
) -> str:
    """The diagram as an ``<svg>`` element: ``breaking`` is the step the report leads
    with (None with ``quiescence``: the failure is at the end of the run, a last row).
    Row N has the id ``{ids}N`` and links to ``#{links}N`` (a second diagram on the same
    page takes other prefixes)."""
    lanes = lanes_of(steps, instances)
    rows = rows_of(steps)
    count = len(rows) + (1 if quiescence else 0)
    width = max(
        [LEFT + max(len(lanes) - 1, 0) * GAP + 160]
        + [_label_x(lanes, row) + CHAR * min(len(row.label), LABEL + 1) + 10 for row in rows]
    )
    height = TOP + count * ROW + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sequence" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="sequence diagram of the run">'
    ]
    bottom = height - 10
    for lane in lanes:
        x = _x(lanes, lane)
        name = text(lane.name)
        out.append(
            f'<g class="lifeline {lane.kind}" data-lane="{name}"><title>{name}</title>'
            f'<rect x="{x - 60}" y="8" width="120" height="22"/>'
            f'<text x="{x}" y="23">{text(lane.name, 18)}</text>'
            f'<line x1="{x}" y1="30" x2="{x}" y2="{bottom}"/></g>'
        )
    failed = set(failing)
    for position, row in enumerate(rows):
        y = TOP + position * ROW
        classes = list(row.classes)
        if row.index == breaking:
            classes.append("break")
        elif row.index in failed:
            classes.append("fails")
        x1, x2 = _x(lanes, row.source), _x(lanes, row.target)
        label_x = _label_x(lanes, row)
        parts = [
            f'<g class="{" ".join(["step", *classes])}" id="{ids}{row.index}" '
            f'data-step="{row.index}"><a href="#{links}{row.index}">'
            f"<title>step {row.index}: {text(row.label)}</title>",
            f'<rect class="band" x="0" y="{y - ROW // 2}" width="{width}" height="{ROW}"/>',
            f'<text class="index" x="6" y="{y + 4}">{row.index}{"*" if "dev" in classes else ""}'
            "</text>",
        ]
        if row.glyph:
            parts.append(_glyph(row.glyph, x1, y))
        if row.glyph != "crash" and "jump" not in classes:
            parts += _arrow(x1, x2, y, dashed="unknown" in classes)
        parts.append(
            f'<text class="label" x="{label_x}" y="{y - 3}">{text(row.label, LABEL)}</text>'
        )
        parts.append("</a></g>")
        out.append("".join(parts))
    if quiescence:
        y = TOP + len(rows) * ROW
        end_classes = "step quiescence" + (" break" if breaking is None else "")
        out.append(
            f'<g class="{end_classes}" id="{ids}end"><a href="#{links}end">'
            f'<rect class="band" x="0" y="{y - ROW // 2}" width="{width}" height="{ROW}"/>'
            f'<text class="label" x="{LEFT}" y="{y + 4}">quiescence: the run ends here'
            "</text></a></g>"
        )
    out.append("</svg>")
    return "\n".join(out)
