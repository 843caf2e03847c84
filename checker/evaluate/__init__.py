"""txcheck.evaluate."""
