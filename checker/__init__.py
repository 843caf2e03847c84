"""txcheck: validate an LLM's whole tool-call plan, and model-check the policy that runs it."""

__all__: list[str] = []
