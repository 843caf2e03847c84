"""txcheck's engine: validation CLI, scorer, scenarios, model checker, replay."""

from checker._layout import ensure_txcheck_packages

ensure_txcheck_packages("models", "invariants")

__all__: list[str] = []
