"""A model's proposal, parsed into a plan of calls. Parsing lives in ``models.proposal_parser``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

__all__ = ["Call", "Plan", "ProposalFormat"]

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
