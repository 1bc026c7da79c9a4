"""Assigning reviewers to ideas, by hand and in bulk."""
