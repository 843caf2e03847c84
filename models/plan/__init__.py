"""txcheck.models.plan"""
