"""Writes that move data in and out of the installation: imports.import_file, archive."""
