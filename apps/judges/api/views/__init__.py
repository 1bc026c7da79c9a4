"""Judges API, one module per resource: configs (admins write, managers read), runs (runs and
studies), predictions, alignment. Reviewers reach only /api/judges/me/alignment/ (their own judge).
"""
