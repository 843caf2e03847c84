"""Agents as they are built, checked unmodified: tool-calling code written against an agent
framework (the MCP client SDK first), driven by a scripted model from a proposal
(``txcheck.adapters.model``) and served by the simulated world (``txcheck.adapters.mcp``)."""
