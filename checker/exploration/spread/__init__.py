"""txcheck.exploration.spread.spread"""
