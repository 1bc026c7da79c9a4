"""Writes for screening, split by sub-domain: ratings.py (ratings, declines), assignments.py."""
