"""txcheck's world: contracts, proposals, validation, services and policies.

Plain deterministic Python: nothing here imports Hypothesis, rich or ``checker``.
"""

__all__: list[str] = []
