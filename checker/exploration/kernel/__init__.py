"""txcheck.exploration.kernel"""
