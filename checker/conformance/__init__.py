"""``txcheck conform``: check a store implementation against the model of its record."""

from txcheck.conformance.machine import Conformance, Mismatch, conform

__all__ = ["Conformance", "Mismatch", "conform"]
