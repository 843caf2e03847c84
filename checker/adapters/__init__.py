"""Adapters: other benchmarks' own code run as txcheck services (optional extras).

``txcheck.adapters.tau2`` runs tau2-bench's tool code over a task's database and checks its
gold database (``pip install 'txcheck[tau2]'``). Importing this package needs no extra.
"""

__all__: list[str] = []
