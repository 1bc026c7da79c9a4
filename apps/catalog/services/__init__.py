"""Writes to the catalog (imports). See imports.import_file."""
