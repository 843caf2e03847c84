"""txcheck.exploration.usercode"""
