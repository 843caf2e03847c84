"""Example orchestration policies: see docs/policies.md."""
