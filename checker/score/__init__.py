"""txcheck.score."""
