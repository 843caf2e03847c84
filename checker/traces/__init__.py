"""txcheck.traces."""
