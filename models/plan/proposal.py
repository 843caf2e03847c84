"""A model's proposal, parsed into a plan of calls (parsing: ``models.proposal_parser``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from txcheck.models.strict_json import StrictJsonError, loads_strict

__all__ = ["Call", "Plan", "ProposalFormat", "plan_from_json", "plan_to_json"]

ProposalFormat = Literal[
    "openai_chat", "openai_completion", "openai_responses", "anthropic", "gemini", "plan"
]


@attrs.frozen(kw_only=True)
class Call:
    """One proposed tool call.

    ``raw_arguments`` is exactly what the model sent: a JSON string (OpenAI) or an object
    (Anthropic, Gemini). ``arguments`` is the parsed object, or ``None`` when the raw text is
    not strict JSON or not an object; ``json_error`` then says why. Such a call is still a
    call: it fails at level ``json``.
    """

    id: str
    name: str
    index: int
    raw_arguments: Any = attrs.field(eq=False)
    arguments: Mapping[str, Any] | None = attrs.field(eq=False)
    json_error: str | None = None
    depends_on: tuple[str, ...] = ()

    @property
    def parsed(self) -> bool:
        return self.arguments is not None


@attrs.frozen(kw_only=True)
class Plan:
    """All calls of one proposal, in the order the model listed them."""

    calls: tuple[Call, ...]
    format: ProposalFormat = "plan"
    text: str | None = None

    def by_id(self) -> dict[str, Call]:
        return {c.id: c for c in self.calls}

    @classmethod
    def of(cls, *calls: tuple[str, Mapping[str, Any]]) -> Plan:
        """A plan from ``(tool, arguments)`` pairs, with ids ``call_1``, ``call_2``...; for
        tests, examples and generated plans."""
        return cls(
            calls=tuple(
                Call(
                    id=f"call_{i + 1}",
                    name=name,
                    index=i,
                    raw_arguments=dict(arguments),
                    arguments=dict(arguments),
                )
                for i, (name, arguments) in enumerate(calls)
            )
        )


def plan_to_json(plan: Plan) -> dict[str, Any]:
    """A plan as self-contained JSON (raw arguments kept), for traces and results."""
    return {
        "format": plan.format,
        "calls": [
            {
                "id": call.id,
                "name": call.name,
                "arguments": call.raw_arguments,
                "depends_on": list(call.depends_on),
            }
            for call in plan.calls
        ],
    }


def plan_from_json(data: Mapping[str, Any]) -> Plan:
    """The inverse of ``plan_to_json``: raw arguments are parsed again, strictly."""
    calls = []
    for index, raw in enumerate(data["calls"]):
        arguments: Any = raw["arguments"]
        parsed: Any = arguments
        error = None
        if isinstance(arguments, str):
            try:
                parsed = loads_strict(arguments)
            except StrictJsonError as problem:
                parsed, error = None, str(problem)
        if parsed is not None and not isinstance(parsed, dict):
            parsed, error = None, f"arguments must be a JSON object (got {type(parsed).__name__})"
        calls.append(
            Call(
                id=str(raw["id"]),
                name=str(raw["name"]),
                index=index,
                raw_arguments=arguments,
                arguments=parsed,
                json_error=error,
                depends_on=tuple(str(d) for d in raw.get("depends_on", ())),
            )
        )
    return Plan(calls=tuple(calls), format=data.get("format", "plan"))
