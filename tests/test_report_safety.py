"""The HTML report never lets text from a trace, a contract or a plan act as markup.

Hostile strings (closing the script element, an ``<img onerror>``, a ``javascript:`` URL,
attribute breakers, bidirectional overrides and zero-width characters, and the terminal
tests' own ``HOSTILE`` strings) are put in call ids, order ids, idempotency keys, the
policy name, actor names, tool names and the trace document itself. The page must parse
to the same structure whatever they hold: no element or attribute they could add (no
script but the one JSON data block, which still parses to the trace; no event handler; no
link off the page), a Content-Security-Policy that allows nothing but the page's own
style by its hash, and the hostile text still visible, as escaped text.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

import pytest
from report_dom import Node, parse
from test_hostile_text import _FORBIDDEN, HOSTILE, _chat, _checkout

from txcheck.cli.safe_text import escape_controls
from txcheck.exploration.kernel.schedule import Deviation, Deviations
from txcheck.exploration.kernel.session import execute
from txcheck.exploration.kernel.target import Target
from txcheck.models.plan.contract_loader import default_contract
from txcheck.models.plan.proposal_parser import parse_proposal
from txcheck.models.sim.choices import Choice
from txcheck.models.sim.fixture import default_fixture
from txcheck.models.sim.policies import builtin_policy
from txcheck.models.sim.runner import Step
from txcheck.report.build import html_report
from txcheck.report.compare import comparison_section
from txcheck.report.diagram import sequence_svg
from txcheck.report.markup import script_json
from txcheck.traces.document import trace_of

STRINGS: dict[str, str] = {
    **HOSTILE,
    "script": "</script><script>alert(1)</script><!--",
    "img": "<img src=x onerror=alert(1)>",
    "url": "javascript:alert(document.domain)",
    "attribute": "\"'><svg onload=alert(1)>",
    "bidi": "pay\u202eyap\u2066x\u2069\u200bz",
}
KINDS = sorted(STRINGS)

ALLOWED_TAGS = frozenset(
    {
        "#document", "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "h4",
        "p", "dl", "dt", "dd", "ul", "li", "strong", "a", "code", "pre", "div", "table",
        "thead", "tbody", "tr", "th", "td", "details", "summary", "script", "svg", "g",
        "rect", "text", "line", "path", "polygon", "circle", "span",
    }
)  # fmt: skip
_BAD_TEXT = ("<img", "<svg onload", "</script><script", "\u202e", "\u200b")
"""Raw in the page only if markup got through (as escaped text they are harmless)."""


def _page(h: str) -> tuple[str, dict[str, Any]]:
    """A naive double charge whose ids, keys and policy name are ``h``, reported."""
    plan = parse_proposal(_chat(_checkout(h)), source="hostile")
    lost = Deviation(action="complete", outcome="lost_response_after_commit", tool="charge_payment")
    target = Target(policy=builtin_policy("naive"), policy_name=h)
    execution = execute(target, [plan], chooser=Deviations([lost]))
    assert execution.failures
    document = trace_of(
        execution,
        policy=h,
        contract=default_contract(),
        fixture=default_fixture(),
        plans=execution.plans,
        extra={"engine": h, "seed": h, h: h},
    )
    return html_report(execution, target=target, document=document, replay=h), document


def assert_inert(page: str) -> Node:
    """The page's structure is the report's own: see the module docstring."""
    dom = parse(page)
    tags = {node.tag for node in dom.walk()}
    assert tags <= ALLOWED_TAGS, tags - ALLOWED_TAGS
    for node in dom.walk():
        for name, value in node.attrs.items():
            assert not name.startswith("on"), (node.tag, name)
            if name in ("href", "src", "xlink:href"):
                assert (value or "").startswith("#"), (node.tag, value)
    scripts = dom.find_all("script")
    assert len(scripts) <= 1
    for script in scripts:
        assert script.attrs == {"type": "application/json", "id": "txcheck-trace"}
        json.loads(script.text())
    for bad in _BAD_TEXT:
        assert bad not in page, bad
    assert not _FORBIDDEN.search(page), ascii(_FORBIDDEN.search(page))
    return dom


@pytest.mark.parametrize("kind", KINDS)
def test_hostile_ids_keys_and_policy_names_stay_text(kind: str) -> None:
    h = STRINGS[kind]
    page, document = _page(h)
    dom = assert_inert(page)
    (script,) = dom.find_all("script")
    assert json.loads(script.text()) == json.loads(json.dumps(document))  # whole, unclosed
    shown = dom.text()
    visible = h.replace("\u202e", "\\u202e").replace("\u200b", "\\u200b")
    if kind in ("script", "img", "url", "attribute"):
        assert visible in shown  # as text: the parser turned the references back
    assert dom.by_id("policy").text().startswith(h[:3].replace("\x1b", "\\x1b"))


@pytest.mark.parametrize("kind", KINDS)
def test_hostile_actor_and_tool_names_in_the_diagram_stay_text(kind: str) -> None:
    h = STRINGS[kind]
    call = {"kind": "Invoke", "tool": h, "call": h}
    steps = [
        Step(index=0, choice=Choice(h, "step"), request=call),
        Step(index=1, choice=Choice(h, "complete"), request=call, observed={"status": h}),
        Step(index=2, choice=Choice(h, "crash"), deviation=True, observed={"lost": h}),
        Step(index=3, choice=Choice("consumer", "deliver", h), observed={"event": h}),
    ]
    svg = sequence_svg(steps, instances=(h,), breaking=1)
    dom = assert_inert(svg)
    lanes = [g.attrs["data-lane"] for g in dom.find_all("g", "lifeline")]
    assert lanes.count(escape_controls(h)) == 2  # the actor's and the tool's, as text
    assert len(dom.find_all("g", "step")) == 4


@pytest.mark.parametrize("kind", KINDS)
def test_hostile_text_in_the_comparison_stays_text(kind: str) -> None:
    h = STRINGS[kind]
    plan = parse_proposal(_chat(_checkout(h)), source="hostile")
    lost = Deviation(action="complete", outcome="lost_response_after_commit", tool="charge_payment")
    runs = [
        execute(Target(policy=builtin_policy(p), policy_name=h), [plan], chooser=Deviations([lost]))
        for p in ("naive", "guarded")
    ]
    section = comparison_section(runs[0], runs[1], policy=h, recorded_policy=h, faults=(1, 1))
    assert_inert("".join(section))


def test_embedded_json_cannot_end_its_element_and_parses_back() -> None:
    value = {"a": "</script><!--<script>", "b": "\u2028\u2029", "</SCRIPT>": "&amp;"}
    text = script_json(value)
    assert "<" not in text and ">" not in text and "&" not in text
    assert text.isascii()
    assert json.loads(text) == value


def test_the_policy_allows_only_the_page_own_style_by_its_hash() -> None:
    page, _ = _page("ord_1")
    dom = parse(page)
    (meta,) = [m for m in dom.find_all("meta") if m.attrs.get("http-equiv")]
    policy = meta.attrs["content"] or ""
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert "unsafe" not in policy and "script-src" not in policy
    (style,) = dom.find_all("style")
    digest = base64.b64encode(hashlib.sha256(style.text().encode()).digest()).decode()
    assert directives["style-src"] == f"'sha256-{digest}'"
    # the CSP comes before anything it governs
    assert page.index("Content-Security-Policy") < page.index("<style>")
    assert not re.search(r"\sstyle=", page)  # inline style attributes would be blocked
