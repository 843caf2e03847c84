"""txcheck.explore."""
