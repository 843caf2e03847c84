"""txcheck.exploration.engines"""
