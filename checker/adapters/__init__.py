"""Adapters: other benchmarks' own code run as txcheck services (optional extras).

``txcheck.adapters.tau2`` runs tau2-bench's tool code over a task's database and checks its
gold database (``pip install 'txcheck[tau2]'``). ``txcheck.adapters.model`` is a scripted
model from a proposal whose retry decisions are choices of the search, and
``txcheck.adapters.mcp`` an in-memory MCP server backed by the simulated world, so MCP
client code runs unmodified (``pip install 'txcheck[mcp]'``; docs/agents.md), and
``txcheck.adapters.pydantic_ai`` runs a pydantic-ai ``Agent``'s own loop with that model and
the world's tools (``pip install 'txcheck[pydantic-ai]'``). Importing this package needs no
extra.
"""

__all__: list[str] = []
