"""txcheck.scoring."""
