"""The summary of a scored file: rates over all cases and exact means of the sub-metrics.

``SummaryBuilder`` accumulates it one result at a time (``txcheck score`` streams), with
exact arithmetic, so the means equal ``Summary.of`` over the same results whatever their
number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from txcheck.scoring.scorer import CaseResult

__all__ = ["Summary", "SummaryBuilder"]


@attrs.frozen(kw_only=True)
class Summary:
    """Rates over *all* cases (unreadable proposals included); sub-metric means over the
    cases where the sub-metric applies (``None`` when none does)."""

    cases: int
    passed: int
    vetoes: int
    unreadable: int
    expect_invalid: int
    errors: int
    legacy_mean: float | None
    means: Mapping[str, float | None]

    @property
    def pass_rate(self) -> float | None:
        return float(Fraction(self.passed, self.cases)) if self.cases else None

    @classmethod
    def of(cls, results: Sequence[CaseResult], errors: int) -> Summary:
        builder = SummaryBuilder()
        for result in results:
            builder.add(result)
        return builder.build(errors)

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "vetoes": self.vetoes,
            "unreadable": self.unreadable,
            "expect_invalid": self.expect_invalid,
            "errors": self.errors,
            "legacy_mean": self.legacy_mean,
            "means": dict(self.means),
        }


_MEANS = ("tool_selection", "schema_valid", "exact_arguments", "order", "irrelevance")


class SummaryBuilder:
    """The summary, accumulated one result at a time (exact sums, so the means equal
    ``Summary.of`` over the same results, whatever their number)."""

    def __init__(self) -> None:
        self.cases = self.passed = self.vetoes = self.unreadable = self.expect_invalid = 0
        self._legacy = _Mean()
        self._means: dict[str, _Mean] = {m: _Mean() for m in _MEANS}

    def add(self, result: CaseResult) -> None:
        strict = result.strict
        self.cases += 1
        self.passed += strict.passed
        self.vetoes += strict.veto
        if strict.violations:
            self.unreadable += result.unreadable
        if result.warnings:
            self.expect_invalid += any(w.code == "expect_invalid" for w in result.warnings)
        means = self._means
        _add(self._legacy, result.legacy)
        _add(means["tool_selection"], strict.tool_selection)
        _add(means["schema_valid"], strict.schema_valid)
        _add(means["exact_arguments"], strict.exact_arguments)
        if strict.order is not None:
            _add(means["order"], strict.order)
        if strict.irrelevance is not None:
            _add(means["irrelevance"], strict.irrelevance)

    def build(self, errors: int) -> Summary:
        return Summary(
            cases=self.cases,
            passed=self.passed,
            vetoes=self.vetoes,
            unreadable=self.unreadable,
            expect_invalid=self.expect_invalid,
            errors=errors,
            legacy_mean=self._legacy.value(),
            means={name: self._means[name].value() for name in _MEANS},
        )


def _add(mean: _Mean, value: float | bool | None) -> None:
    """Add ``value`` (when there is one) to a running mean."""
    if value is None:
        return
    if value in (0, 1):  # most values: integer arithmetic, no Fraction to build
        mean.whole += int(value)
    else:  # a float is exactly numerator / 2**k: sum numerators per denominator
        numerator, denominator = value.as_integer_ratio()
        mean.parts[denominator] = mean.parts.get(denominator, 0) + numerator
    mean.count += 1


class _Mean:
    """An exact running mean (``SummaryBuilder.add`` adds to it): whole values summed as
    integers (most values are 0 or 1), the others as integer numerators per denominator
    (a float's exact ratio), so no fraction is built per value."""

    __slots__ = ("count", "parts", "whole")

    def __init__(self) -> None:
        self.whole = 0
        self.parts: dict[int, int] = {}
        self.count = 0

    def value(self) -> float | None:
        if not self.count:
            return None
        total = Fraction(self.whole) + sum(
            (Fraction(n, d) for d, n in self.parts.items()), Fraction(0)
        )
        return float(total / self.count)
