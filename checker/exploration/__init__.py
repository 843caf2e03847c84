"""txcheck.exploration."""
