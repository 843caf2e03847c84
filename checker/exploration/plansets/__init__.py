"""txcheck.exploration.plansets"""
