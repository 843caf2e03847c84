"""Reference orchestrators written as plain asyncio code: the twins of the built-in
generator policies (naive, guarded and its five positive controls), checked by txcheck
through ``txcheck.sim`` with the same verdicts."""
