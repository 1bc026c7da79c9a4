"""Writes to the catalog: services/catalog.py (the importers that fill it live in apps.dataio)."""
