"""txcheck.scenarios."""
