"""txcheck.exploration.spread.generated"""
