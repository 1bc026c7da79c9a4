"""The pure panel method (no Django): personas from documents, reviewers or the rubric, the
debate loop with its stopping rule and coordinator, the aggregation rule, and the study figures.

Everything here takes plain values and callables; apps.panels.services stores what it returns.
"""
