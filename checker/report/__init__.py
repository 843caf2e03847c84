"""The HTML counterexample report: one self-contained file to look at a run.

``txcheck report TRACE --html OUT`` (and ``--html-out`` on ``explore`` and ``replay``)
re-runs a trace step by step to get the world before and after each step
(``txcheck.report.steps``), draws the run as a sequence diagram in SVG
(``txcheck.report.diagram``) and lays out a page with a header, the diagram and a steps
table linked to it (``txcheck.report.page``). Every string that comes from a trace, a
contract or a plan is escaped (``txcheck.report.markup``); the page carries a strict
Content-Security-Policy and runs no script. The same trace gives the same bytes.
"""

from __future__ import annotations
