"""txcheck.models.sim"""
