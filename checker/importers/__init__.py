"""Importers: benchmark data turned into txcheck cases (one JSON object per line).

``bfcl`` reads the Berkeley Function Calling Leaderboard's question and possible-answer
files; ``tau2`` reads a tau2-bench domain's tasks and tool definitions. Both write cases
that carry their own ``tools``, so ``txcheck score CASES.jsonl`` needs no contract. Nothing
read here is executed: the files are data.
"""
